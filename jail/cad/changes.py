"""What a call changed: the names it added, changed or deleted, against the last successful call.

``diff`` compares the summaries after a call with those kept after the last successful call of
this session state (``_PREV``); ``remember`` takes the namespace as it is now as that state (for a
transaction other than execute that binds names, e.g. import_file). ``_PREV`` is a module global,
inherited by every fork, so a promoted next diffs against its head and a snapshot/restore/reset
keeps its own copy, like the namespace itself.

A name the summary had no time for (``kind: "unsummarised"``) bound to the same object as before is
taken as unchanged. Blocks: nothing; the lists only shape the reply.
"""

from __future__ import annotations

from jail.cad import summary

__all__ = ["diff", "remember"]

# name -> (id of the value, its summary), held with the namespace it describes (another
# namespace, e.g. in tests: everything is new).
_PREV: dict[str, tuple[int, dict]] = {}
_PREV_NS: dict | None = None


def diff(namespace: dict, objects: list[dict], ids: dict[str, int]) -> tuple[list[dict], list[str]]:
    """(summaries of the names this call added or changed, each with ``change``; deleted names)."""
    global _PREV, _PREV_NS
    if _PREV_NS is not namespace:
        _PREV, _PREV_NS = {}, namespace
    cur: dict[str, tuple[int, dict]] = {}
    changed: list[dict] = []
    for o in objects:
        name = o.get("name")
        if o.get("kind") == "omitted" or type(name) is not str:
            continue
        prev = _PREV.get(name)
        if o.get("kind") == "unsummarised" and prev is not None and prev[0] == ids.get(name, 0):
            cur[name] = prev  # the same object, not measured again in time: unchanged, its summary kept
            continue
        cur[name] = (ids.get(name, 0), o)
        if prev is None:
            changed.append({**o, "change": "added"})
        elif prev[0] != ids.get(name, 0) or prev[1] != o:
            changed.append({**o, "change": "changed"})
    deleted = [n for n in _PREV if n not in cur and not _in_omitted(objects)]
    omitted = [o for o in objects if o.get("kind") == "omitted"]
    _PREV = cur
    return changed + omitted, deleted


def remember(namespace: dict) -> None:
    """Take the namespace as it is now as the state the next call's changes are measured against."""
    ids: dict[str, int] = {}
    diff(namespace, summary.summarize(namespace, ids=ids), ids)


def _in_omitted(objects: list[dict]) -> bool:
    return bool(objects) and objects[-1].get("kind") == "omitted"


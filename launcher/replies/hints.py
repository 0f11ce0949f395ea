"""The ``hint`` of a failed call and the ``note`` of a successful one, worded by the launcher.

The jail computes a hint too (jail/cad/hints.py), but that process runs whatever user code left
there, so its hint may say anything, a false limit included. :func:`reworded` drops it and asks
the same pure function (string matching on the validated type, message, source line, policy rule)
again here, so every ``Hint:`` line is one of the launcher's sentences; a ``MemoryError`` gets the
limit from the launcher's own profile (``memory_mb``, the RLIMIT_AS budget of jail/layers/rlimits.py).
:func:`noted` does the same for a successful call's note (from the code the launcher sent).

Blocks: hint text chosen by the session (forged limits, instructions). Does not block: the session
choosing which canned hint appears (by raising the matching error), nor its own words in the
error's message, which stay where every message is (after ``Type at line N:``).
"""
from __future__ import annotations

from jail.cad import hints as canned
from jail.wire.caps import HINT_CAP


def writes_files(profile=None) -> bool:
    """Whether code may write files under ``profile`` (None: the default profile's answer): the
    scratch directory is served by the builtins layer (jail/cad/safe_builtins.py) unless ``open``
    is blocked (the strict profile); without that layer the OS jail's file system is read-only."""
    if profile is None:
        return True
    return profile.on("builtins") and "open" not in profile.blocked_calls


def hint_for(err: dict, profile=None) -> str | None:
    """The launcher's hint for a validated error dict, or None."""
    typ = err.get("type") if isinstance(err.get("type"), str) else ""
    if err.get("reported"):  # a timeout: the launcher's own error, the session's words only as its report
        return None
    if typ in ("MemoryError", "_ArrayMemoryError"):
        limits = getattr(profile, "limits", None)
        return canned.memory_hint(getattr(limits, "memory_mb", None), getattr(profile, "name", None))
    origin = err.get("origin") if isinstance(err.get("origin"), dict) else {}
    try:
        return canned.hint(typ, err.get("message"), origin.get("source_line") or err.get("source_line"),
                           rule=err.get("rule"), text=err.get("text"), writes=writes_files(profile))
    except Exception:  # noqa: BLE001 - advice never costs the error
        return None


def reworded(err, profile=None):
    """``err`` with its ``hint`` replaced by the launcher's (removed when there is none)."""
    if not isinstance(err, dict):
        return err
    out = {k: v for k, v in err.items() if k != "hint"}
    h = hint_for(out, profile)
    if h:
        out["hint"] = h[:HINT_CAP]
    return out


def noted(result: dict, code, profile=None) -> dict:
    """A successful execute ``result`` whose note, when the session sent one (it knows whether its
    exporters could write), is the launcher's sentence for the code it sent (jail/cad/hints.success_note)."""
    if "note" not in result:
        return result
    result.pop("note")
    try:
        n = canned.success_note(code, writes=writes_files(profile))
    except Exception:  # noqa: BLE001
        n = None
    if n:
        result["note"] = n[:HINT_CAP]
    return result

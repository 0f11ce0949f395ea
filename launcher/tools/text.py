"""What the assistant reads back from ``execute``, ``session_state``, ``last_error``, ``api``,
``export`` and the snapshot tools (one or two lines each, never a JSON dump).

An execute reply says, in this order and only when there is something to say: ``OK (12 ms)`` or
the error (``Type at line N: message``, numbered source lines around it, the defining call of a
failing function, a ``Hint:`` for a known mistake, ``The session is unchanged.`` once); stdout
and stderr (head and tail kept); ``= value`` of a trailing expression; one line per name the call
added (``+``), changed (``~``) or deleted (``-``). :func:`describe` is the one phrase for an object
summary, also used by ``session_state``. Nothing is sent twice (no JSON copy of the text).
All input was already rebuilt by launcher/replies/validate.py; this module only formats it and
never trusts it to be true: a timed-out call's first line is the launcher's own words only, and its
"where" and output so far are shown below it, labelled as the session's own report.
"""
from __future__ import annotations

import math
from typing import Any


def _g(x: Any) -> str:
    return f"{x:.6g}" if isinstance(x, (int, float)) and not isinstance(x, bool) else "?"


def _plural(n: Any, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _bbox(bb: Any) -> str | None:
    if not isinstance(bb, dict) or not all(isinstance(bb.get(k), list) and len(bb[k]) == 3
                                           for k in ("min", "max", "size")):
        return None
    sizes = [v for v in bb["size"] if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)]
    # OCCT's boxes carry the shapes' tolerance (1e-7): a flat sketch read "10x5x2e-07 [..,-1e-07 .. ,1e-07]".
    # A figure under a millionth of the box's largest size is shown as 0 (the numbers in the data are kept)
    eps = 1e-6 * max((abs(v) for v in sizes), default=0.0)

    def g(v: Any) -> str:
        return "0" if isinstance(v, (int, float)) and not isinstance(v, bool) and abs(v) < eps else _g(v)
    size = "x".join(g(v) for v in bb["size"])
    mn = ",".join(g(v) for v in bb["min"])
    mx = ",".join(g(v) for v in bb["max"])
    return f"bbox {size} [{mn} .. {mx}]"


def describe(o: dict) -> str:
    """One summary (see ``jail.cad.summary.summarize``) as a short phrase."""
    if o.get("summary_error"):
        return f"(could not summarise: {o['summary_error']})"
    kind = o.get("kind")
    parts: list[str] = []
    if kind in ("shape", "builder", "shapes"):
        if o.get("empty"):
            if kind == "builder":
                return f"empty builder (no {o.get('of', 'object')} yet)"
            return "empty (no solids, faces or edges)"
        if kind == "shapes":
            parts.append(f"{_plural(o.get('length'), 'shape')}: {o.get('of', '')}")
        for key in ("volume", "area", "length"):
            if isinstance(o.get(key), (int, float)) and not (kind == "shapes" and key == "length"):
                parts.append(f"{'total ' if kind == 'shapes' else ''}{key} {_g(o[key])}")
        b = _bbox(o.get("bbox"))
        if b:
            parts.append(b)
        c = o.get("counts")
        if isinstance(c, dict):  # zero counts left out below the first non-zero: "1 edge", "1 face, 4 edges"
            ks = ("solids", "faces", "edges")
            first = next((i for i, k in enumerate(ks) if c.get(k)), len(ks) - 1)
            parts.append(", ".join(_plural(c.get(k, 0), k[:-1]) for k in ks[first:]))
        if "valid" in o:
            parts.append("valid" if o["valid"] else "INVALID")
        return "  ".join(parts)
    if kind in ("sequence", "mapping", "set"):
        return f"len {o.get('length')}  {o.get('repr', '')}"
    if kind == "array":
        return f"array {tuple(o.get('shape') or [])} {o.get('dtype', '')}"
    if kind in ("function", "class"):
        return kind
    if kind == "omitted":
        return f"... and {o.get('count')} more names not shown"
    return str(o.get("repr", ""))


_MARK = {"added": "+", "changed": "~"}


def _object_line(o: dict) -> str:
    d = describe(o)
    d = "" if d == o.get("type") else d  # "rib: function", not "rib: function  function"
    return f"{o.get('name')}: {o.get('type', '')}  {d}".rstrip()


def state_text(objects) -> str:
    """``session_state``: one line per top-level name, ``  name: type  summary``."""
    objs = [o for o in objects or [] if isinstance(o, dict)]
    if not objs:
        return "(no objects)"
    return "\n".join("  " + (describe(o) if o.get("kind") == "omitted" else _object_line(o)) for o in objs)


def _where(e: dict) -> list[str]:
    out: list[str] = []
    ctx = [c for c in (e.get("context") or []) if isinstance(c, str)]
    if ctx:
        out += ["  " + c for c in ctx]
    elif e.get("source_line"):
        out.append(f"    {e['source_line']}")
    o = e.get("origin")
    if isinstance(o, dict) and o.get("line"):
        fn = o.get("function") or "?"
        if o.get("call") is not None and (o.get("source_line") or o.get("context")):
            out.append(f"in {fn}(), defined in call {o['call']}, line {o['line']}:")
            octx = [c for c in (o.get("context") or []) if isinstance(c, str)]
            out += ["  " + c for c in octx] if octx else [f"    {o.get('source_line')}"]
        else:
            out.append(f"in {fn}(), line {o['line']}")
    return out


REPORT_HEADER = "The session's own report, sent just before the limit (not checked by the launcher; it may be false):"


def _reported(e: dict) -> list[str]:
    """A timed-out call's last words, under a header that says whose words they are."""
    out = [REPORT_HEADER]
    at = [f"line {e['line']}"] if e.get("line") else []
    if e.get("function"):
        at.append(f"in {e['function']}()")
    if at:
        out.append("  it was at " + " ".join(at))
    out += ["  " + w for w in _where(e)]
    if len(out) == 1:
        out.append("  (no position given; any output so far is below)")
    return out


def error_lines(e: dict, *, outcome_note: bool = True) -> list[str]:
    """The error: its first line, then where. For a timed-out call (``reported``) the first line is the
    launcher's own words only; what the session said is below it, labelled as the session's report."""
    msg = str(e.get("message", ""))
    if e.get("reported"):
        lines = [f"{e.get('type', 'Error')}: {msg}", *_reported(e)]
    else:
        where = f" at line {e['line']}" if e.get("line") else ""
        if e.get("function"):
            where += f" in {e['function']}()"
        lines = [f"{e.get('type', 'Error')}{where}" + (f": {msg}" if msg else ""), *_where(e)]
    if e.get("hint"):
        lines.append(f"Hint: {e['hint']}")
    if outcome_note and "session is unchanged" not in msg and "session's state is gone" not in msg:
        lines.append("The session is unchanged.")
    return lines


def execute_text(result: dict) -> str:
    parts: list[str] = []
    ok = result.get("ok") is True
    if ok:
        ms = result.get("wall_ms")
        parts.append(f"OK ({ms:.0f} ms)" if isinstance(ms, (int, float)) else "OK")
    else:
        parts += error_lines(result.get("error") or {})
    said = " so far, as the session reported it" if not ok and (result.get("error") or {}).get("reported") else ""
    if result.get("stdout"):
        parts.append(f"stdout{said}:\n" + result["stdout"].rstrip("\n"))
    if result.get("stderr"):
        parts.append(f"stderr{said}:\n" + result["stderr"].rstrip("\n"))
    if ok:
        v = result.get("value")
        if isinstance(v, dict):
            if v.get("kind") in ("shape", "builder", "shapes"):
                parts.append(f"= {v.get('type', '')}: {describe(v)}")
            else:
                parts.append(f"= {v.get('repr', describe(v))}")
        changes = [o for o in result.get("objects") or [] if isinstance(o, dict)]
        for o in changes:
            if o.get("kind") == "omitted":
                parts.append(describe(o))
                continue
            parts.append(f"{_MARK.get(o.get('change'), '~')} {_object_line(o)}")
        for n in result.get("deleted") or []:
            parts.append(f"- {n} (deleted)")
        if result.get("note"):
            parts.append(f"Note: {result['note']}")
        if not changes and not result.get("deleted") and not isinstance(v, dict) \
                and not result.get("stdout") and not result.get("stderr"):
            parts.append("(no names added, changed or deleted)")
    return "\n".join(parts)


# ------------------------------------------------------------------ files and snapshots
def size_text(n) -> str:
    """``812 bytes``, ``12.4 KiB``, ``3.1 MiB``."""
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        return "? bytes"
    if n < 10 * 1024:
        return _plural(n, "byte")
    return f"{n / 1024:.1f} KiB" if n < 10 * 1024 * 1024 else f"{n / 1024 / 1024:.1f} MiB"


_COUNTS = (("solids", "solid"), ("triangles", "triangle"), ("shapes", "shape"), ("lines", "line"))


def numbers_text(d) -> str:
    """A file's or object's checked numbers in one phrase: ``1 solid, volume 7717.26 mm^3, bbox ...``."""
    if not isinstance(d, dict):
        return ""
    parts = [_plural(d[k], word) for k, word in _COUNTS if isinstance(d.get(k), int) and not isinstance(d[k], bool)]
    if isinstance(d.get("volume"), (int, float)) and not isinstance(d["volume"], bool):
        parts.append(f"volume {_g(d['volume'])} mm^3")
    b = _bbox(d.get("bbox"))
    if b:
        parts.append(b)
    return ", ".join(parts)


def export_text(r: dict) -> str:
    """An ``export`` reply in at most two lines: what was written where, the verifier's numbers (the
    launcher's), then the session's own claims labelled as such, or the script's changes."""
    what = "the session's script " if r.get("format") == "py" else \
        f"{r['object']} " if isinstance(r.get("object"), str) else ""
    sha = r.get("sha256")
    facts = [str(r.get("format", "?")).upper(), size_text(r.get("size"))]
    if isinstance(sha, str):
        facts.append(f"sha256 {sha[:16]}...")
    line = f"exported {what}to {r.get('path')} ({', '.join(facts)})"
    if r.get("view"):
        line += f", view: {r['view']}"
    nums = numbers_text(r)
    line += f"; {r.get('checked', 'checked')}" + (f": {nums}" if nums else "")
    second = []
    claims = numbers_text(r.get("session_claims"))
    if claims:
        second.append(f"the session's own claim (not checked): {claims}")
    changes = [str(c) for c in r.get("changes") or []]
    if changes:
        second.append(f"changed by the launcher so that what you read is what runs ({len(changes)}): "
                      + "; ".join(changes))
    return "\n".join([line, *second])


def snapshot_text(r: dict) -> str:
    """``save_snapshot``, ``restore_snapshot``, ``delete_snapshot``: one line each."""
    def listing(key):
        names = [str(n) for n in r.get("snapshots") or []]
        return f"; {key}: {', '.join(names) if names else 'none'}"
    if "restored" in r:
        return f"restored snapshot {r['restored']!r}: the session is as it was when it was saved (the snapshot is kept)"
    if "deleted" in r:
        return f"deleted snapshot {r['deleted']!r}" + listing("snapshots left")
    return f"saved snapshot {r.get('name')!r}" + listing("snapshots")


def reset_text(r: dict) -> str:
    return "reset: a new, empty session; the old one's names, history and snapshots are gone"


# ------------------------------------------------------------------ api
def _more(r: dict, key: str) -> str:
    total = r.get(f"{key}_total")
    more = total - len(r[key]) if isinstance(total, int) and not isinstance(total, bool) else 0
    return f" (+{more} more)" if more > 0 else ""


def api_text(r: dict) -> str:
    if r.get("ok") is not True:
        s = f"Error: {r.get('error', 'lookup failed')}"
        if r.get("did_you_mean"):
            s += "\nDid you mean: " + ", ".join(map(str, r["did_you_mean"]))
        if r.get("containing"):
            s += "\nNames containing it: " + ", ".join(map(str, r["containing"]))
        return s
    ver = r.get("versions") or {}
    vtext = f"build123d {ver.get('build123d', '?')}, OCP {ver.get('OCP', '?')}"
    if "matches" in r:
        lines = [f"{r.get('total', 0)} build123d name(s) containing {r.get('query')!r} ({vtext}):"]
        for m in r.get("matches") or []:
            summ = f" - {m['summary']}" if m.get("summary") else ""
            lines.append(f"  {m.get('name')} ({m.get('kind')}){summ}")
        mem = r.get("members") or []
        if mem:
            lines.append("methods/properties: " + ", ".join(str(m.get("name")) for m in mem))
        return "\n".join(lines)
    if "name" not in r:
        return f"{vtext}; {r.get('exports', '?')} names from `from build123d import *`. " \
               "Call api(name='Box') for a signature and docstring, api(query='fillet') to search."
    head = f"{r['name']}{r.get('signature', '')}" if r.get("kind") in ("class", "function") else \
        f"{r['name']} ({r.get('kind')}{': ' + r['signature'] if r.get('signature') else ''})"
    if r.get("kind") == "class" and r.get("enum_members") and not r.get("signature"):
        head = f"{r['name']} (enum)"
    lines = [head]
    if r.get("kind") == "value":
        lines.append(f"= {r.get('value')} ({r.get('type')})")
    if r.get("doc"):
        lines.append(r["doc"])
    if r.get("kind") == "class":
        if r.get("enum_members"):
            lines.append("members: " + ", ".join(f"{r['name']}.{m}" for m in r["enum_members"])
                         + _more(r, "enum_members"))
        if r.get("attributes"):
            lines.append("class attributes: " + ", ".join(map(str, r["attributes"])) + _more(r, "attributes"))
        for key in ("methods", "properties"):
            if r.get(key):
                lines.append(f"{key}: " + ", ".join(map(str, r[key])) + _more(r, key))
    lines.append(f"({vtext})")
    return "\n".join(lines)

"""An ``import_file`` reply as the launcher words it: no text of the jail's, so no text of the file.

The jail parsed a file of the user's; its importer may have been patched by the session's own
code, and parser errors quote the file. So the launcher keeps nothing free-form from it: output,
the message, source lines, a timeout's last words and unknown fields are dropped. A failure the
jail reported becomes the launcher's sentence from ``jail.wire.importfail.REASONS`` (an unknown
code says so), with the line / column only if they fit the file (ints, at most its line count) and
DXF entity names only from the table; a failure the launcher saw itself (a timeout, a death, a
protocol error: ``outcome`` other than ``"error"``) keeps the launcher's own message. A success
keeps the validated summary of the one name bound.

Blocks: file content in an import reply or in ``last_error``. Does not block: the few bits a
line number or a summary's numbers could carry, nor what a session whose import succeeded
does with the bytes it was given (list_inputs' rule keeps secrets out of the jail).
"""
from __future__ import annotations

import re

from jail.wire.importfail import DXF_ENTITIES, MAX_KINDS, REASONS

from launcher.replies import validate

#: a signal the launcher names when the parser's process died (anything else: "a signal")
_SIGNALS = {"SIGXCPU": "the CPU-time limit was reached", "SIGSYS": "a forbidden system call was made",
            "SIGSEGV": "it crashed", "SIGBUS": "it crashed", "SIGILL": "it crashed", "SIGFPE": "it crashed",
            "SIGABRT": "it aborted", "SIGKILL": "it was killed (out of memory, or from outside)"}
_DIED_SIG = re.compile(r"the child process died from (SIG[A-Z0-9]{2,8})\b")
_DIED_EXIT = re.compile(r"the child process exited with code ([0-9]{1,3}) ")
UNCHANGED = "nothing was imported and the session is unchanged"
OPEN_MESH = ("the mesh does not close (a hole, or an edge shared by more than two triangles), so {name} is a "
             "surface with an area and no volume, not a Solid; booleans and volume need a closed mesh")


def _where(err: dict, fmt: str, lines: int) -> str:
    line, col = validate.count(err.get("file_line"), 10 ** 9), validate.count(err.get("file_col"), 10 ** 7)
    if line is None or line < 1 or (fmt != "3mf" and line > lines):
        return ""
    at = f" at line {line}" + (f", column {col}" if col is not None else "")
    return at + (" of its model part" if fmt == "3mf" else "")


def _kinds(err: dict) -> list[str]:
    k = err.get("kinds")
    if not isinstance(k, list):
        return []
    return sorted({x if x in DXF_ENTITIES else "other" for x in k[:64] if isinstance(x, str)})[:MAX_KINDS]


def _failure(err: dict, outcome: str, fmt: str, shown: str, lines: int) -> dict:
    """(type, message) of a failed import, in the launcher's words."""
    typ = validate.line(err.get("type"), 40) or "Error"
    if outcome != "error":  # the launcher's own error (timeout, death, cancel, protocol, ...)
        msg = err.get("message") if isinstance(err.get("message"), str) else ""
        if outcome == "died":  # names a signal the session's head reported: only one of ours
            m, e = _DIED_SIG.match(msg), _DIED_EXIT.match(msg)
            sig = m.group(1) if m else None
            msg = (f"the parser's process died from {sig}: {_SIGNALS[sig]}" if sig in _SIGNALS
                   else f"the parser's process exited with code {e.group(1)} before replying" if e
                   else "the parser's process died before replying")
            msg += f"; {UNCHANGED}"
        return {"type": typ, "message": f"import of {shown!r} failed: {msg}"}
    reason = err.get("reason")
    if typ not in ("ImportError", "MemoryError") or not isinstance(reason, str) or reason not in REASONS:
        return {"type": "ImportError", "message": f"import of {shown!r} failed, and the session's importer gave "
                                                  f"no reason the launcher knows (the session may have changed "
                                                  f"its own code); {UNCHANGED}"}
    text = REASONS[reason].replace("{fmt}", fmt.upper()) + _where(err, fmt, lines)
    kinds = _kinds(err) if fmt == "dxf" else []
    if kinds:
        text += f" (DXF entities: {', '.join(kinds)})"
    return {"type": typ, "message": f"{shown!r} ({fmt.upper()}) {text}; {UNCHANGED}"}


def checked(result: dict, outcome: str, info: dict, name: str, data) -> dict:
    """The reply of ``import_file`` rebuilt from ``result`` (validated by launcher/replies/validate.py;
    ``outcome`` the launcher's own verdict on the call), ``info`` the file's (``filename``, ``format``)
    and ``data`` its bytes (for the line count)."""
    out = {"ok": result.get("ok") is True, "stdout": "", "stderr": "", "truncated": False, "objects": [],
           "error": None, "duration_ms": validate.number(result.get("duration_ms")),
           "deleted": [], "value": None, "call": validate.count(result.get("call"), 10 ** 9)}
    if isinstance(result.get("wall_ms"), (int, float)):
        out["wall_ms"] = result["wall_ms"]
    if out["ok"]:
        objs = [o for o in result.get("objects") or [] if isinstance(o, dict) and o.get("name") == name]
        out["objects"] = objs[:1]
        if info.get("format") in ("stl", "3mf") and objs and objs[0].get("type") != "Solid":
            out["note"] = OPEN_MESH.format(name=name)
        return out
    err = result.get("error") if isinstance(result.get("error"), dict) else {}
    fmt = str(info.get("format", ""))
    lines = data.count(b"\n") + 1 if err.get("file_line") is not None else 0
    out["error"] = {**_failure(err, outcome, fmt, info.get("filename", "?"), lines),
                    "line": None, "col": None, "source_line": None, "context": None}
    return out

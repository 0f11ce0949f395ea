"""The session's design as one Python script that cannot hurt by accident (``script``, export ``py``).

Built only from the launcher's history of the head (``launcher/session/history.py``), never from
the jail: a header saying that this is untrusted code an AI session wrote, that it ran in the jail
and would run as the user outside it, and how to run it jailed (``build123d-launcher run FILE``);
then :data:`GUARD`, the first statement, so that ``python FILE``, ``import`` or pytest collecting
it stops with that message before anything of the session runs (lines 1-2 are fixed launcher
text, so no encoding cookie; a ``from __future__`` in a call is refused, as it would make Python
refuse the file with a SyntaxError instead of the message); then each call under ``# --- call N``.
Each call's code is made reviewable (``reviewable.py``) and every change is listed (``changes``).
:func:`split` reads an exported script back into its calls for ``build123d-launcher run``.

Blocks: a session rewriting its history, a script that runs on a plain interpreter by accident,
code hidden from the reader. Does not block: harm in code that reads fine; the user reads it.
"""
from __future__ import annotations

import re

from launcher.files import reviewable
from launcher.files.literal import string_literal
from launcher.session import SessionError
from launcher.session.history import MAX_BYTES as MAX_HISTORY_BYTES

MAX_SCRIPT_BYTES = 8 * 1024 * 1024   # the script's size cap (the history of a long session)
MAX_CHANGES = 100                    # changes listed (header and reply); the rest are counted
IMPORT_NOTE = "import_file: "        # the start of the note of an import_file call
MARKER = re.compile(r"# --- call ([0-9]{1,9})(?:: (.*))?\Z")
GUARD = ('raise SystemExit("build123d-launcher: this file is untrusted code written by an AI session; '
         'read all of it, then run it jailed: build123d-launcher run FILE")')
HEADER = (
    "# UNTRUSTED CODE, written by an AI session. Do not run it with python: read all of it first.",
    "# build123d-launcher ran each call below inside its jail. Run as a plain Python file, the same code",
    "# would run as you, outside the jail, with your files, your network and your privileges: code can",
    "# behave differently there. The line after this header stops python, import and pytest; remove it",
    "# only to run the code unjailed, as yourself, once you have read all of it.",
    "# To run it jailed: build123d-launcher run FILE   (--input-dir DIR if it imports files)",
)
PREAMBLE = ("from build123d import *",)
INPUT_DIR_LINE = 'INPUT_DIR = "."  # the folder that holds the imported files'

#: build123d code that reads the same file outside the jail (``{path}``: ``repr('/' + filename)``)
_IMPORT_TPL = {"step": "{name} = import_step(INPUT_DIR + {path})",
               "brep": "{name} = import_brep(INPUT_DIR + {path})",
               "svg": "{name} = Compound(list(import_svg(INPUT_DIR + {path})))",
               "stl": "{name} = Mesher().read(INPUT_DIR + {path})[0]",
               "3mf": "{name} = Mesher().read(INPUT_DIR + {path})[0]",
               "dxf": "# build123d has no DXF reader: run this script with build123d-launcher run --input-dir DIR\n"
                      "# to import INPUT_DIR + {path} as import_file did\n{name} = None"}
_PATH = re.compile(r"INPUT_DIR \+ ('(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\")")
_NAME = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*) = ", re.M)


def import_code(name: str, fmt: str, filename: str) -> str:
    """The build123d code that reads ``INPUT_DIR/filename`` as ``import_file`` did (``fmt``)."""
    tpl = _IMPORT_TPL.get(fmt)
    if tpl is None:
        raise ValueError(f"no import code for format {fmt!r}")
    return tpl.format(name=name, path=repr("/" + filename))


def parse_import(code: str) -> tuple[str, str, str] | None:
    """``(name, fmt, filename)`` when ``code`` is exactly what :func:`import_code` writes, else None."""
    code = "\n".join(ln for ln in code.strip("\n").split("\n") if not ln.startswith(reviewable.FLAG))
    m, n = _PATH.search(code), _NAME.search(code)
    if m is None or n is None:
        return None
    path = string_literal(m.group(1))
    if path is None or not path.startswith("/"):
        return None
    fmts = [f for f in _IMPORT_TPL if import_code(n.group(1), f, path[1:]) == code]
    if not fmts:
        return None
    ext = path.rsplit(".", 1)[-1].lower()  # STL and 3MF read alike: the extension tells
    return n.group(1), ext if ext in fmts else fmts[0], path[1:]


def build(items, session_id: str = "") -> tuple[str, list[str]]:
    """The script text for history ``items`` (``Entry(call, code, note)``), and its changes;
    ``reviewable.ScriptRefused`` when a call cannot be shown faithfully."""
    rename = reviewable.Renamer(reviewable.ascii_names(e.code for e in items))
    changes: list[str] = []
    body: list[str] = []
    for e in items:
        code, ch = reviewable.review(e.code, e.call, rename)
        changes += ch
        note = f": {reviewable.escape_text(e.note)}" if e.note else ""
        body += [f"# --- call {e.call}{note}".replace("\n", "\\n"), code.rstrip("\n"), ""]
    sid = re.sub(r"[^A-Za-z0-9_-]", "_", str(session_id))[:64]
    imports = sum(1 for e in items if e.note and e.note.startswith(IMPORT_NOTE))
    head = [*HEADER,
            f"# Session {sid or '-'}: {len(items)} successful call(s), in order, as the launcher recorded them;",
            "# failed calls, calls undone by restore_snapshot and calls before a reset are not in it.",
            f"# The launcher changed {len(changes)} thing(s) so that what you read is what runs"
            + (":" if changes else "."),
            *(f"#   {reviewable.escape_text(c)}" for c in capped(changes)),
            GUARD, *PREAMBLE]
    if imports:
        head.append(INPUT_DIR_LINE)
    return "\n".join(head + [""] + body), changes


def capped(changes: list[str]) -> list[str]:
    """At most MAX_CHANGES sentences; the rest counted."""
    if len(changes) <= MAX_CHANGES:
        return list(changes)
    return changes[:MAX_CHANGES] + [f"... and {len(changes) - MAX_CHANGES} more change(s) of the same kinds"]


def session_script(session) -> dict:
    """``{"script", "calls", "imports", "bytes", "changes"}`` for ``session``, from the launcher's
    history only; SessionError when the script cannot be made (too big, a call refused)."""
    lost = getattr(getattr(session, "chain", None), "head_lost", None)
    if lost:  # the head was killed after its calls: there is no state the script could rebuild
        raise SessionError(f"{lost}; the script has no calls until a snapshot is restored or the session reset")
    hist = getattr(getattr(session, "chain", None), "history", None)
    if hist is not None and not hist.complete:
        raise SessionError(f"this session has run more than {MAX_HISTORY_BYTES} bytes of code: the launcher no "
                           "longer keeps it, so there is no script; reset to start a new one")
    items = tuple(session.history)
    try:
        text, changes = build(items, getattr(session, "id", ""))
    except reviewable.ScriptRefused as e:
        raise SessionError(f"the script cannot be shown faithfully: {e}") from None
    data = text.encode("utf-8", "surrogatepass")
    if len(data) > MAX_SCRIPT_BYTES:
        raise SessionError(f"the script would be larger than {MAX_SCRIPT_BYTES} bytes")
    n_imp = sum(1 for e in items if e.note and e.note.startswith(IMPORT_NOTE))
    return {"script": text, "calls": len(items), "imports": n_imp, "bytes": len(data), "changes": capped(changes)}


def split(text: str) -> list[dict] | None:
    """An exported script's calls, for ``build123d-launcher run``: ``[{"call": N, "note": str|None,
    "code": str, "line": first line in the file}]`` (a ``"call": 0`` entry for anything between
    the guard and the first call other than the launcher's preamble). None when ``text`` is not a
    launcher script: no line is exactly :data:`GUARD` after a header of comments only."""
    lines = text.split("\n")
    at = next((i for i, ln in enumerate(lines) if not ln.startswith("#")), None)
    if at is None or lines[at] != GUARD:
        return None
    calls: list[dict] = [{"call": 0, "note": None, "code": [], "line": at + 2}]
    for no, ln in enumerate(lines[at + 1:], at + 2):
        m = MARKER.match(ln)
        if m:
            calls.append({"call": int(m.group(1)), "note": m.group(2), "code": [], "line": no + 1})
        else:
            calls[-1]["code"].append(ln)
    pre = [ln for ln in calls[0]["code"] if ln.strip() and ln not in PREAMBLE and ln != INPUT_DIR_LINE]
    out = [dict(c, code="\n".join(c["code"]).rstrip("\n") + "\n") for c in calls[1:]]
    return ([dict(calls[0], code="\n".join(calls[0]["code"]) + "\n")] if pre else []) + out

"""The session's design as one runnable Python script (the ``script`` tool, ``export`` format ``py``).

The session keeps its successful calls in its own process (jail/cad/history.py); a disposable
next sends the list (``history`` op) and it is joined here: ``from build123d import *``, each
call's code in order with a comment saying which call (and, for ``import_file``, which file read
from ``INPUT_DIR``) it came from.

Blocks: an untrusted list breaking the launcher or the reader's screen: strict JSON, every
entry's fields type-checked, the total capped (``MAX_SCRIPT_BYTES``), control characters, bidi
overrides/isolates and lone surrogates escaped (``\\x1b``, ``\\u202e``) so the script cannot hide or
reorder code in a terminal or an editor ("Trojan Source").
Does not block: a session that rewrites its own history; the script is text for the user to
read before running it.
"""
from __future__ import annotations

from jail.wire import protocol

from launcher.replies import sanitize
from launcher.replies import validate as replies
from launcher.session import SessionError

MAX_SCRIPT_BYTES = 8 * 1024 * 1024   # the history blob accepted from the session


def entries(session) -> list[dict]:
    """The session's successful calls, checked: ``[{"call": int, "code": str, "note": str|None}]``."""
    msg, blob = session.ask({"t": "history"}, "history", timeout=30, cap=MAX_SCRIPT_BYTES + 65536)
    if msg.get("ok") is not True:
        raise SessionError(f"script failed: {replies.line(msg.get('error'), 300) or '?'}")
    if len(blob) > MAX_SCRIPT_BYTES:
        raise SessionError(f"the session's history is larger than {MAX_SCRIPT_BYTES} bytes")
    try:
        raw = protocol.loads_strict(blob.decode("utf-8", "surrogatepass"))
    except (UnicodeDecodeError, ValueError, protocol.ProtocolError):
        raise SessionError("the session sent an invalid history") from None
    if not isinstance(raw, list):
        raise SessionError("the session sent an invalid history")
    out = []
    for e in raw:
        if not isinstance(e, dict):
            continue
        call, code, note = replies.count(e.get("call"), 10 ** 9), e.get("code"), e.get("note")
        if call is None or not isinstance(code, str):
            continue
        out.append({"call": call, "code": code, "note": note if isinstance(note, str) else None})
    return out


def _clean(code: str) -> str:
    return sanitize.text(code.replace("\r\n", "\n"), None, keep="\n\t")


def build(items: list[dict], session_id: str = "") -> str:
    """The script text for checked history ``items``."""
    imports = [e for e in items if e["note"] and e["note"].startswith("import_file:")]
    head = [f"# build123d script rebuilt by build123d-launcher{' from session ' + sanitize.log_token(session_id) if session_id else ''}:",
            f"# {len(items)} successful call(s), in order (failed calls are not included).",
            "from build123d import *", ""]
    if imports:
        head[2:2] = ["# Imported files are read from INPUT_DIR: set it to the folder that holds them."]
        head += ['INPUT_DIR = "."', ""]
    body = []
    for e in items:
        note = f": {_clean(e['note'])}" if e["note"] else ""
        body.append(f"# --- call {e['call']}{note}".replace("\n", "\\n"))
        body.append(_clean(e["code"]).rstrip("\n"))
        body.append("")
    return "\n".join(head + body)


def session_script(session) -> dict:
    """``{"script": text, "calls": n, "imports": k, "bytes": b}`` for ``session``."""
    items = entries(session)
    text = build(items, getattr(session, "id", ""))
    data = text.encode("utf-8", "surrogatepass")
    if len(data) > MAX_SCRIPT_BYTES:
        raise SessionError(f"the script would be larger than {MAX_SCRIPT_BYTES} bytes")
    n_imp = sum(1 for e in items if e["note"] and e["note"].startswith("import_file:"))
    return {"script": text, "calls": len(items), "imports": n_imp, "bytes": len(data)}


# Minimal stand-in, written by H2 for its tests; H1's launcher.files.script.import_code replaces it.
_IMPORT_CODE = {"step": "{name} = import_step(INPUT_DIR + {path!r})",
                "brep": "{name} = import_brep(INPUT_DIR + {path!r})",
                "svg": "{name} = Compound(list(import_svg(INPUT_DIR + {path!r})))",
                "stl": "{name} = Mesher().read(INPUT_DIR + {path!r})[0]",
                "3mf": "{name} = Mesher().read(INPUT_DIR + {path!r})[0]"}


def import_code(name: str, fmt: str, filename: str) -> str:
    """build123d code that reads ``INPUT_DIR/filename`` as import_file did."""
    tpl = _IMPORT_CODE.get(fmt)
    if tpl is None:
        return (f"# {name}: imported from {filename!r} by import_file; build123d has no {fmt.upper()} reader, "
                f"so this script cannot rebuild it\n{name} = None")
    return tpl.format(name=name, path="/" + filename)

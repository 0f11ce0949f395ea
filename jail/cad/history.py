"""Call numbers for error reports: the session's successful code blocks, in the session's process.

Each successful ``execute`` and ``import_file`` appends one entry (its call number, the code, an
optional note) in the ``next`` that ran it, so the numbers follow promotions, snapshots, restores
and resets like the state does. Call N's code is compiled with the filename ``<execute-N>``
(:func:`filename`), so a frame in a function an earlier call defined can be attributed ("defined
in call 7, line 3", with that line's source).

This is not the session's history as the user sees it: the script is built only from the
launcher's own record (launcher/session/history.py), and no op sends this list out of the jail.
Blocks: nothing. User code can read or rewrite the list; then only its own error reports lie.
"""
from __future__ import annotations

import re

__all__ = ["record", "entries", "source_line", "next_call_no", "filename", "call_no_of",
           "FILENAME_PREFIX"]

FILENAME_PREFIX = "<execute-"
_FILENAME_RE = re.compile(r"<execute-([0-9]{1,9})>\Z")

# (call_no, code, note) per successful call, oldest first.
_ENTRIES: list[tuple[int, str, str | None]] = []


def next_call_no() -> int:
    """The number the next successful call will get (compile its code with ``filename`` of it)."""
    return (_ENTRIES[-1][0] + 1) if _ENTRIES else 1


def filename(call_no: int) -> str:
    """The code filename of call ``call_no``: ``<execute-N>``."""
    return f"{FILENAME_PREFIX}{int(call_no)}>"


def call_no_of(co_filename) -> int | None:
    """``7`` for ``"<execute-7>"``; None for anything else (not a str, other files)."""
    if type(co_filename) is not str:
        return None
    m = _FILENAME_RE.match(co_filename)
    return int(m.group(1)) if m else None


def record(code: str, note: str | None = None) -> int:
    """Append a successful call's code (an exact ``str`` copy); returns its call number."""
    n = next_call_no()
    _ENTRIES.append((n, str.__str__(code) if isinstance(code, str) else "",
                     str.__str__(note) if isinstance(note, str) else None))
    return n


def entries() -> list[dict]:
    """``[{"call": N, "code": str, "note": str | None}, ...]``, oldest first (copies)."""
    return [{"call": n, "code": c, "note": note} for n, c, note in _ENTRIES]


def code_of(call_no: int) -> str | None:
    for n, c, _note in _ENTRIES:
        if n == call_no:
            return c
    return None


def source_line(call_no: int, line: int) -> str | None:
    """Line ``line`` (1-based) of call ``call_no``'s code, stripped; None when unknown."""
    code = code_of(call_no)
    if code is None or type(line) is not int or line < 1:
        return None
    lines = code.splitlines()
    return lines[line - 1].strip() if line <= len(lines) else None


def source_lines(call_no: int) -> list[str]:
    """All lines of call ``call_no``'s code (empty when unknown)."""
    code = code_of(call_no)
    return code.splitlines() if code is not None else []

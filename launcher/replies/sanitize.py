"""Text from the jail made safe to show: one place, applied where text enters the launcher.

Jailed text ends up in MCP replies (often shown in a terminal or a web view), in log lines and
in the daemon's JSON frames. :func:`text` returns UTF-8-encodable text (lone surrogates written
as ``\\ud800``) without C0/C1 controls other than the kept whitespace, DEL, bidi embeddings,
overrides, isolates and marks, or line/paragraph separators, each written visibly (``\\x1b``,
``\\u202e``), cut to a cap with a marker. :func:`log_token` keeps one word of a ``key=value`` log
line to ``[A-Za-z0-9_.:-]``, so no value can add a field or a record.

Blocks: ANSI CSI/OSC sequences reaching a terminal, text made to read differently from what it
is, line breaks slipped past a logger. Does not block: lies (a reply may misreport its own call),
or merely unusual characters (zero-width spaces and other format characters are kept: they
cannot move the cursor or reorder text). The escape is ambiguous with the same text written
literally by the user (``print("\\\\x1b")``): harmless, it is only ever shown, never run.
"""
from __future__ import annotations

import re

_CONTROLS = "\x00-\x08\x0b-\x1f\x7f-\x9f"
_UNICODE = "\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_BAD = {
    "\n\t": re.compile(f"[{_CONTROLS}{_UNICODE}]"),
    "\n": re.compile(f"[\t{_CONTROLS}{_UNICODE}]"),
    "": re.compile(f"[\n\t{_CONTROLS}{_UNICODE}]"),
}
# the same sets negated: a full match of a safe string is one tight loop (about twice as fast as
# searching for the first bad character)
_OK = {
    "\n\t": re.compile(f"[^{_CONTROLS}{_UNICODE}]*"),
    "\n": re.compile(f"[^\t{_CONTROLS}{_UNICODE}]*"),
    "": re.compile(f"[^\n\t{_CONTROLS}{_UNICODE}]*"),
}
_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
_TOKEN_BAD = re.compile(r"[^A-Za-z0-9_.:\-]")


def _escape(m: re.Match) -> str:
    c = m.group()
    if c in _SHORT:
        return _SHORT[c]
    o = ord(c)
    return f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}"


def _pattern(keep: str) -> re.Pattern:
    try:
        return _BAD[keep]
    except KeyError:
        raise ValueError(f"keep must be one of {sorted(_BAD)!r}") from None


def unsafe(s: str, keep: str = "\n\t") -> bool:
    """True when :func:`text` would change ``s`` (ignoring the length cap)."""
    _pattern(keep)
    return _OK[keep].fullmatch(s) is None


def text(s, cap: int | None = None, *, keep: str = "\n\t") -> str:
    """``s`` made safe to show (see the module docstring), at most about ``cap`` characters.

    ``keep`` is the whitespace left as it is: ``"\\n\\t"`` (output text), ``"\\n"`` or ``""``
    (single-line fields). Non-strings become ``""``.
    """
    if not isinstance(s, str):
        return ""
    if cap is not None and len(s) > cap:
        s = s[:cap]
        cut = True
    else:
        cut = False
    pat = _pattern(keep)
    if _OK[keep].fullmatch(s) is None:
        s = pat.sub(_escape, s)
        if cap is not None and len(s) > cap:  # escapes grow the text: cap what is shown, too
            s = s[:cap]
            cut = True
            if "\\" in s[-6:]:  # do not end in half an escape
                s = s[:s.rfind("\\", max(0, len(s) - 6))]
    return s + " [cut]" if cut else s


def log_token(s, cap: int = 64) -> str:
    """One word for a ``key=value`` log line: ``[A-Za-z0-9_.:-]`` kept, the rest escaped."""
    if not isinstance(s, str) or not s:
        return "-"
    s = s[:cap]
    if _TOKEN_BAD.search(s) is None:
        return s
    return _TOKEN_BAD.sub(_token_escape, s)


def _token_escape(m: re.Match) -> str:
    o = ord(m.group())
    return f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}" if o < 0x10000 else f"\\U{o:08x}"

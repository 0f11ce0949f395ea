"""Text from the jail made safe to show: one place, applied where text enters the launcher.

Everything a jailed process sends is untrusted, and its text ends up in MCP
replies (read by an assistant and often shown in a terminal or a web view),
in log lines and in the daemon's JSON frames. :func:`text` returns a string
that

* is encodable as UTF-8: lone surrogates (a JSON ``"\\ud800"`` escape decodes
  to one) are written as ``\\ud800`` instead of breaking the reply encoder;
* holds no C0 control character except ``\\n`` and ``\\t`` (configurable), no
  DEL, no C1 control (U+0080-U+009F, which includes the 8-bit CSI and OSC
  introducers): each is written visibly as ``\\x1b``, ``\\r``, ``\\x9b``. ESC
  is one of them, so an ANSI CSI or OSC sequence reaches no terminal: its
  introducer is shown as ``\\x1b`` and the rest is plain text;
* holds no Unicode bidi embedding/override/isolate/mark (U+202A-U+202E,
  U+2066-U+2069, U+200E/U+200F, U+061C) and no line/paragraph separator
  (U+2028/U+2029): written as ``\\u202e`` etc., so text cannot be made to read
  differently from what it is, nor a line break be slipped past a logger;
* is cut to a length cap (characters), with a visible marker.

:func:`log_token` is stricter, for one word of a ``key=value`` log line: only
``[A-Za-z0-9_.:-]`` survive, the rest is escaped, so no value can add a field
or a record.

Not done here: judging meaning (a reply may still lie about its own call),
nor escaping characters that are merely unusual (zero-width spaces, other
format characters are kept; they cannot move the cursor or reorder text).
The escape is ambiguous with the same text written literally by the user
(``print("\\\\x1b")``): that is harmless, it is only ever shown, not run.
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


def cap_utf8(s: str, max_bytes: int) -> tuple[str, int]:
    """The longest prefix of ``s`` (a safe string) whose UTF-8 encoding fits ``max_bytes``, and the
    number of bytes left out."""
    b = s.encode("utf-8")
    if len(b) <= max_bytes:
        return s, 0
    head = b[:max(0, max_bytes)].decode("utf-8", "ignore")
    return head, len(b) - len(head.encode("utf-8"))


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

"""Session code made readable by a human before it reaches the script (``script.py``).

With :mod:`tokenize`, per call, keeping Python's meaning wherever a change is made:

* identifiers with non-ASCII characters are renamed, consistently across the whole script, to
  visible ASCII names (``pièce`` -> ``pi_u00e8ce``; a Hangul filler or a Cyrillic ``а`` can no
  longer pass for nothing or for a Latin letter). Python compares identifiers after NFKC, so
  spellings that Python treats as one name get one ASCII name. Renaming, not refusing: non-English
  names are common in honest designs; the change is listed;
* invisible, bidi, control, format, private-use and unassigned characters and separators other
  than the space are escaped in comments and in non-raw string and bytes literals (``\\u202e``:
  the same value); in raw strings and f-strings, where an escape would change the value or is not
  allowed, and anywhere outside a token, the script is refused with the call and the code point;
* lines over :data:`MAX_COLUMNS` are kept (their code is what ran) but flagged by a launcher
  comment above their statement.

Does not block: code that reads fine and does harm. The script is untrusted code; this only makes
sure that what the reader sees is what Python runs.
"""
from __future__ import annotations

import io
import keyword
import re
import tokenize
import unicodedata

MAX_COLUMNS = 160          # a longer line is flagged (tabs count as 8 columns)
FLAG = "# !!! build123d-launcher:"   # the start of the launcher's own comments inside the calls
MARKER = "# --- call"                 # the launcher's line before each call (script.py)

_IGNORABLE = {0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x3164, 0xFFA0, 0x2800} | set(range(0x180B, 0x1810)) \
    | set(range(0xFE00, 0xFE10)) | set(range(0xE0100, 0xE01F0))
_PREFIX = re.compile(r"[A-Za-z]*")


class ScriptRefused(ValueError):
    """The call's code cannot be shown faithfully; the message says which call and why."""


def hidden(ch: str) -> bool:
    """True for a character a reader may not see as itself (kept only as an escape)."""
    if ch in "\n\t ":
        return False
    cat = unicodedata.category(ch)
    return cat[0] == "C" or cat[0] == "Z" or ord(ch) in _IGNORABLE


def cp(ch: str) -> str:
    """``U+202E RIGHT-TO-LEFT OVERRIDE``: a character named in launcher words (never raw)."""
    name = unicodedata.name(ch, "") or ("a control character" if unicodedata.category(ch) == "Cc" else "unnamed")
    return f"U+{ord(ch):04X} {name}"


def escape(ch: str) -> str:
    o = ord(ch)
    return f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}" if o < 0x10000 else f"\\U{o:08x}"


def escape_text(s: str) -> str:
    """Every hidden character of ``s`` as an escape (for comments and launcher notes)."""
    return "".join(escape(c) if hidden(c) else c for c in s)


class Renamer:
    """Non-ASCII identifiers -> ASCII names, one per NFKC form, never one the script already uses."""

    def __init__(self, used: set[str]):
        self.used = set(used)
        self.names: dict[str, str] = {}

    def __call__(self, name: str) -> str:
        key = unicodedata.normalize("NFKC", name)
        if key.isascii() and not keyword.iskeyword(key):
            return key
        if key not in self.names:
            base = "".join(c if c.isascii() else f"_u{ord(c):04x}" for c in (name if key.isascii() else key))
            new = base if base.isidentifier() else "_" + base
            while new in self.used:
                new += "_"
            self.used.add(new)
            self.names[key] = new
        return self.names[key]


def ascii_names(codes) -> set[str]:
    """The ASCII identifiers (roughly: every ASCII word) the calls use, so renames avoid them."""
    return {w for c in codes for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", c)}


def _string(tok: str, call: int, line: int) -> str:
    """A string token with its hidden characters escaped, or ScriptRefused."""
    prefix = _PREFIX.match(tok).group(0).lower()
    body_at = len(prefix)
    bad = [(i, c) for i, c in enumerate(tok) if i >= body_at and hidden(c) and c != "\n"]
    if "f" in prefix:
        inner = _fstring_fields(tok[body_at:])
        if any(not c.isascii() for c in inner):
            raise ScriptRefused(f"call {call}, line {line}: an f-string uses a non-ASCII name inside {{...}}, "
                                "which the script cannot rename there")
    if "b" in prefix and not tok.isascii():
        raise ScriptRefused(f"call {call}, line {line}: a bytes literal holds a non-ASCII character")
    if not bad:
        return tok
    if "r" in prefix or "f" in prefix:
        kind = "a raw string" if "r" in prefix else "an f-string"
        raise ScriptRefused(f"call {call}, line {line}: {kind} holds {cp(bad[0][1])}, which cannot be escaped "
                            f"there without changing its value; the script would hide it")
    out, i = [], 0
    for j, c in bad:
        out.append(tok[i:j])
        k = j
        while k > body_at and tok[k - 1] == "\\":
            k -= 1
        if (j - k) % 2:  # escaped by an odd run of backslashes: the value is a backslash and the character
            out.append("\\")
        out.append(escape(c))
        i = j + 1
    out.append(tok[i:])
    return "".join(out)


def _fstring_fields(body: str) -> str:
    """The text inside the replacement fields ``{...}`` of an f-string body (``{{`` is literal)."""
    out, depth, i = [], 0, 0
    while i < len(body):
        c = body[i]
        if depth == 0 and body.startswith("{{", i):
            i += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}" and depth:
            depth -= 1
        elif depth:
            out.append(c)
        i += 1
    return "".join(out)


def review(code: str, call: int, rename: Renamer) -> tuple[str, list[str]]:
    """``code`` made reviewable, and the changes as sentences; ScriptRefused when it cannot be."""
    code = code.replace("\r\n", "\n").replace("\r", "\n")
    if not code.endswith("\n"):
        code += "\n"
    lines: list[str] = []
    rd = io.StringIO(code).readline

    def readline():
        ln = rd()
        if ln:
            lines.append(ln)
        return ln

    edits: list[tuple[int, int, int, int, str]] = []   # (row0, col0, row1, col1, new text)
    changes: list[str] = []
    renamed: dict[str, str] = {}
    escaped = 0
    stmt_of: dict[int, int] = {}                          # physical row -> first row of its statement
    stmt, depth, prev, end = None, 0, None, (1, 0)
    try:
        for t in tokenize.generate_tokens(readline):
            if t.type == tokenize.ERRORTOKEN:
                rest = lines[t.start[0] - 1][t.start[1]:].lstrip(" ") if t.start[0] <= len(lines) else ""
                c = rest[:1] or t.string[:1]
                what = cp(c) if hidden(c) or not c.isascii() else repr(c)
                raise ScriptRefused(f"call {call}, line {t.start[0]}: Python cannot read its code at {what}")
            if t.type in (tokenize.ENDMARKER, tokenize.DEDENT):
                continue
            # between tokens only spaces, tabs, newlines and line continuations: a form feed or any
            # other character there is refused (Python would read past it, a reader may not see it)
            for c in _gap(lines, end, t.start):
                if c not in " \t\\\n":
                    raise ScriptRefused(f"call {call}, line {t.start[0]}: {cp(c)} between tokens: the script "
                                        "would hide it")
            end = t.end
            if stmt is None and t.type not in (tokenize.NL, tokenize.NEWLINE):
                stmt = t.start[0]
            for r in range(t.start[0], t.end[0] + 1):
                stmt_of.setdefault(r, stmt if stmt is not None else r)
            if t.type == tokenize.OP:
                depth += t.string in "([{"
                depth -= t.string in ")]}" and depth > 0
            if t.type == tokenize.NEWLINE or (t.type == tokenize.NL and depth == 0):
                stmt = None
            new = t.string
            if t.type == tokenize.NAME and not t.string.isascii():
                new = rename(t.string)
                renamed[t.string] = new
            elif t.type == tokenize.NAME and t.string == "__future__" and prev == "from":
                raise ScriptRefused(f"call {call}, line {t.start[0]}: `from __future__ import ...` must open a "
                                    "file; in the middle of the script Python would refuse the whole file")
            elif t.type == tokenize.COMMENT:
                new = escape_text(t.string)
                if t.start[1] == 0 and new.startswith(MARKER):  # only the launcher starts a call
                    new = "#  " + new[2:]
                    changes.append(f"call {call}, line {t.start[0]}: a comment that read like the launcher's "
                                   f"{MARKER!r} marker indented by one space")
                    edits.append((*t.start, *t.end, new))
                    continue
            elif t.type == tokenize.STRING:
                new = _string(t.string, call, t.start[0])
            elif getattr(tokenize, "FSTRING_MIDDLE", -1) == t.type and any(hidden(c) for c in t.string):
                c = next(c for c in t.string if hidden(c))
                raise ScriptRefused(f"call {call}, line {t.start[0]}: an f-string holds {cp(c)}, which cannot be "
                                    "escaped there without changing its value; the script would hide it")
            if new != t.string:
                escaped += t.type != tokenize.NAME
                edits.append((*t.start, *t.end, new))
            if t.type not in (tokenize.NL, tokenize.COMMENT, tokenize.INDENT):
                prev = t.string
    except (tokenize.TokenError, SyntaxError) as e:
        raise ScriptRefused(f"call {call}: Python cannot read its code ({escape_text(str(e))[:200]})") from None
    text = _apply(lines, edits)
    for no, ln in enumerate(text.split("\n"), 1):
        if ln.startswith(MARKER):
            raise ScriptRefused(f"call {call}, line {no}: a string holds a line that reads like the launcher's "
                                f"{MARKER!r} marker")
    for old, new in renamed.items():
        changes.append(f"call {call}: identifier {ascii(old)} written as {new}")
    if escaped:
        changes.append(f"call {call}: hidden characters escaped in {escaped} comment(s)/string(s)")
    return _flag_long(text, stmt_of, call, changes), changes


def _gap(lines: list[str], a: tuple[int, int], b: tuple[int, int]) -> str:
    """The source text between positions ``a`` and ``b`` (rows 1-based)."""
    if a[0] == b[0]:
        return lines[a[0] - 1][a[1]:b[1]] if a[0] <= len(lines) else ""
    return lines[a[0] - 1][a[1]:] + "".join(lines[a[0]:b[0] - 1]) + (lines[b[0] - 1][:b[1]] if b[0] <= len(lines) else "")


def _apply(lines: list[str], edits) -> str:
    starts, pos = [], 0
    for ln in lines:
        starts.append(pos)
        pos += len(ln)
    text = "".join(lines)
    for r0, c0, r1, c1, new in sorted(edits, reverse=True):
        a, b = starts[r0 - 1] + c0, starts[r1 - 1] + c1
        text = text[:a] + new + text[b:]
    return text


def _flag_long(text: str, stmt_of: dict[int, int], call: int, changes: list[str]) -> str:
    """A launcher comment above the statement of every line over MAX_COLUMNS (rows are kept: the
    edits above never add or remove a line)."""
    rows = text.split("\n")
    flags: dict[int, list[str]] = {}
    for no, ln in enumerate(rows, 1):
        width = len(ln.expandtabs(8))
        if width > MAX_COLUMNS:
            at = stmt_of.get(no, no)
            where = "the next line" if at == no else f"line {no - at + 1} of the statement below"
            flags.setdefault(at, []).append(f"{FLAG} {where} is {width} columns long: read all of it")
            changes.append(f"call {call}, line {no}: {width} columns long (over {MAX_COLUMNS}), flagged")
    if not flags:
        return text
    out = []
    for no, ln in enumerate(rows, 1):
        out.extend(flags.get(no, ()))
        out.append(ln)
    return "\n".join(out)

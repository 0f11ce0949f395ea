"""The input files a call's code names, sent with it (in the jail's scratch directory; never changed).

Scripts read the files they ship with by a relative name (``import_svg("logo.svg")``,
``import_step(Path(__file__).parent / "part.step")``). Before an ``execute`` the launcher parses
the code (``ast``, never run; bounded: at most MAX_LITERALS string constants looked at) and takes
every string literal that names a file ``list_inputs`` offers (``"logo.svg"``,
``"./parts/a.step"``, ``"parts/a.step"``: inputs.importable, the same rule as import_file). Those
files are read with import_file's checked read and in-flight budget (inputs.reading_many) and
sent with the request: ``{"t": "execute", "code", "inputs": [{"name", "size"}]}`` + their bytes.

Blocks: anything but offered files becoming readable (no input directory: nothing is sent; names
are never built from anything but a whole literal), more than MAX_SENT files or
``max_input_bytes`` together per call. Does not block: the code reading a file it names in a
literal without needing it (it may read whatever list_inputs offers, as import_file can).
"""
from __future__ import annotations

import io
import tokenize
from contextlib import contextmanager

from launcher.files import inflight, inputs
from launcher.files.inflight import WIRE_MAX_INPUT
from launcher.files.literal import string_literal

MAX_LITERALS = 5000   # string constants of one call's code looked at
MAX_SENT = 16         # files sent with one call
MAX_NAME = 1024       # a literal longer than this names no file


def literal_names(code: str) -> list[str]:
    """The distinct string literals of ``code`` that could name a file (``./`` prefixes dropped),
    in source order; [] when it does not tokenize (the jail reports the syntax error).

    The launcher never parses the code: ``tokenize`` (pure Python, no recursion, bounded by
    ``max_code_bytes``) finds the string tokens, and only a plain one (no ``f``/``b`` prefix) is
    decoded, by itself, without the parser (launcher.files.literal: ``ast`` fails under concurrent
    calls on CPython 3.11, "AST constructor recursion depth mismatch", and dropped names)."""
    out: dict[str, None] = {}
    seen = 0
    try:
        for tok in tokenize.generate_tokens(io.StringIO(code).readline):
            if tok.type != tokenize.STRING:
                continue
            seen += 1
            if seen > MAX_LITERALS:
                break
            prefix = tok.string[:len(tok.string) - len(tok.string.lstrip("rRuUbBfF"))].lower()
            if "f" in prefix or "b" in prefix or len(tok.string) > MAX_NAME + 8:
                continue
            s = string_literal(tok.string)
            if s is None:
                continue
            while s.startswith("./"):
                s = s[2:]
            if 0 < len(s) <= MAX_NAME and "\x00" not in s and "." in s:
                out.setdefault(s, None)
    except (tokenize.TokenError, SyntaxError, ValueError, MemoryError, RecursionError):
        pass  # what was found before the bad token still counts; the jail reports the error
    return list(out)


@contextmanager
def sending(ctx, code):
    """``with sending(ctx, code) as (request, blob, sent)``: the execute request (None: the plain
    one) and the blob carrying the offered files ``code`` names; ``sent`` is
    ``{"sent": [{"name", "size", "format", "sha256"}], "not_sent": [{"name", "why"}]}`` or None."""
    input_dir = getattr(getattr(ctx, "launcher", None), "input_dir", None)
    limits = ctx.profile.limits
    if input_dir is None or not isinstance(code, str) or len(code.encode("utf-8", "surrogatepass")) > limits.max_code_bytes:
        yield None, b"", None
        return
    candidates = literal_names(code)
    if not candidates:
        yield None, b"", None
        return
    room = WIRE_MAX_INPUT - len(code.encode("utf-8", "surrogatepass")) - 64 * 1024
    with inputs.reading_many(input_dir, candidates, limits.max_input_bytes, min(limits.max_input_bytes, room),
                             MAX_SENT, wait_s=inflight.wait_s(limits)) as (infos, data, refused):
        if not infos and not refused:
            yield None, b"", None
            return
        request = {"t": "execute", "code": code, "inputs": [{"name": i["name"], "size": i["size"]} for i in infos]}
        yield request, data, {"sent": infos, "not_sent": refused}


def lines(sent: dict | None) -> list[str]:
    """The reply's lines about the input files sent with the call."""
    if not isinstance(sent, dict):
        return []
    out = []
    if sent.get("sent"):
        out.append("Input files sent with the call (from the input directory, never changed there): "
                   + ", ".join(f"{i['name']} ({i['size']} bytes)" for i in sent["sent"]))
    for r in sent.get("not_sent") or []:
        out.append(f"Input file not sent: {r['name']}: {r['why']}")
    return out

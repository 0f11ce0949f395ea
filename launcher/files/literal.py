"""Decode one Python string-literal token without the parser.

The launcher serves daemon clients from threads, and CPython 3.11's ``ast`` module keeps its
recursion-depth counter per interpreter: ``ast.parse``/``ast.literal_eval`` from two threads at once
can fail with ``SystemError: AST constructor recursion depth mismatch``. A file name silently
dropped that way is a lost input, so the launcher decodes the literal tokens it needs here.

Handles what ``tokenize`` reports as a STRING: optional ``r``/``u`` prefix (any case), single or
triple quotes, and the escapes ``unicode_escape`` knows (which are Python's). Returns None for
``b``/``f`` prefixes and anything that is not a whole literal. Never runs or evaluates code.
"""
from __future__ import annotations

import re

_PREFIXES = {"", "r", "u"}
# Python's escapes; any other backslash stays as written (as Python does, with a warning).
_ESCAPE = re.compile(r"""\\(?:\n|[\\'"abfnrtv]|[0-7]{1,3}|x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4}"""
                     r"""|U[0-9A-Fa-f]{8}|N\{[^}]*\})""")


def _unescape(m: re.Match) -> str:
    return m.group(0).encode("ascii").decode("unicode_escape")


def string_literal(token: str) -> str | None:
    """The value of the string literal ``token`` (as ``ast.literal_eval`` gives it), or None."""
    body = token.lstrip("rRuUbBfF")
    prefix = token[:len(token) - len(body)].lower()
    if prefix not in _PREFIXES:
        return None
    for quote in ('"""', "'''", '"', "'"):
        if len(body) >= 2 * len(quote) and body.startswith(quote) and body.endswith(quote):
            inner = body[len(quote):-len(quote)]
            break
    else:
        return None
    if prefix == "r":
        return inner
    if "\\" not in inner:
        return inner
    try:
        return _ESCAPE.sub(_unescape, inner)
    except (UnicodeDecodeError, UnicodeEncodeError):
        return None  # \N{unknown name}, \U beyond 0x10FFFF: not a literal Python accepts

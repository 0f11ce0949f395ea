"""A failed call's error in terms of the user's code only.

``error`` builds the reply's error: exception type, message (capped), the failing line with a few
numbered source lines around it, and a ``hint`` for known mistakes (``hints``). ``where`` finds,
from a traceback or a live stack, the line of this call's innermost frame, the function it is in,
and ``origin`` when the innermost session frame is in code an earlier call defined (each call is
compiled as ``<execute-N>``, see ``history``). ``did_you_mean`` keeps Python's own suggestion.

Blocks: launcher/jail frames, paths and tracebacks in replies (only ``<execute-N>`` frames are
used). Does not block: user code in this process patching any of it; the launcher re-checks.
"""

from __future__ import annotations

import builtins
import io
import re
import sys

from jail.cad import hints, history
from jail.cad.names import cap
from jail.wire.caps import FUNCTION_NAME_CAP, HINT_CAP, MESSAGE_CAP, SOURCE_LINE_CAP

__all__ = ["error", "where", "user_frames_tb", "user_frames_stack", "did_you_mean", "source_line",
           "context"]

CONTEXT_LINES = 2     # source lines shown on each side of a failing line


def source_line(code_lines: list[str], line: int | None) -> str | None:
    """Line ``line`` (1-based) of ``code_lines``, stripped and capped; None when out of range."""
    if line is None or not (1 <= line <= len(code_lines)):
        return None
    return cap(code_lines[line - 1].strip(), SOURCE_LINE_CAP)


def context(code_lines: list[str], line: int | None, around: int = CONTEXT_LINES) -> list[str]:
    """``["  3 | x = 1", "> 4 | y = 1/0", ...]``: a few numbered lines around ``line``."""
    if line is None or not (1 <= line <= len(code_lines)) or len(code_lines) < 2:
        return []
    lo, hi = max(1, line - around), min(len(code_lines), line + around)
    w = len(str(hi))
    return [f"{'>' if n == line else ' '} {n:>{w}} | {cap(code_lines[n - 1].rstrip(), SOURCE_LINE_CAP)}"
            for n in range(lo, hi + 1)]


def frame_name(code) -> str:
    try:
        n = code.co_name
        return cap(str.__str__(n), FUNCTION_NAME_CAP) if type(n) is str else "?"
    except BaseException:  # noqa: BLE001
        return "?"


def user_frames_tb(exc: BaseException) -> list[tuple[int, int, str]]:
    """``(call_no, line, function)`` of each traceback frame running session code, outermost first."""
    out: list[tuple[int, int, str]] = []
    try:
        tb = exc.__traceback__
        n = 0
        while tb is not None and n < 10000:
            code = tb.tb_frame.f_code
            call = history.call_no_of(code.co_filename)
            if call is not None and type(tb.tb_lineno) is int:
                out.append((call, tb.tb_lineno, frame_name(code)))
            tb = tb.tb_next
            n += 1
    except BaseException:  # noqa: BLE001
        pass
    return out


def user_frames_stack(frame) -> list[tuple[int, int, str]]:
    """The same for a live stack (innermost ``frame`` first walked up), outermost first."""
    out: list[tuple[int, int, str]] = []
    try:
        n = 0
        while frame is not None and n < 10000:
            code = frame.f_code
            call = history.call_no_of(code.co_filename)
            if call is not None and type(frame.f_lineno) is int:
                out.append((call, frame.f_lineno, frame_name(code)))
            frame = frame.f_back
            n += 1
    except BaseException:  # noqa: BLE001
        pass
    out.reverse()
    return out


def where(frames: list[tuple[int, int, str]], call_no: int,
          code_lines: list[str]) -> tuple[int | None, dict | None, str | None]:
    """(the line of this call's innermost frame; where the innermost session frame is, if that is
    in code of an earlier call: ``{"call", "line", "function", "source_line", "context"}``; the
    function of this call's innermost frame, None at top level)."""
    line = func = None
    for c, ln, fn in frames:
        if c == call_no:
            line, func = ln, (fn if fn != "<module>" else None)
    origin = None
    if frames and frames[-1][0] != call_no:
        c, ln, fn = frames[-1]
        lines = history.source_lines(c)
        origin = {"call": c, "line": ln, "function": fn, "source_line": source_line(lines, ln),
                  "context": context(lines, ln)}
    return line, origin, func


def _removed_builtin(name) -> bool:
    """Whether ``name`` is one of Python's own builtins (the session's namespace lacks it)."""
    return type(name) is str and name in _PY_BUILTINS


_PY_BUILTINS = frozenset(dir(builtins))
_DYM = re.compile(r"\. (Did you mean: .{1,200}\?)\Z")


def did_you_mean(exc: BaseException) -> str | None:
    """Python's own "Did you mean: 'Cylinder'?" for NameError/AttributeError/ImportError. In 3.11
    it is not part of ``str(exc)``: CPython computes it while printing the exception, so print
    it (innermost frame only) into a buffer and take the suggestion from the last line. None for a
    Python builtin this jail removed (``help``, ``exit``): a look-alike name is no answer there, the
    hint says what to use instead."""
    if type(exc) not in (NameError, AttributeError, ImportError):
        return None
    if type(exc) is NameError and _removed_builtin(getattr(exc, "name", None)):
        return None
    saved = sys.stderr
    try:
        tb = exc.__traceback__
        n = 0
        while tb is not None and tb.tb_next is not None and n < 100000:
            tb, n = tb.tb_next, n + 1
        buf = io.StringIO()
        sys.stderr = buf
        sys.__excepthook__(type(exc), exc, tb)
        last = buf.getvalue().rstrip().rsplit("\n", 1)[-1]
        m = _DYM.search(last)
        return str.__str__(m.group(1)) if m else None
    except BaseException:  # noqa: BLE001 - user __dir__/__str__ may raise anything
        return None
    finally:
        sys.stderr = saved


def error(type_: str, message: str, line: int | None, code_lines: list[str], **extra) -> dict:
    """The reply's error dict: ``{"type", "message", "line", "source_line", "context"}``, the
    ``extra`` fields, and ``hint`` when the mistake is a known one."""
    err = {"type": type_, "message": cap(message, MESSAGE_CAP), "line": line,
           "source_line": source_line(code_lines, line), "context": context(code_lines, line)}
    err.update(extra)
    origin = err.get("origin") if isinstance(err.get("origin"), dict) else {}
    try:
        h = hints.hint(type_, err["message"], origin.get("source_line") or err["source_line"],
                       rule=err.get("rule"), text=err.get("text"))
    except BaseException:  # noqa: BLE001 - advice must never cost the error
        h = None
    if h:
        err["hint"] = cap(h, HINT_CAP)
    return err

"""Run one ``execute()`` call inside an already-jailed process, and describe the result.

This module does no confinement of its own: by the time ``run`` is called the
process has all OS layers applied (see ``jail/``). What it adds:

* layers 7-8 when ``python_layers`` is true: ``policy.check`` before compiling,
  and the namespace's ``__builtins__`` from ``safe_builtins.make_builtins``;
* bounded stdout/stderr capture: at most ``max_output_bytes`` (UTF-8) are kept
  for both streams together - the first half (head) and the last half (tail,
  whole lines, in write order across the streams); the middle is counted, not
  stored, and shown in place as ``[... N bytes, L lines not shown ...]``. Memory
  stays bounded whatever is printed. Output written straight to file
  descriptors 1/2 by C code (OCP) is *not* captured here; the supervisor owns
  those descriptors;
* REPL style: a trailing expression statement is evaluated apart and its value
  summarised (``value``);
* what changed: ``objects`` holds only the names the call added or changed
  (``change``: ``added``/``changed``, compared with the summaries after the last
  successful call of this namespace, ``_PREV``), ``deleted`` the names it removed;
* errors reported in terms of the user's code only: exception type, message
  (capped; Python's "Did you mean" suggestion kept), the line of the innermost
  frame of this call with a few numbered source lines around it, the function it
  is in, ``origin`` when the innermost frame is in a function an earlier call
  defined (each call is compiled as ``<execute-N>``, see ``jail/history.py``),
  and a ``hint`` for known mistakes (``jail/hints.py``). No launcher/jail
  frames, paths or tracebacks are returned;
* timeouts that say where: while user code runs, SIGUSR2 makes the process send
  a ``partial`` message (line, function, output so far) through ``send_partial``.
  User code can replace that handler: the launcher depends on none of it;
* ``summarize``: a JSON-safe description of the top-level names (volume, area,
  bbox, validity, topology counts for build123d shapes and builders; a list of
  shapes as one item).

Transactional semantics belong to the caller: after an error the process that
ran the code is discarded, so ``run`` never rolls back the namespace.
Everything returned is built from plain ``str``/``int``/``float``/``bool``/
``None``/``list``/``dict`` so that ``json.dumps`` of it cannot run user code.
"""

from __future__ import annotations

import ast
import builtins as _builtins
import io
import json
import math
import re
import reprlib
import signal
import sys
import time
import types
from typing import Any, Sequence

from jail.cad import hints

from jail.cad import history

from jail.cad import policy
from jail.cad.safe_builtins import make_builtins

__all__ = ["new_namespace", "run", "summarize", "BoundedOutput", "FILENAME"]

FILENAME = "<execute>"
MESSAGE_CAP = 2000
REPR_CAP = 200
SOURCE_LINE_CAP = 500
VALUE_CAP = 1000      # a trailing expression's repr
MARKER_RESERVE = 64   # bytes kept free per stream for its "[... N bytes not shown ...]" line
CONTEXT_LINES = 2     # source lines shown on each side of a failing line


# ---------------------------------------------------------------- namespace


def new_namespace(allowed_imports: Sequence[str], blocked_calls: Sequence[str],
                  python_layers: bool) -> dict:
    """Globals for user code: ``from build123d import *`` already done."""
    if python_layers:
        bt: dict = make_builtins(allowed_imports, blocked_calls)
    else:
        bt = vars(_builtins)  # the real builtins module dict
    ns: dict = {"__builtins__": bt, "__name__": "__main__", "__doc__": None}
    exec(compile("from build123d import *", "<namespace>", "exec"), ns)
    _star_exports()  # computed once here, inherited by every forked child
    return ns


_STAR_CACHE: dict | None = None


def _star_exports() -> dict:
    """name -> object for what ``from build123d import *`` binds."""
    global _STAR_CACHE
    if _STAR_CACHE is None:
        import build123d

        names = getattr(build123d, "__all__", None)
        if names is None:
            names = [n for n in vars(build123d) if not n.startswith("_")]
        _STAR_CACHE = {n: vars(build123d)[n] for n in names if n in vars(build123d)}
    return _STAR_CACHE


# ------------------------------------------------------------------ output


class BoundedOutput:
    """Shared byte budget for stdout+stderr: keeps the first half of ``limit`` bytes (the head)
    and the last half (the tail, in write order across both streams); what falls between is
    counted, not stored, and reported in place as ``[... N bytes (L lines) not shown ...]``."""

    def __init__(self, limit: int):
        self.limit = max(int(limit), 0)
        usable = self.limit - min(2 * MARKER_RESERVE, self.limit // 4)  # room for the markers
        self.head_limit = usable - usable // 2
        self.tail_limit = usable // 2
        self.used = 0                 # head bytes used
        self.tail: list = []          # [stream, text, bytes] chunks, oldest first
        self.tail_used = 0
        self.streams: dict[str, _BoundedStream] = {}

    def stream(self, name: str) -> "_BoundedStream":
        s = _BoundedStream(self, name)
        self.streams[name] = s
        return s

    @property
    def truncated(self) -> bool:
        return any(s.dropped for s in self.streams.values())

    def _to_tail(self, stream: "_BoundedStream", s: str, size: int) -> None:
        cap = self.tail_limit
        if size >= cap:  # this write alone fills the tail
            for st, txt, n in self.tail:
                st._drop(txt, n)
            self.tail.clear()
            self.tail_used = 0
            head, keep = _split_tail(s, cap)
            if head and not head.endswith("\n"):
                head, keep = _to_line_start(head, keep)
            stream._drop(head, size - _utf8_len(keep))
            s, size = keep, _utf8_len(keep)
        last = self.tail[-1] if self.tail else None
        if last is not None and last[0] is stream and not last[1].endswith("\n") and last[2] + size <= cap:
            last[1] += s  # the rest of a line (print writes the text, then "\n"): one chunk per line
            last[2] += size
        else:
            self.tail.append([stream, s, size])
        self.tail_used += size
        while self.tail_used > cap and self.tail:
            first = self.tail[0]
            over = self.tail_used - cap
            if first[2] <= over:
                self.tail.pop(0)
                self.tail_used -= first[2]
                first[0]._drop(first[1], first[2])
            else:
                cut, keep = _split_head(first[1], over)
                if not cut.endswith("\n") and "\n" in keep:  # drop the rest of a cut line too
                    i = keep.index("\n") + 1
                    cut, keep = cut + keep[:i], keep[i:]
                n = _utf8_len(cut)
                first[0]._drop(cut, n)
                first[1], first[2] = keep, first[2] - n
                self.tail_used -= n
                if not keep:
                    self.tail.pop(0)

    def tail_of(self, stream: "_BoundedStream") -> str:
        return "".join(c[1] for c in self.tail if c[0] is stream)


def _utf8_len(s: str) -> int:
    if s.isascii():  # O(1) in CPython
        return len(s)
    return len(s.encode("utf-8", "surrogatepass"))


def _split_head(s: str, nbytes: int) -> tuple[str, str]:
    """(the first ``nbytes`` bytes of ``s``, at a character boundary at or after them; the rest)."""
    if s.isascii():
        return s[:nbytes], s[nbytes:]
    b = s.encode("utf-8", "surrogatepass")
    cut = b[:nbytes].decode("utf-8", "ignore")
    if _utf8_len(cut) < nbytes:  # the character that straddles the cut goes too
        cut = s[:len(cut) + 1]
    return cut, s[len(cut):]


def _to_line_start(cut: str, keep: str) -> tuple[str, str]:
    """Move the cut to the start of the next line of ``keep`` (if one starts inside it)."""
    i = keep.find("\n")
    if 0 <= i < len(keep) - 1:
        return cut + keep[:i + 1], keep[i + 1:]
    return cut, keep


def _split_tail(s: str, nbytes: int) -> tuple[str, str]:
    """(the rest; the last at most ``nbytes`` bytes of ``s``, at a character boundary)."""
    if s.isascii():
        return (s[:-nbytes], s[-nbytes:]) if nbytes else (s, "")
    b = s.encode("utf-8", "surrogatepass")
    keep = b[len(b) - nbytes:].decode("utf-8", "ignore") if nbytes else ""
    return s[:len(s) - len(keep)], keep


class _BoundedStream(io.TextIOBase):
    def __init__(self, owner: BoundedOutput, name: str):
        super().__init__()
        self._owner = owner
        self._name = name
        self._parts: list[str] = []
        self.dropped = 0        # bytes not kept
        self.dropped_lines = 0  # newlines in them

    def _drop(self, s: str, n: int) -> None:
        self.dropped += n
        self.dropped_lines += s.count("\n")

    # text file API used by print() and friends
    @property
    def encoding(self):  # type: ignore[override]
        return "utf-8"

    @property
    def errors(self):  # type: ignore[override]
        return "replace"

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        raise io.UnsupportedOperation("captured output has no file descriptor")

    def flush(self) -> None:
        pass

    def close(self) -> None:  # user code closing sys.stdout must not break capture
        pass

    @property
    def closed(self) -> bool:  # type: ignore[override]
        return False

    def write(self, s) -> int:
        if not isinstance(s, str):
            raise TypeError(f"write() argument must be str, not {type(s).__name__}")
        s = str.__str__(s)  # an exact str: no user methods later
        n = len(s)
        if not n:
            return 0
        o = self._owner
        size = _utf8_len(s)
        room = o.head_limit - o.used
        if room > 0:
            if size <= room:
                self._parts.append(s)
                o.used += size
                return n
            head, s = _split_head(s, room)
            head_n = _utf8_len(head)
            if head_n > room:  # a character straddles the boundary: it goes to the tail
                s, head, head_n = head[-1:] + s, head[:-1], _utf8_len(head[:-1])
            self._parts.append(head)
            o.used += head_n
            size -= head_n
            o.used = max(o.used, o.head_limit)  # the head is closed from now on
        if o.tail_limit <= 0:
            self._drop(s, size)
        else:
            o._to_tail(self, s, size)
        return n

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def getvalue(self) -> str:
        text = "".join(self._parts)
        if self.dropped:
            if text and not text.endswith("\n"):
                text += "\n"
            lines = f", {self.dropped_lines} line{'s' if self.dropped_lines != 1 else ''}" \
                if self.dropped_lines else ""
            text += f"[... {self.dropped} bytes{lines} not shown ...]\n"
        text += self._owner.tail_of(self)
        # lone surrogates cannot go into JSON as UTF-8
        return text.encode("utf-8", "replace").decode("utf-8") if not text.isascii() else text


# ------------------------------------------------------------------ errors


def _cap(s: str, cap: int) -> str:
    return s if len(s) <= cap else s[: cap - 3] + "..."


def _safe_str(obj: Any, cap: int = MESSAGE_CAP) -> str:
    """str(obj) that never raises and always returns an exact, capped str."""
    try:
        s = str(obj)
        if not isinstance(s, str):
            raise TypeError
        s = str.__str__(s)
    except BaseException:  # noqa: BLE001 - user __str__ may raise anything
        try:
            s = f"<unprintable {type(obj).__name__}>"
            s = str.__str__(s)
        except BaseException:  # noqa: BLE001
            s = "<unprintable>"
    return _cap(s, cap)


def _type_name(obj: Any) -> str:
    try:
        n = type.__dict__["__name__"].__get__(type(obj))  # not a metaclass override
        return _cap(str.__str__(n), 200)
    except BaseException:  # noqa: BLE001
        return "object"


def _source_line(code_lines: list[str], line: int | None) -> str | None:
    if line is None or not (1 <= line <= len(code_lines)):
        return None
    return _cap(code_lines[line - 1].strip(), SOURCE_LINE_CAP)


def _context(code_lines: list[str], line: int | None, around: int = CONTEXT_LINES) -> list[str]:
    """``["  3 | x = 1", "> 4 | y = 1/0", ...]``: a few numbered lines around ``line``."""
    if line is None or not (1 <= line <= len(code_lines)) or len(code_lines) < 2:
        return []
    lo, hi = max(1, line - around), min(len(code_lines), line + around)
    w = len(str(hi))
    return [f"{'>' if n == line else ' '} {n:>{w}} | {_cap(code_lines[n - 1].rstrip(), SOURCE_LINE_CAP)}"
            for n in range(lo, hi + 1)]


def _frame_name(code) -> str:
    try:
        n = code.co_name
        return _cap(str.__str__(n), 100) if type(n) is str else "?"
    except BaseException:  # noqa: BLE001
        return "?"


def _user_frames_tb(exc: BaseException) -> list[tuple[int, int, str]]:
    """``(call_no, line, function)`` of each traceback frame running session code, outermost first."""
    out: list[tuple[int, int, str]] = []
    try:
        tb = exc.__traceback__
        n = 0
        while tb is not None and n < 10000:
            code = tb.tb_frame.f_code
            call = history.call_no_of(code.co_filename)
            if call is not None and type(tb.tb_lineno) is int:
                out.append((call, tb.tb_lineno, _frame_name(code)))
            tb = tb.tb_next
            n += 1
    except BaseException:  # noqa: BLE001
        pass
    return out


def _user_frames_stack(frame) -> list[tuple[int, int, str]]:
    """The same for a live stack (innermost ``frame`` first walked up), outermost first."""
    out: list[tuple[int, int, str]] = []
    try:
        n = 0
        while frame is not None and n < 10000:
            code = frame.f_code
            call = history.call_no_of(code.co_filename)
            if call is not None and type(frame.f_lineno) is int:
                out.append((call, frame.f_lineno, _frame_name(code)))
            frame = frame.f_back
            n += 1
    except BaseException:  # noqa: BLE001
        pass
    out.reverse()
    return out


def _where(frames: list[tuple[int, int, str]], call_no: int,
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
        origin = {"call": c, "line": ln, "function": fn, "source_line": _source_line(lines, ln),
                  "context": _context(lines, ln)}
    return line, origin, func


_DYM = re.compile(r"\. (Did you mean: .{1,200}\?)\Z")


def _did_you_mean(exc: BaseException) -> str | None:
    """Python's own "Did you mean: 'Cylinder'?" for NameError/AttributeError/ImportError. In 3.11
    it is not part of ``str(exc)``: CPython computes it while printing the exception, so print
    it (innermost frame only) into a buffer and take the suggestion from the last line."""
    if type(exc) not in (NameError, AttributeError, ImportError):
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


def _error(type_: str, message: str, line: int | None, code_lines: list[str], **extra) -> dict:
    err = {"type": type_, "message": _cap(message, MESSAGE_CAP), "line": line,
           "source_line": _source_line(code_lines, line), "context": _context(code_lines, line)}
    err.update(extra)
    origin = err.get("origin") if isinstance(err.get("origin"), dict) else {}
    try:
        h = hints.hint(type_, err["message"], origin.get("source_line") or err["source_line"],
                       rule=err.get("rule"), text=err.get("text"))
    except BaseException:  # noqa: BLE001 - advice must never cost the error
        h = None
    if h:
        err["hint"] = _cap(h, 600)
    return err


# --------------------------------------------------------------------- partial replies
# Shortly before the hard limit the launcher sends SIGUSR2 to the next running a call; this
# handler answers with where the user code is and the output so far. It runs in the user's
# process: user code can replace or lie through it, and the launcher depends on none of it
# (it SIGKILLs at the limit either way and labels the partial reply as the session's report).
_PARTIAL: dict = {"active": False, "send": None, "out": None, "call": 0, "lines": [],
                  "stdout": None, "stderr": None}


def _on_sigusr2(signum, frame) -> None:
    st = _PARTIAL
    if not st["active"] or st["send"] is None:
        return
    st["active"] = False  # one answer per call
    try:
        frames = _user_frames_stack(frame)
        line, origin, func = _where(frames, st["call"], st["lines"])
        msg = {"t": "partial", "stdout": st["stdout"].getvalue(), "stderr": st["stderr"].getvalue(),
               "line": line, "function": func, "source_line": _source_line(st["lines"], line),
               "context": _context(st["lines"], line), "origin": origin}
        st["send"](msg)
    except BaseException:  # noqa: BLE001 - never disturb the user's code from a signal handler
        pass


def _arm_partial(send, out, stdout, stderr, call_no: int, code_lines: list[str]) -> None:
    if send is None:
        return
    _PARTIAL.update(send=send, out=out, stdout=stdout, stderr=stderr, call=call_no, lines=code_lines)
    try:
        signal.signal(signal.SIGUSR2, _on_sigusr2)
    except (ValueError, OSError):  # not the main thread (tests): no partial replies
        return
    _PARTIAL["active"] = True


def _disarm_partial() -> None:
    _PARTIAL["active"] = False
    _PARTIAL.update(send=None, out=None, stdout=None, stderr=None)


# --------------------------------------------------------------------- warm


def warm(namespace: dict, *, python_layers: bool, allowed_imports: Sequence[str],
         blocked_calls: Sequence[str], max_output_bytes: int) -> None:
    """Pay, in a freshly forked next that waits for its command, the copy-on-write page faults
    that the call would pay anyway: CPython writes the reference count of every object it
    touches, and each first write to a page shared with the head copies it (~330 faults,
    ~0.8 ms for a trivial call). Touches what ``run`` touches: every namespace value's header
    (``summarize`` walks them all), the policy checker, the compiler, the output buffers and
    the JSON encoder.

    Runs no user code: no exec, no repr, no property or ``__class__`` lookup — only ``type()``
    of each value, which reads the object's type pointer.
    """
    for _name, value in list(namespace.items()):
        type(value)
    if python_layers:
        try:
            policy.check("x = 1\n", allowed_imports, blocked_calls)
        except policy.PolicyError:
            pass
    compile(ast.parse("x = 1\n"), FILENAME, "exec", dont_inherit=True)
    out = BoundedOutput(max_output_bytes)
    out.stream("stdout").write("")
    json.dumps({"ok": True, "stdout": "", "objects": [{"name": "x", "kind": "number", "repr": "1"}]})


# --------------------------------------------------------------------- run

# What the session's names looked like after the last successful call of this state: name ->
# (id of the value, its summary). Inherited by every fork, so a promoted next diffs against
# its head, and a snapshot/restore/reset keeps its own copy (like the namespace itself).
# Held with the namespace it describes (another namespace, e.g. in tests: everything is new).
_PREV: dict[str, tuple[int, dict]] = {}
_PREV_NS: dict | None = None


def _changes(namespace: dict, objects: list[dict], ids: dict[str, int]) -> tuple[list[dict], list[str]]:
    """(summaries of the names this call added or changed, each with ``change``; deleted names)."""
    global _PREV, _PREV_NS
    if _PREV_NS is not namespace:
        _PREV, _PREV_NS = {}, namespace
    cur: dict[str, tuple[int, dict]] = {}
    changed: list[dict] = []
    for o in objects:
        name = o.get("name")
        if o.get("kind") == "omitted" or type(name) is not str:
            continue
        cur[name] = (ids.get(name, 0), o)
        prev = _PREV.get(name)
        if prev is None:
            changed.append({**o, "change": "added"})
        elif prev[0] != ids.get(name, 0) or prev[1] != o:
            changed.append({**o, "change": "changed"})
    deleted = [n for n in _PREV if n not in cur and not _in_omitted(objects)]
    omitted = [o for o in objects if o.get("kind") == "omitted"]
    _PREV = cur
    return changed + omitted, deleted


def remember(namespace: dict) -> None:
    """Take the namespace as it is now as the state the next call's changes are measured against
    (for a transaction op other than execute that binds names, e.g. import_file)."""
    ids: dict[str, int] = {}
    _changes(namespace, summarize(namespace, ids=ids), ids)


def _in_omitted(objects: list[dict]) -> bool:
    return bool(objects) and objects[-1].get("kind") == "omitted"


def _value_summary(value: Any) -> dict | None:
    """The trailing expression's value, REPL style (None: nothing to show)."""
    if value is None:
        return None
    try:
        shape_cls, builders = _b3d_types()
    except Exception:  # noqa: BLE001
        shape_cls, builders = None, {}
    out: dict = {"type": _type_name(value)}
    try:
        out.update(_summarize_value(value, shape_cls, builders))
    except BaseException as e:  # noqa: BLE001
        out["summary_error"] = f"{_type_name(e)}: {_safe_str(e, REPR_CAP)}"
    if out.get("kind") in ("number", "str", "bool", "bytes", "object", "sequence", "mapping", "set", "array"):
        out["repr"] = _cap(_safe_str(_value_repr.repr(value)), VALUE_CAP)
    return out


def run(code: str, namespace: dict, *, python_layers: bool, allowed_imports: Sequence[str],
        blocked_calls: Sequence[str], max_output_bytes: int, send_partial=None) -> dict:
    """Check (optionally), compile and exec ``code`` in ``namespace``.

    ``python_layers`` switches the AST policy (layer 7) only; the builtins
    (layer 8) are whatever ``new_namespace`` put in the namespace. The code is
    compiled with the filename ``<execute-N>`` (N: this call's number in
    ``jail.cad.history``) and, on success, recorded there.

    Returns ``{"ok", "stdout", "stderr", "truncated", "error", "objects",
    "deleted", "value", "call", "duration_ms"}``; ``error`` is None or
    ``{"type", "message", "line", "source_line", "context"}`` plus ``"col"``
    for syntax/policy errors, ``"rule"``/``"text"`` for policy errors, ``"hint"``
    for known mistakes and ``"origin"`` when the innermost frame is in a function
    (``{"call", "line", "function", "source_line", "context"}``). ``objects`` are
    the summaries of the names this call added or changed (``change``), on
    success only; ``deleted`` the names it removed; ``value`` the summary of a
    trailing expression's value (REPL style) or None.

    ``send_partial(msg)``, when given, is called from a SIGUSR2 handler with
    ``{"t": "partial", "stdout", "stderr", "line", ...}`` (where the code is).
    """
    t0 = time.perf_counter()
    code_lines = code.splitlines() if isinstance(code, str) else []
    out = BoundedOutput(max_output_bytes)
    stdout, stderr = out.stream("stdout"), out.stream("stderr")
    error: dict | None = None
    objects: list = []
    deleted: list = []
    value: dict | None = None
    call_no = history.next_call_no()

    def result() -> dict:
        return {
            "ok": error is None,
            "stdout": stdout.getvalue(),
            "stderr": stderr.getvalue(),
            "truncated": out.truncated,
            "error": error,
            "objects": objects,
            "deleted": deleted,
            "value": value,
            "call": call_no,
            "duration_ms": round((time.perf_counter() - t0) * 1000.0, 3),
        }

    if not isinstance(code, str):
        error = _error("TypeError", "code must be a string", None, code_lines)
        return result()

    if python_layers:
        try:
            policy.check(code, allowed_imports, blocked_calls)
        except policy.PolicyError as e:
            if e.rule == "syntax":
                error = _error("SyntaxError", e.reason.removeprefix("syntax error: "), e.line,
                               code_lines, col=e.col)
            else:
                error = _error("PolicyError", str(e), e.line, code_lines, col=e.col, rule=e.rule,
                               text=e.text)
            return result()

    fname = history.filename(call_no)
    try:
        tree = ast.parse(code, fname)
        trailing = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            trailing = compile(ast.Expression(tree.body.pop().value), fname, "eval", dont_inherit=True)
        code_obj = compile(tree, fname, "exec", dont_inherit=True)
    except SyntaxError as e:
        line = e.lineno if isinstance(e.lineno, int) else None
        col = max((e.offset or 1) - 1, 0) if isinstance(e.offset, int) else None
        error = _error(_type_name(e), _safe_str(e.msg or "invalid syntax"), line, code_lines, col=col)
        return result()
    except (ValueError, RecursionError, MemoryError) as e:
        error = _error(_type_name(e), _safe_str(e) or "code could not be compiled", None, code_lines)
        return result()

    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = stdout, stderr
    _arm_partial(send_partial, out, stdout, stderr, call_no, code_lines)
    try:
        try:
            exec(code_obj, namespace)
            if trailing is not None:
                v = eval(trailing, namespace)
                value = _value_summary(v)
                v = None
        except BaseException as e:  # noqa: BLE001 - SystemExit/KeyboardInterrupt included
            line, origin, func = _where(_user_frames_tb(e), call_no, code_lines)
            msg = _safe_str(e)
            dym = _did_you_mean(e)
            if dym and "Did you mean" not in msg:
                msg = f"{msg}. {dym}"
            extra = {"origin": origin} if origin else {}
            if func:
                extra["function"] = func
            error = _error(_type_name(e), msg, line, code_lines, **extra)
            e = None  # noqa: F841 - drop the traceback's frames
        if error is None:
            try:
                ids: dict[str, int] = {}
                objects, deleted = _changes(namespace, summarize(namespace, ids=ids), ids)
            except BaseException as e:  # noqa: BLE001
                objects = [{"name": "(summary)", "type": "error", "kind": "error",
                            "summary_error": _safe_str(e, REPR_CAP)}]
    finally:
        _disarm_partial()
        sys.stdout, sys.stderr = saved
    if error is None:
        history.record(code)
        try:
            note = hints.success_note(code)
        except BaseException:  # noqa: BLE001
            note = None
        if note:
            out_note = _cap(note, 600)
            r = result()
            r["note"] = out_note
            return r
    return result()


# --------------------------------------------------------------- summarize

_repr = reprlib.Repr()
_repr.maxstring = REPR_CAP
_repr.maxother = REPR_CAP
_repr.maxlist = _repr.maxtuple = _repr.maxdict = _repr.maxset = _repr.maxfrozenset = 8
_repr.maxlevel = 3

_value_repr = reprlib.Repr()  # a trailing expression's value: more of it than a name's summary
_value_repr.maxstring = _value_repr.maxother = VALUE_CAP
_value_repr.maxlist = _value_repr.maxtuple = _value_repr.maxdict = _value_repr.maxset = 30
_value_repr.maxfrozenset = 30
_value_repr.maxlevel = 4


def _num(x: Any) -> float | None:
    try:
        f = float(x)
    except BaseException:  # noqa: BLE001
        return None
    return f if math.isfinite(f) else None


def _vec(v: Any) -> list:
    return [_num(v.X), _num(v.Y), _num(v.Z)]


def _b3d_types():
    import build123d as b

    shape = getattr(b, "Shape", None)
    if shape is None:  # pragma: no cover - older layouts
        from build123d.topology import Shape as shape  # type: ignore[no-redef]
    builders = {}
    for cls, attr in (("BuildPart", "part"), ("BuildSketch", "sketch"), ("BuildLine", "line")):
        c = getattr(b, cls, None)
        if c is not None:
            builders[c] = attr
    return shape, builders


# Shape summaries survive from call to call (the dict is inherited by every fork): a
# 1000-solid compound is validated once, not on every execute. Keyed by the object's
# identity *and* its OCCT shape hash (TShape + Location), so a moved or rebuilt shape
# is measured again. Each entry holds the shape itself, so an id cannot be reused while
# the entry exists; entries of shapes no longer bound to a name are dropped each call.
_SHAPE_CACHE: dict = {}
_shape_cache_next: dict = {}


def _shape_key(shape: Any):
    try:
        return (id(shape), type(shape), hash(shape.wrapped))
    except Exception:  # noqa: BLE001
        return None


def _shape_summary(shape: Any) -> dict:
    key = _shape_key(shape)
    if key is not None and key in _SHAPE_CACHE:
        _shape_cache_next[key] = _SHAPE_CACHE[key]
        return dict(_SHAPE_CACHE[key][1])
    d = _measure_shape(shape)
    if key is not None:
        _shape_cache_next[key] = (shape, d)
    return dict(d)


def _measure_shape(shape: Any) -> dict:
    d: dict = {}
    solids = len(shape.solids())
    faces = len(shape.faces())
    edges = shape.edges()
    d["counts"] = {"solids": solids, "faces": faces, "edges": len(edges)}
    if solids:
        d["volume"] = _num(shape.volume)
    elif faces:
        d["area"] = _num(shape.area)
    elif edges:
        d["length"] = _num(sum(e.length for e in edges))
    bb = shape.bounding_box()
    d["bbox"] = {"min": _vec(bb.min), "max": _vec(bb.max), "size": _vec(bb.size)}
    valid = shape.is_valid
    if callable(valid):  # a method in older build123d
        valid = valid()
    d["valid"] = bool(valid)
    return d


def _summarize_value(value: Any, shape_cls, builders: dict) -> dict:
    tp = type(value)
    if tp in (bytes, bytearray, memoryview):
        # reprlib would build the whole repr first (a 200 MB bytearray -> an 800 MB string)
        head = bytes(value[:48])
        more = "" if len(value) <= 48 else f"... ({len(value)} bytes)"
        return {"kind": "bytes", "length": len(value), "repr": _cap(_safe_str(repr(head)) + more, REPR_CAP + 40)}
    if tp is int and value.bit_length() > 4 * REPR_CAP:
        return {"kind": "number", "repr": f"<int of {value.bit_length()} bits>"}
    if value is None or tp in (bool, int, float, complex, str):
        kind = {type(None): "none", bool: "bool", int: "number", float: "number",
                complex: "number", str: "str"}[tp]
        return {"kind": kind, "repr": _cap(_repr.repr(value), REPR_CAP)}
    if shape_cls is not None and isinstance(value, shape_cls):
        return {"kind": "shape", **_shape_summary(value)}
    for bcls, attr in builders.items():
        if isinstance(value, bcls):
            obj = getattr(value, attr)
            d: dict = {"kind": "builder", "of": attr}
            if obj is None:
                d["empty"] = True
            else:
                d.update(_shape_summary(obj))
            return d
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, types.MethodType,
                          types.LambdaType)):
        return {"kind": "function"}
    if isinstance(value, type):
        return {"kind": "class"}
    if isinstance(value, (list, tuple)) and shape_cls is not None and value:
        coll = _shape_collection(value, shape_cls)
        if coll is not None:
            return coll
    if isinstance(value, (list, tuple, dict, set, frozenset)):
        kind = "mapping" if isinstance(value, dict) else "set" if isinstance(value, (set, frozenset)) \
            else "sequence"
        return {"kind": kind, "length": len(value), "repr": _cap(_safe_str(_repr.repr(value)), REPR_CAP)}
    np = sys.modules.get("numpy")
    if np is not None:
        if isinstance(value, np.ndarray):
            return {"kind": "array", "shape": [int(n) for n in value.shape],
                    "dtype": _safe_str(value.dtype, 50),
                    "repr": _cap(_safe_str(_repr.repr(value)), REPR_CAP)}
        if isinstance(value, np.generic):
            return {"kind": "number", "repr": _cap(_safe_str(repr(value.item())), REPR_CAP)}
    return {"kind": "object", "repr": _cap(_safe_str(_repr.repr(value)), REPR_CAP)}


COLLECTION_MEASURE_MAX = 100  # shapes in a list measured one by one (more: counted by type only)


def _shape_collection(value, shape_cls) -> dict | None:
    """A list/tuple of build123d shapes as one item: ``list of 50 Box, total volume 1275, bbox ...``
    (``kind: "shapes"``, ``length``, ``of`` = type counts, total ``volume``/``area``/``length`` and
    the overall ``bbox``). None when an element is not a shape."""
    n = len(value)
    if n > 100_000:
        return None
    types_: dict[str, int] = {}
    for v in value:
        if not isinstance(v, shape_cls):
            return None
        t = _type_name(v)
        types_[t] = types_.get(t, 0) + 1
    d: dict = {"kind": "shapes", "length": n,
               "of": ", ".join(f"{c} {t}" for t, c in sorted(types_.items(), key=lambda kv: -kv[1])[:6])}
    if n > COLLECTION_MEASURE_MAX:
        return d
    vol = area = 0.0
    lo = [math.inf] * 3
    hi = [-math.inf] * 3
    for v in value:  # volume (else area) and bounding box only: ~0.5 ms a shape
        x = _num(v.volume)
        if x:
            vol += x
        else:
            area += _num(v.area) or 0.0
        bb = v.bounding_box()
        mn, mx = _vec(bb.min), _vec(bb.max)
        for i in range(3):
            if mn[i] is not None and mx[i] is not None:
                lo[i], hi[i] = min(lo[i], mn[i]), max(hi[i], mx[i])
    if vol:
        d["volume"] = _num(vol)
    elif area:
        d["area"] = _num(area)
    if all(math.isfinite(x) for x in lo + hi):
        d["bbox"] = {"min": lo, "max": hi, "size": [h - l for l, h in zip(lo, hi)]}
    return d


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def summarize(namespace: dict, *, max_items: int = 200, ids: dict | None = None) -> list[dict]:
    """Describe the user's top-level names (JSON-safe).

    Skipped: dunders, ``_``, modules, names bound to the very builtin of that
    name, and names that still hold what ``from build123d import *`` bound.
    Each item is ``{"name", "type", "kind", ...}`` where kind is one of
    ``shape`` / ``builder`` (+ ``counts``, ``bbox``, ``valid``, and ``volume``
    for solids, else ``area`` for faces, else ``length`` for edges; a builder
    has ``of`` and maybe ``empty``), ``number``/``str``/``bool``/``none``/
    ``bytes``/``object`` (+ ``repr``), ``sequence``/``mapping``/``set``
    (+ ``length``, ``repr``), ``array`` (+ ``shape``, ``dtype``, ``repr``),
    ``function``, ``class``. A value that fails to summarise gets
    ``summary_error`` instead. Past ``max_items`` a last item
    ``{"name": "...", "type": "", "kind": "omitted", "count": N}`` says how many
    were left out.
    """
    star = _star_exports()
    real_builtins = vars(_builtins)
    try:
        shape_cls, builders = _b3d_types()
    except Exception:  # noqa: BLE001
        shape_cls, builders = None, {}
    items: list[dict] = []
    omitted = 0
    cache: dict[int, dict] = {}
    for name in list(namespace.keys()):
        if not isinstance(name, str) or _is_dunder(name) or name == "_":
            continue
        try:
            value = namespace[name]
        except BaseException:  # noqa: BLE001
            continue
        if isinstance(value, types.ModuleType):
            continue
        if name in star and star[name] is value:
            continue
        if name in real_builtins and real_builtins[name] is value:
            continue
        if len(items) >= max_items:
            omitted += 1
            continue
        item: dict = {"name": _cap(str.__str__(name), REPR_CAP), "type": _type_name(value)}
        if ids is not None:
            ids[item["name"]] = id(value)
        try:
            key = id(value)
            if key not in cache:
                cache[key] = _summarize_value(value, shape_cls, builders)
            item.update(cache[key])
        except BaseException as e:  # noqa: BLE001 - user properties may raise anything
            item["summary_error"] = f"{_type_name(e)}: {_safe_str(e, REPR_CAP)}"
        items.append(item)
    if omitted:
        items.append({"name": "...", "type": "", "kind": "omitted", "count": omitted})
    global _SHAPE_CACHE, _shape_cache_next
    _SHAPE_CACHE, _shape_cache_next = _shape_cache_next, {}
    return items

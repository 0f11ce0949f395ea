"""Run one ``execute()`` call inside an already-jailed process, and describe the result.

No confinement of its own: by the time ``run`` is called the process has every OS layer applied.
What it adds: layer 7 (``policy.check`` before compiling, when ``python_layers`` is on; layer 8,
the filtered builtins, is put in the namespace by ``new_namespace``); bounded output capture
(``capture``); REPL style, a trailing expression's value summarised; the names the call added,
changed or deleted (``changes``, ``summary``); errors in terms of the user's code only
(``error_report``); a ``partial`` reply on SIGUSR2 (``partial``).

Transactional semantics belong to the caller: after an error the process that ran the code is
discarded, so ``run`` never rolls back the namespace. Everything returned is plain JSON data, so
``json.dumps`` of it cannot run user code.
"""

from __future__ import annotations

import ast
import builtins as _builtins
import json
import sys
import time
from typing import Callable, Sequence

from jail.cad import changes, error_report, hints, history, partial, policy, summary, warmup
from jail.cad.capture import BoundedOutput
from jail.cad.names import cap, note_served, safe_str, star_exports, type_name
from jail.cad.safe_builtins import make_builtins
from jail.cad.shims.record import take_count as shown_count  # importing jail.cad.shims serves ocp_vscode
from jail.wire.caps import HINT_CAP, REPR_CAP

__all__ = ["new_namespace", "warm", "run"]

FILENAME = "<execute>"   # the filename warm() compiles with (calls use history.filename(N))
SCRIPT = "/scratch/script.py"  # the code's __file__: a name in the scratch directory (not a file)


def new_namespace(allowed_imports: Sequence[str], blocked_calls: Sequence[str],
                  python_layers: bool) -> dict:
    """Globals for user code: ``from build123d import *`` already done."""
    import build123d  # noqa: F401 - loaded before the views are made: they serve its stand-ins
    if python_layers:
        bt: dict = make_builtins(allowed_imports, blocked_calls)
    else:
        bt = vars(_builtins)  # the real builtins module dict
    ns: dict = {"__builtins__": bt, "__name__": "__main__", "__doc__": None}
    exec(compile("from build123d import *", "<namespace>", "exec"), ns)
    star_exports()  # computed once here, inherited by every forked child
    note_served(ns)
    return ns


def warm(namespace: dict, *, python_layers: bool, allowed_imports: Sequence[str],
         blocked_calls: Sequence[str], max_output_bytes: int) -> None:
    """Pay, in a freshly forked next that waits for its command, the copy-on-write page faults
    that the call would pay anyway: CPython writes the reference count of every object it
    touches, and each first write to a page shared with the head copies it. Touches what ``run``
    touches: every namespace value's header (``summarize`` walks them all), the policy checker,
    the compiler, the output buffers and the JSON encoder.

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


def warm_idle(namespace: dict, stop: Callable[[], bool] = lambda: False, *, cad: bool = True,
              **policy) -> None:
    """``warm``, then, for a process that has been idle, the pages its call will write first
    (jail/cad/warmup.py, in an empty context, under a CPU budget, stopping between steps once
    ``stop()`` says a request is waiting): with ``cad`` (the next, which runs the execute) a small part
    built and measured; without (a spare, for read-only calls) an 800x600 render of a small part, then
    the session's default view meshed ahead of a ``render`` (jail/cad/render_premesh.py). A
    small part's first run in a freshly forked process took twice as long as in one that had done
    such work. Only in a session whose names hold a shape or builder (``warmup.holds_cad``)."""
    warm(namespace, **policy)
    if not warmup.holds_cad(namespace):
        return
    if cad:
        warmup.warm_cad(stop)
    else:
        warmup.warm_read_only(stop, namespace)


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
            "shown": shown_count(),  # objects passed to ocp_vscode.show() in this call
            "duration_ms": round((time.perf_counter() - t0) * 1000.0, 3),
        }

    if not isinstance(code, str):
        error = error_report.error("TypeError", "code must be a string", None, code_lines)
        return result()

    if python_layers:
        try:
            policy.check(code, allowed_imports, blocked_calls)
        except policy.PolicyError as e:
            if e.rule == "syntax":
                error = error_report.error("SyntaxError", e.reason.removeprefix("syntax error: "), e.line,
                                           code_lines, col=e.col)
            else:
                error = error_report.error("PolicyError", str(e), e.line, code_lines, col=e.col, rule=e.rule,
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
        error = error_report.error(type_name(e), safe_str(e.msg or "invalid syntax"), line, code_lines,
                                   col=col)
        return result()
    except (ValueError, RecursionError, MemoryError) as e:
        error = error_report.error(type_name(e), safe_str(e) or "code could not be compiled", None,
                                   code_lines)
        return result()

    namespace["__file__"] = SCRIPT
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = stdout, stderr
    partial.arm(send_partial, out, stdout, stderr, call_no, code_lines)
    try:
        try:
            exec(code_obj, namespace)
            if trailing is not None:
                v = eval(trailing, namespace)
                value = summary.value_summary(v)
                v = None
        except BaseException as e:  # noqa: BLE001 - SystemExit/KeyboardInterrupt included
            line, origin, func = error_report.where(error_report.user_frames_tb(e), call_no, code_lines)
            msg = safe_str(e)
            dym = error_report.did_you_mean(e)
            if dym and "Did you mean" not in msg:
                msg = f"{msg}. {dym}"
            extra = {"origin": origin} if origin else {}
            if func:
                extra["function"] = func
            error = error_report.error(type_name(e), msg, line, code_lines, **extra)
            e = None  # noqa: F841 - drop the traceback's frames
        if error is None:
            try:
                ids: dict[str, int] = {}
                # its own budget, stopped by the launcher's near-the-limit signal: never fails the call
                objs = summary.summarize(namespace, ids=ids, budget_s=summary.SUMMARY_BUDGET_S,
                                         stop=partial.near_limit)
                objects, deleted = changes.diff(namespace, objs, ids)
            except BaseException as e:  # noqa: BLE001
                objects = [{"name": "(summary)", "type": "error", "kind": "error",
                            "summary_error": safe_str(e, REPR_CAP)}]
    finally:
        partial.disarm()
        sys.stdout, sys.stderr = saved
    if error is None:
        history.record(code)
        try:
            note = hints.success_note(code)
        except BaseException:  # noqa: BLE001
            note = None
        if note:
            out_note = cap(note, HINT_CAP)
            r = result()
            r["note"] = out_note
            return r
    return result()


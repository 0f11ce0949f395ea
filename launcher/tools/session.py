"""The session tools: ``execute``, ``session_state``, ``last_error``, ``reset``.

Thin: each handler calls the :class:`~launcher.session.Session` (which jails, times and
checks every call) and each renderer formats the checked result (text.py). A failed call's hint
and a successful call's note are the launcher's own sentences (launcher/replies/hints.py).
"""
from __future__ import annotations

from launcher.files import delivery, shipped
from launcher.replies import hints as launcher_hints
from launcher.tools import content, show, text
from launcher.tools.tool import Tool, hints


# ------------------------------------------------------------------ execute
def execute(ctx, session, code, timeout_s=None, show_images=True) -> dict:
    """Run ``code`` with the offered input files it names (shipped.py); on success deliver the
    files it wrote to the output directory (delivery.py) and, when it called ``show()``, attach
    the picture (show.py). A failed call delivers nothing."""
    with shipped.sending(ctx, code) as (request, blob, sent):
        with session.lock:  # the files read below are this call's
            result = session.execute(code, timeout_s, request=request, blob=blob)
            written, session.calls.written = session.calls.written, None
            if result.get("ok") is not True:
                _launcher_hint(ctx, session, result)
            else:
                launcher_hints.noted(result, code, getattr(ctx, "profile", None))
    if sent is not None:
        result["inputs"] = sent
    if result.get("ok") is True and written:
        result["files"] = delivery.deliver(ctx, written)
    return show.attach(session, result, show_images)  # last: show() in the code: its picture


def _launcher_hint(ctx, session, result: dict) -> None:
    """The failed call's hint (in the reply and in last_error) in the launcher's words (replies/hints.py)."""
    profile = getattr(ctx, "profile", None)
    result["error"] = launcher_hints.reworded(result.get("error"), profile)
    if isinstance(session.calls.last_error, dict):
        session.calls.last_error = launcher_hints.reworded(session.calls.last_error, profile)


def execute_content(result: dict) -> list[dict]:
    extra = shipped.lines(result.get("inputs")) + delivery.lines(result.get("files"))
    note = show.note_line(result)
    lines = [text.execute_text(result), *extra] + ([note] if note else [])
    return [content.text("\n".join(lines))] + show.blocks(result)


EXECUTE = Tool(
    "execute", "Run build123d code",
    "Run build123d Python code in the persistent session. Top-level names persist between calls; "
    "`from build123d import *` is pre-loaded. Allowed imports: {allowed_imports} (nothing else: no "
    "subprocess, socket; os and pathlib, where allowed, see only the call's scratch directory). The code "
    "has no network and no GUI: ocp_vscode's show()/show_object() (where allowed) add a picture of what "
    "they show to the reply, render draws the model from any view, session_state/measure/features inspect "
    "objects, import_file reads the input directory and export writes files. Files the code writes (export_step(part, 'p.step')) go to a private "
    "scratch directory; when the call succeeds, those in an export format are re-checked and delivered to "
    "the output directory under export's rules (never over a file this server did not write) and listed "
    "in the reply; a failed call delivers nothing. Files list_inputs offers that the code names in a string "
    "literal ('logo.svg', 'parts/a.step') are readable by that name. Limits per call: {timeout_s} s wall clock, "
    "{max_code_bytes} bytes of code, {max_output_bytes} bytes of stdout+stderr kept (head and tail). Returns "
    "stdout/stderr, the value of a trailing expression (REPL style: end with `part.volume`), and a summary "
    "(type, volume, bounding box) of only the names the call added (+), changed (~) or deleted (-) "
    "(session_state lists all); or the error with its line, the source around it and a hint for known "
    "mistakes. A call that raises, times out or crashes leaves the session exactly as it was; a timeout says "
    "which line was running.",
    params={
        "code": {"type": "string", "description": "Python source to run in the session (build123d API)."},
        "timeout_s": {"type": "number", "exclusiveMinimum": 0,
                      "description": "Optional: this call's wall-clock limit in seconds: {timeout_s} s when not "
                                     "given, at most {max_timeout_s} s (the profile's max_timeout_s)."},
        "show_images": {"type": "boolean", "default": True,
                        "description": "Optional (default true): when the code calls ocp_vscode's show() or "
                                       "show_object(), add one rendered PNG of what it displayed to the reply."},
    },
    required=("code",), handler=execute, renderer=execute_content, changes_session=True,
    # rebinding or deleting names is a destructive update; the same code twice runs twice
    annotations=hints(read_only=False, destructive=True, idempotent=False, open_world=False))


# ------------------------------------------------------------------ session_state
def session_state(ctx, session) -> dict:
    return {"objects": session.state()}


def session_state_content(result: dict) -> list[dict]:
    return [content.text("objects:\n" + text.state_text(result.get("objects")))]


SESSION_STATE = Tool(
    "session_state", "Session objects",
    "List the session's top-level names: type, volume, bounding box, validity.",
    params={}, handler=session_state, renderer=session_state_content, changes_session=False,
    annotations=hints(read_only=True, destructive=False, idempotent=True, open_world=False))


# ------------------------------------------------------------------ last_error
def last_error(ctx, session) -> dict:
    return {"last_error": session.last_error}


def last_error_content(result: dict) -> list[dict]:
    e = result.get("last_error")
    if not e:
        return [content.text("No error in this session yet.")]
    return [content.text("\n".join(text.error_lines(e, outcome_note=False)))]


LAST_ERROR = Tool(
    "last_error", "Last error",
    "The last error in this session: type, message, line and source line.",
    params={}, handler=last_error, renderer=last_error_content, changes_session=False,
    annotations=hints(read_only=True, destructive=False, idempotent=True, open_world=False))


# ------------------------------------------------------------------ reset
def reset(ctx, _session) -> dict:
    ctx.drop_session()
    return ctx.with_session(lambda s: {"reset": True, "session": s.id})


def reset_content(result: dict) -> list[dict]:
    return [content.text(text.reset_text(result))]


RESET = Tool(
    "reset", "Reset session",
    "Discard the session and start a new, empty one (its snapshots are discarded too).",
    params={}, handler=reset, renderer=reset_content, needs_session=False, changes_session=True,
    # a second reset discards an empty session for another empty one: nothing more is lost
    annotations=hints(read_only=False, destructive=True, idempotent=True, open_world=False))

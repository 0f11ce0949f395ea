"""The session tools: ``execute``, ``session_state``, ``last_error``, ``reset``.

Thin: each handler calls the :class:`~launcher.session.Session` (which jails, times and
checks every call) and each renderer formats the checked result (text.py).
"""
from __future__ import annotations

from launcher.tools import content, text
from launcher.tools.tool import Tool, hints


# ------------------------------------------------------------------ execute
def execute(ctx, session, code, timeout_s=None) -> dict:
    return session.execute(code, timeout_s)


def execute_content(result: dict) -> list[dict]:
    return [content.text(text.execute_text(result))]


EXECUTE = Tool(
    "execute", "Run build123d code",
    "Run build123d Python code in the persistent session. Top-level names persist between calls; "
    "`from build123d import *` is pre-loaded. Allowed imports: {allowed_imports} (nothing else: no os, "
    "subprocess, socket, open()). The code has no file access, no network and no GUI viewer: use render "
    "to see the model, session_state/measure to inspect objects, import_file to read the input directory "
    "and export to write files. Limits per call: {timeout_s} s wall clock, "
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


RESET = Tool(
    "reset", "Reset session",
    "Discard the session and start a new, empty one (its snapshots are discarded too).",
    params={}, handler=reset, needs_session=False, changes_session=True,
    # a second reset discards an empty session for another empty one: nothing more is lost
    annotations=hints(read_only=False, destructive=True, idempotent=True, open_world=False))

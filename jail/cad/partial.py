"""Timeouts that say where: the ``partial`` message a running call sends on SIGUSR2.

Shortly before the hard limit the launcher sends SIGUSR2 to the next running a call; the handler
armed here answers, once per call, with where the user code is (line, function, source context,
``origin``) and the output so far, through the call's ``send_partial``.

Blocks: nothing. It runs in the user's process: user code can replace or lie through it, and the
launcher depends on none of it (it SIGKILLs at the limit either way and labels the partial reply
as the session's report).
"""

from __future__ import annotations

import signal

from jail.cad import error_report

__all__ = ["arm", "disarm", "near_limit"]

_PARTIAL: dict = {"active": False, "send": None, "out": None, "call": 0, "lines": [],
                  "stdout": None, "stderr": None, "signalled": False}


def near_limit() -> bool:
    """True once this call got the launcher's SIGUSR2 (its limit is near): the summaries stop."""
    return _PARTIAL["signalled"]


def _on_sigusr2(signum, frame) -> None:
    st = _PARTIAL
    st["signalled"] = True
    if not st["active"] or st["send"] is None:
        return
    st["active"] = False  # one answer per call
    try:
        frames = error_report.user_frames_stack(frame)
        line, origin, func = error_report.where(frames, st["call"], st["lines"])
        msg = {"t": "partial", "stdout": st["stdout"].getvalue(), "stderr": st["stderr"].getvalue(),
               "line": line, "function": func, "source_line": error_report.source_line(st["lines"], line),
               "context": error_report.context(st["lines"], line), "origin": origin}
        st["send"](msg)
    except BaseException:  # noqa: BLE001 - never disturb the user's code from a signal handler
        pass


def arm(send, out, stdout, stderr, call_no: int, code_lines: list[str]) -> None:
    """Answer the next SIGUSR2 with a ``partial`` message through ``send`` (None: no answer)."""
    if send is None:
        return
    _PARTIAL.update(send=send, out=out, stdout=stdout, stderr=stderr, call=call_no, lines=code_lines,
                    signalled=False)
    try:
        signal.signal(signal.SIGUSR2, _on_sigusr2)
    except (ValueError, OSError):  # not the main thread (tests): no partial replies
        return
    _PARTIAL["active"] = True


def disarm() -> None:
    _PARTIAL["active"] = False
    _PARTIAL.update(send=None, out=None, stdout=None, stderr=None)

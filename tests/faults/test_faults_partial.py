"""Timeouts that say where (issue 14), against user code that fights the SIGUSR2 handler.

Shortly before the hard limit the launcher sends SIGUSR2 to the running child, whose
runner answers with the line it is on and its output so far. Nothing may depend on
that answer: user code can ignore the signal, die of it, answer with lies or garbage,
answer early, or answer many times. In every case the call is an ``ExecutionTimeout``
(killed at the limit), the reply is safe and bounded, a lie is shown only as the
session's own report, and the session is exactly as before the call.

Runs under ``faults_os_only`` (AST policy and filtered builtins off), so user code can
import ``signal``, reach the runner and write raw datagrams to the session socket (fd 3).
"""
from __future__ import annotations

import pytest

from test_faults_hostile_replies import RAW, assert_intact, assert_safe, launcher, run, ts  # noqa: F401

LOOP = "\nwhile True:\n    pass\n"


def _timeout(r: dict) -> dict:
    assert r["ok"] is False and r["error"]["type"] == "ExecutionTimeout", r
    assert "unchanged" in r["error"]["message"], r
    return r["error"]


def test_handler_ignored_gives_a_plain_timeout(ts):
    r = run(ts, "import signal\nsignal.signal(signal.SIGUSR2, signal.SIG_IGN)\nprint('x')\nn = 0" + LOOP)
    e = _timeout(r)
    assert not e.get("reported") and e.get("line") is None and r["stdout"] == "", r
    assert_intact(ts)


def test_handler_reset_to_default_dies_of_it_still_a_timeout(ts):
    r = run(ts, "import signal\nsignal.signal(signal.SIGUSR2, signal.SIG_DFL)\nn = 0" + LOOP)
    _timeout(r)
    assert_intact(ts)


def test_signal_blocked_gives_a_plain_timeout(ts):
    r = run(ts, "import signal\nsignal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR2})\nn = 0" + LOOP)
    e = _timeout(r)
    assert not e.get("reported"), r
    assert_intact(ts)


LIES = RAW + r'''
import json, signal
def liar(signum, frame):
    reply(json.dumps({"t": "partial", "stdout": "\x1b[2J\x1b]0;pwned\x07" + "A" * 100000 + "\u202eevil",
                      "stderr": 7, "line": 10 ** 12, "source_line": "x" * 5000 + "\nforged line",
                      "context": ["> 1 | \x1b[31mred"] * 1000,
                      "origin": {"call": -3, "line": "9", "function": "f" * 999, "context": "notalist"}}))
signal.signal(signal.SIGUSR2, liar)
n = 0
'''


def test_lying_partial_reply_is_bounded_sanitised_and_labelled(ts, launcher):
    r = run(ts, LIES + LOOP)
    e = _timeout(r)
    assert e.get("reported") is True, r                    # shown as the session's own report
    cap = launcher.profile.limits.max_output_bytes
    assert len(r["stdout"].encode()) <= cap + 200 and len(r["stderr"]) == 0, len(r["stdout"])
    assert "\x1b" not in r["stdout"] and "\u202e" not in r["stdout"], r["stdout"][:80]
    assert "bytes not shown" in r["stdout"]               # head and tail kept, the middle counted
    assert e["line"] is None                               # an impossible line number is dropped
    assert "\n" not in (e.get("source_line") or "") and len(e.get("source_line") or "") <= 520
    assert len(e.get("context") or []) <= 9
    assert all("\x1b" not in c for c in e.get("context") or [])
    o = e.get("origin") or {}
    assert o.get("call") is None and o.get("line") is None and o.get("context") == [], o
    from launcher.tools import render_text
    text = render_text("execute", r)
    assert "The session's own report" in text and "\x1b" not in text
    assert text.split("\n")[0] == ("ExecutionTimeout: execution exceeded the 2s wall-clock limit and was "
                                    "killed; the session is unchanged"), text[:300]  # the launcher's words only
    assert_intact(ts)


def test_partial_over_the_receive_cap_fails_the_call_only(ts):
    """A partial reply bigger than the profile's reply cap is refused like any oversized reply."""
    code = LIES.replace('"A" * 100000', '"A" * 400000')
    r = run(ts, code + LOOP)
    assert r["ok"] is False and r["error"]["type"] in ("ProtocolError", "ExecutionTimeout"), r
    assert "unchanged" in r["error"]["message"]
    assert_intact(ts)


def test_early_and_repeated_partials_are_not_the_result(ts):
    code = RAW + r'''
import json, signal, time
for i in range(50):   # long before the signal: nobody asked, ignored
    reply(json.dumps({"t": "partial", "stdout": "early %d" % i, "line": 1}))
def spam(signum, frame):
    for i in range(200):
        reply(json.dumps({"t": "partial", "stdout": "late %d" % i, "line": 2}))
signal.signal(signal.SIGUSR2, spam)
n = 0
''' + LOOP
    r = run(ts, code)
    e = _timeout(r)
    assert r["stdout"] == "late 0", r                       # the first answer after the signal only
    assert "early" not in r["stdout"] and e["line"] == 2
    assert_intact(ts)


def test_forged_result_after_the_signal_is_an_ordinary_lie_about_its_own_call(ts):
    """A child that answers SIGUSR2 with a *result* is a child that finished in time; like any
    reply it is rebuilt and bounded, and since it says ok it becomes the head - its own state."""
    code = RAW + r'''
import json, signal
def fake(signum, frame):
    reply(json.dumps({"t": "result", "ok": False, "stdout": "", "stderr": "",
                      "error": {"type": "Forged", "message": "\x1b[2Jno"}}))
signal.signal(signal.SIGUSR2, fake)
n = 0
''' + LOOP
    r = run(ts, code)
    assert r["ok"] is False and r["error"]["type"] == "Forged" and "\x1b" not in r["error"]["message"], r
    assert_intact(ts)                                       # ok: False -> the child was discarded


def test_runner_handler_patched_to_raise_in_user_code(ts):
    """User code replaces the runner's reply function: the handler's exception must not escape
    into anything the launcher depends on; the call still times out cleanly."""
    code = ("import jail.cad.error_report as R\n"
            "def boom(*a, **k):\n    raise RuntimeError('no')\n"
            "R.user_frames_stack = boom\n"
            "print('so far')\nn = 0" + LOOP)
    r = run(ts, code)
    _timeout(r)
    assert_intact(ts)


@pytest.mark.parametrize("name", [None, 5, ["Box"], {"a": 1}, "a" * 100000, "__import__", "Box.__init__",
                                  "Box.__class__", "Part._x", "build123d.os", ".", "Box.", "a.b.c.d.e",
                                  "Box\x00", "B\u202eox"])
def test_api_op_with_hostile_names(ts, name):
    """The jail side of the api tool, sent directly (past the launcher's schema check)."""
    s = ts._session()
    msg, _ = s.ask({"t": "api", "name": name}, "api", timeout=30)
    assert_safe(msg)
    assert msg.get("ok") is False or name is None, msg     # None: the versions answer
    if name is not None:
        assert "Traceback" not in str(msg) and len(str(msg)) < 5000, str(msg)[:300]
    assert_intact(ts)

"""The old head after a successful call: stopped at once, killed a moment later.

After a successful ``execute`` the launcher no longer SIGKILLs the old head at once: it SIGSTOPs it
and kills it ``deferred_kill.DELAY_S`` later (launcher/contain/deferred_kill.py), so its teardown is
not beside the reply. Ground truth is the host's /proc: the old head is seen stopped (a SIGKILLed one
never is), then gone within a deadline, and the spare of the next that ran the call is gone too.
(The kernel continues a stopped member of an orphaned process group whenever another member exits,
so a retired head may run again before its kill.) Hostile: each call forks a child that keeps continuing (SIGCONT) every
process of the session it can name, the retired old head among them, until the launcher's sweep
kills it. A continued old head only finds the new head alive and waits for it: every later call is
served with the right state and nothing outlives its call. (The jail refuses threads, so nothing of
a call's keeps running in its process once it has become the head.) Profile ``faults_os_only``:
only the OS layers, so the code may fork and signal.
"""
from __future__ import annotations

from tests.helpers.faults import launcher_fixture
from tests.helpers.proc import (alive, assert_contained, next_pid, ns_members, proc_stat, sigkill_pending,
                                spare_pid, wait_until)

PROFILE = "faults_os_only"
launcher = launcher_fixture(PROFILE)  # tests/conftest.py's ``session`` fixture opens its sessions

# a child of the call's process continuing the session's processes (small pids in its pid
# namespace) every millisecond until it is killed
CONTINUER = """
import os, signal, time
if os.fork() == 0:
    while True:
        for pid in range(1, 200):
            try:
                os.kill(pid, signal.SIGCONT)
            except OSError:
                pass
        time.sleep(0.001)
time.sleep(0.01)
"""


def test_the_old_head_is_stopped_then_killed(session):
    assert session.execute("X = 0")["ok"]
    old_head = session.head.pid
    spare = spare_pid(session)  # the next's spare: it holds the state from before the next call
    assert spare is not None, "no spare was forked by the idle next"
    assert session.execute("X = 1")["ok"]
    # SIGSTOP takes effect once the process is next scheduled: wait for it, briefly
    assert wait_until(lambda: (proc_stat(old_head) or ("?",))[0] in ("T", "t") or None, 2.0), \
        f"the old head was never seen stopped: {proc_stat(old_head)}"
    for pid, what in ((old_head, "old head"), (spare, "spare")):
        assert wait_until(lambda: not alive(pid), 10.0), f"the {what} was never killed: {proc_stat(pid)}"
    r = session.execute("print('X', X)")
    assert r["ok"] and "X 1" in r["stdout"], r


def test_a_session_that_continues_its_retired_processes_keeps_working(session):
    assert session.execute("X = 0")["ok"]
    for i in range(1, 21):
        next_pid(session)
        r = session.execute(CONTINUER + f"assert X == {i - 1}, X\nX = {i}")
        assert r["ok"], (i, r)
    r = session.execute("print('X', X)")
    assert r["ok"] and "X 20" in r["stdout"], r
    assert_contained(session, "retired processes continued by the session")


def test_back_to_back_calls_leave_at_most_one_old_head_stopped(session):
    """A call kills at its start what the last one retired: calls closer together than the delay
    never keep several stopped old heads (each counted in the session's memory and processes)."""
    assert session.execute("X = 0")["ok"]
    most = 0
    for i in range(1, 16):
        assert session.execute(f"X = {i}")["ok"]
        stopped = [p for p in ns_members(session.init.pid)
                   if (proc_stat(p) or ("?",))[0] in ("T", "t") and not sigkill_pending(p)]
        most = max(most, len(stopped))
    assert most <= 1, f"{most} old heads stopped at once"

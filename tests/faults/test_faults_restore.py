"""A restored snapshot serves as the head itself (decision 0024), and waits again when let go.

Restoring no longer forks: the snapshot's own process says ``restored`` and forks nexts like any
head. When its time as the head ends (its next is promoted, another snapshot is restored, the
session is reset) the launcher sends it PARK and it waits again, unchanged. Ground truth is the
launcher's roles (``Session.pids``) and the host's /proc; every state is read back with an
``execute``.

Hostile: the session's own code signals its snapshot (PARK, RESTORE, a PARK flood that fills the
snapshot's real-time signal queue) from inside the session; a restore must still give the saved
state, and nothing the session did may leave a second head forking nexts. Profile
``faults_os_only``: only the OS layers, so the code may fork and signal.
"""
from __future__ import annotations

import subprocess
import sys

import pytest

from tests.helpers import zygotes
from tests.helpers.faults import launcher_fixture, profile_path
from tests.helpers.proc import alive, assert_contained, next_pid, proc_stat, wait_until

from jail.wire import protocol
from launcher.session.errors import SessionError

PROFILE = "faults_os_only"
launcher = launcher_fixture(PROFILE)  # tests/conftest.py's ``session`` fixture opens its sessions

PARK, RESTORE = int(protocol.PARK_SIGNAL), int(protocol.RESTORE_SIGNAL)


def x_is(s, value) -> None:
    r = s.execute("print('X', X)")
    assert r["ok"], (r, s.pids())
    assert f"X {value}" in r["stdout"], (r, s.pids())


def snap_pid(s, name: str) -> int:
    return s.pids()["snapshots"][name]


def waiting(pid: int) -> bool:
    """A parked snapshot sleeps in sigwaitinfo (state S), and forks nothing while it does."""
    st = proc_stat(pid)
    return st is not None and st[0] == "S"


def test_a_restore_forks_nothing_and_the_snapshot_serves_as_head(session):
    assert session.execute("X = 1")["ok"]
    session.save_snapshot("a")
    a = snap_pid(session, "a")
    assert session.execute("X = 2")["ok"]
    for i in range(3):
        assert session.restore_snapshot("a") == {"restored": "a"}
        assert session.pids()["head"] == a, session.pids()  # the snapshot's own process
        x_is(session, 1)  # served by a next the snapshot forked; a failed call would keep it head
        assert session.execute(f"X = {10 + i}")["ok"]  # its next promoted: the snapshot waits again
        assert session.pids()["head"] != a and session.pids()["snapshots"] == {"a": a}, session.pids()
        x_is(session, 10 + i)
        assert wait_until(lambda: waiting(a) or None, 5.0), proc_stat(a)
    assert_contained(session, "restores served by the snapshot")


def test_a_failed_call_keeps_the_restored_snapshot_as_head(session):
    assert session.execute("X = 1")["ok"]
    session.save_snapshot("a")
    a = snap_pid(session, "a")
    assert session.execute("X = 2")["ok"]
    session.restore_snapshot("a")
    for _ in range(3):
        r = session.execute("X = 7\nraise ValueError('no')")
        assert not r["ok"] and r["error"]["type"] == "ValueError", r
        assert session.pids()["head"] == a
    x_is(session, 1)
    msg, _ = session.ask({"t": "state"}, "state")  # a read-only call, in the next's spare or the next
    assert msg.get("t") == "state", msg
    x_is(session, 1)


# the call's process holds its end of the head's pipe (and its spare's): write a byte to every pipe
FORGE_PIPE_BYTE = """
import os, stat
for fd in range(3, 128):
    try:
        if stat.S_ISFIFO(os.fstat(fd).st_mode):
            os.write(fd, {byte!r})
    except OSError:
        pass
"""


@pytest.mark.parametrize("byte", [b"C", b"R", b"P"])
def test_a_forged_pipe_byte_costs_at_most_the_head(session, byte):
    """Hostile: the call writes ``C`` (went cold, decision 0026), ``R`` (took a request: every next
    that reads one says so) or ``P`` (promoted) on the head's pipe, then fails. ``C``: the head's next
    next is cold, nothing else; ``R``: nothing. ``P`` to a restored snapshot serving as
    the head: it waits as a snapshot again and forks no next, so the launcher drops the head (the state
    since the restore is lost, said plainly); the snapshot stays, restores, and the session goes on."""
    assert session.execute("X = 1")["ok"]
    session.save_snapshot("f")
    a = snap_pid(session, "f")
    session.restore_snapshot("f")
    r = session.execute(FORGE_PIPE_BYTE.format(byte=byte) + "raise ValueError('forged')")
    assert not r["ok"] and r["error"]["type"] == "ValueError", r
    if byte in (b"C", b"R"):
        assert session.pids()["head"] == a
        x_is(session, 1)
    else:
        with pytest.raises(SessionError, match="did not fork a new child.*restore one"):
            session.execute("print('X', X)")
        assert wait_until(lambda: waiting(a) or None, 10.0), proc_stat(a)
        session.restore_snapshot("f")
        x_is(session, 1)
    assert session.execute("X = 5")["ok"]
    x_is(session, 5)
    assert_contained(session, f"a forged {byte!r} on the head's pipe")


def test_a_restore_right_after_a_call_waits_for_the_old_head_to_stop_reading(session):
    """A restore that comes right after a successful call can find the head that call promoted still
    blocked in recv() for its promote (under load it may not have run since). Killed there, it can
    still dequeue the next datagram before it dies: the next call's request, which was then lost and
    the call timed out with no last words (1 in ~1000 restores under load in a stress run). The
    launcher must hold the old head as a socket reader, waited for before anything more is sent."""
    assert session.execute("X = 1")["ok"]
    session.save_snapshot("r")
    assert session.execute("X = 2")["ok"]
    old = session.pids()["head"]
    session.restore_snapshot("r")
    assert old in {p.pid for p in session.chain._readers}, \
        "the killed head is not waited for before the next send: it may take the next request"
    x_is(session, 1)
    assert wait_until(lambda: not alive(old), 10.0), proc_stat(old)


@pytest.mark.soak
def test_restores_right_after_calls_lose_no_request(launcher):
    """The race above, for real: 3000 rounds of save, execute, restore and a failing execute, with two
    busy loops competing for the cores. Every call must get its own reply (no timeout)."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        for i in range(3000):
            s = launcher.new_session()
            try:
                assert s.execute("X = 1")["ok"]
                s.save_snapshot("p")
                assert s.execute("X = 2")["ok"]
                s.restore_snapshot("p")
                r = s.execute("X = 8\nraise ValueError('no')")
                assert not r["ok"] and r["error"]["type"] == "ValueError", (i, r)
            finally:
                launcher.close_session(s)
    finally:
        for h in hogs:
            h.kill()
            h.wait()


def test_restoring_the_head_again_and_moving_between_snapshots(session):
    assert session.execute("X = 1")["ok"]
    session.save_snapshot("a")
    session.restore_snapshot("a")
    session.restore_snapshot("a")  # already the head: a fresh next, same state
    x_is(session, 1)
    assert session.execute("X = 2")["ok"]
    session.restore_snapshot("a")
    session.save_snapshot("b")  # saved from a next of the restored snapshot (its child)
    assert session.execute("X = 3")["ok"]
    session.save_snapshot("c")
    for name, value in [("a", 1), ("b", 1), ("c", 3), ("b", 1), ("a", 1), ("c", 3)]:
        assert session.restore_snapshot(name) == {"restored": name}
        assert session.pids()["head"] == snap_pid(session, name)
        x_is(session, value)
    for _ in range(20):  # restore a while b is the head, and back: the one let go forks nothing that serves
        session.restore_snapshot("a")
        session.restore_snapshot("b")
    x_is(session, 1)
    assert_contained(session, "restores between snapshots that were heads")
    for name in ("a", "b", "c"):
        assert alive(snap_pid(session, name)), name


def test_deleting_the_snapshot_that_serves_as_head(session):
    assert session.execute("X = 1")["ok"]
    session.save_snapshot("a")
    a = snap_pid(session, "a")
    session.restore_snapshot("a")
    assert session.delete_snapshot("a")["snapshots"] == []
    assert session.pids()["head"] == a  # the head lives on, an ordinary head now
    x_is(session, 1)
    assert session.execute("X = 4")["ok"]  # its next promoted: the old head is retired like any
    assert wait_until(lambda: not alive(a), 10.0), f"the former snapshot was never killed: {proc_stat(a)}"
    x_is(session, 4)
    assert_contained(session, "a deleted snapshot that was the head")


# ----------------------------------------------------------------- the session's own signals
# With seccomp on, the filter refuses kill() to any other process (EPERM); with it off the signals
# arrive, and what holds is the snapshot's own check of the sender (si_pid != 0: from inside).
SIGNALLING = ["faults_os_only", "faults_noseccomp"]


@pytest.fixture(scope="module", params=SIGNALLING)
def signalled(request, tmp_path_factory):
    with zygotes.on_shared_zygote(profile_path(request.param), output_dir=tmp_path_factory.mktemp("out"), spare_sessions=0) as L:
        s = L.new_session()
        try:
            yield request.param, s
        finally:
            L.close_session(s)


def _sent(name: str, out: str, *, parent_may_die: bool = False) -> None:
    """With seccomp on, every kill() was refused; with it off, every one went through. With
    ``parent_may_die`` (the parent is an ordinary head, whose RESTORE and PARK are not blocked: the
    first one kills it, by their default action) the later ones may also find it gone once its parent
    has reaped it (ESRCH, ``ERR 3``: a race a loaded CI run lost)."""
    if name == "faults_os_only":
        assert "ERR 1" in out, out
    elif parent_may_die:
        assert "ERR" not in out or out.strip() == "ERR 3", out
    else:
        assert "ERR" not in out, out


SIGNAL_PARENT = """
import os
for _ in range({count}):
    for sig in ({sigs}):
        try:
            os.kill(os.getppid(), sig)
        except OSError as e:
            print('ERR', e.errno)
            break
"""

# the snapshot's real-time signal queue filled from inside (until the kernel refuses one more)
FLOOD_PARENT = """
import os
n = 0
while n < 200_000:
    try:
        os.kill(os.getppid(), {park})
    except OSError as e:
        print('FULL' if e.errno == 11 else 'ERR', e.errno, n)
        break
    n += 1
"""


def _fresh(s, name: str) -> int:
    """X = 1 saved as snapshot ``name`` (replacing one left by an earlier test), restored: its pid."""
    if name in s.pids()["snapshots"]:
        s.delete_snapshot(name)
    assert s.execute("X = 1")["ok"]
    s.save_snapshot(name)
    pid = snap_pid(s, name)
    assert s.execute("X = 2")["ok"]
    s.restore_snapshot(name)
    assert s.pids()["head"] == pid
    return pid


def test_the_sessions_own_park_and_restore_are_ignored(signalled):
    """The restored snapshot is the parent of the call's process: PARK and RESTORE from there carry
    the sender's pid, so the snapshot stays the head and later waits and restores as usual."""
    name, s = signalled
    a = _fresh(s, "p")
    code = SIGNAL_PARENT.format(count=50, sigs=f"{PARK}, {RESTORE}")
    r = s.execute(code + "X = 8\nraise ValueError('signalled')")
    assert not r["ok"] and r["error"]["type"] == "ValueError", r
    _sent(name, r["stdout"])
    assert s.pids()["head"] == a
    next_pid(s)  # the snapshot, still the head, forked a next that serves
    x_is(s, 1)
    r = s.execute(code + "X = 9")  # a success: its next is promoted, the snapshot is parked
    assert r["ok"], r
    _sent(name, r["stdout"], parent_may_die=True)  # its parent: the head x_is's call left
    x_is(s, 9)
    assert wait_until(lambda: waiting(a) or None, 5.0), proc_stat(a)
    s.restore_snapshot("p")
    x_is(s, 1)
    assert_contained(s, "the session's own PARK and RESTORE")


def test_a_full_signal_queue_does_not_keep_the_snapshot_serving(signalled):
    """With seccomp off the session can fill its snapshot's real-time signal queue; a signal sent
    to a full queue loses its sender, so the launcher's PARK is lost among the session's. The
    snapshot still stops serving as the head: its next, promoted, says so on their pipe. Before,
    it went on forking nexts, one of which took (and dropped) the following call's request: a
    timeout with no last words. It waits again and restores; nothing is left forking nexts."""
    name, s = signalled
    a = _fresh(s, "q")
    r = s.execute(FLOOD_PARENT.format(park=PARK) + "X = 3")
    assert r["ok"], (r["error"], r["stdout"][-300:], s.pids())
    x_is(s, 3)
    _sent(name, r["stdout"])
    assert wait_until(lambda: waiting(a) or None, 30.0), proc_stat(a)  # it drains the flood first
    x_is(s, 3)
    assert s.restore_snapshot("q") == {"restored": "q"}
    x_is(s, 1)
    assert_contained(s, "a PARK flood")
    assert s.execute("X = 4")["ok"]
    x_is(s, 4)


def test_a_restore_the_session_sent_itself_is_not_taken(signalled):
    """A parked snapshot ignores a RESTORE from the session's own code (signalling every small pid
    of its namespace but its own and its parent's, the head's)."""
    name, s = signalled
    a = _fresh(s, "r")
    assert s.execute("X = 2")["ok"]  # the snapshot is parked again
    code = f"""
import os
me, parent = os.getpid(), os.getppid()
for pid in range(2, 300):
    if pid not in (me, parent):
        try:
            os.kill(pid, {RESTORE})
        except OSError as e:
            if e.errno == 1:
                print('ERR', e.errno)
X = 3
"""
    r = s.execute(code)
    assert r["ok"], r
    _sent(name, r["stdout"])
    assert s.pids()["head"] != a
    x_is(s, 3)
    assert wait_until(lambda: waiting(a) or None, 5.0), proc_stat(a)
    s.restore_snapshot("r")
    x_is(s, 1)
    assert_contained(s, "a RESTORE from inside")

"""The launcher's watchdog (launcher/contain/watchdog.py) measured against the kernel's own numbers.

The hostile end-to-end cases (children over the bound, copy-on-write across snapshots, hogs the
head forks between calls, CPU share) are in test_faults_session_bounds.py. Here: the mechanics
those depend on, each checked against what the test reads from /proc itself.

* The estimate the watchdog compares with the bound between exact passes must stay at or above the
  session's real total (the sum of every process's PSS of anon + shmem memory, read here from
  smaps_rollup) through allocations, copy-on-write rewrites, snapshots, deletes, restores and the
  head changing at every call — else a session could grow past its bound unseen.
* The end-of-call check holds the bound on its own (the watchdog thread removed): a call that
  allocates past it and returns is discarded, the state kept.
* The watchdog's thread exits when the last watched session closes (a process that forks later,
  as the tests' jailed children do, must be single-threaded again).

The sessions are made as an unprivileged launcher without delegation sees the host (no cgroup),
which is what switches the watchdog on.
"""
from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from tests.helpers.proc import pss_bytes
from launcher.contain import sampling, watchdog
from launcher.core import Launcher
from tests.helpers.contain import estimate, exact_pass, no_cgroups

REPO = Path(__file__).resolve().parents[2]
MEM = str(REPO / "tests" / "profiles" / "contain_memory.toml")  # 768 MB session, 1024 MB a process
FAST = str(REPO / "tests" / "profiles" / "sessions_fast.toml")  # the default bounds, short clocks
MB = 1 << 20


def measured_total(pids) -> int:
    """Sum of Pss_Anon + Pss_Shmem over ``pids`` (the tests' own reading of smaps_rollup)."""
    return sum(pss_bytes(p) for p in pids)


def unbounded_session(L):
    with no_cgroups():
        s = L.new_session()
    assert s.memory_report()["mechanism"] == "watchdog", s.memory_report()
    return s


@pytest.fixture(scope="module")
def launcher():
    with Launcher(MEM, spare_sessions=0) as L:
        yield L


def pids_of(s):
    return sampling.session_pids(s.keeper.pid, s.init.pid)


def test_the_estimate_stays_above_the_real_total(launcher):
    """Between exact passes the watchdog decides on its estimate: it must never be below what the
    session really holds, whatever the session did since the last pass (no exact pass runs here)."""
    s = unbounded_session(launcher)
    watchdog.WATCHDOG.remove(s.watch)  # no thread: nothing but this test reads the guard
    m = s.watch.memory
    try:
        assert s.execute("x = 1")["ok"]
        exact_pass(m, pids_of(s))
        fill = "for j in range(0, len(big), 4096):\n    big[j] = {v}"
        steps = [
            ("allocate 150 MB", lambda: s.execute("big = bytearray(150 << 20)\n" + fill.format(v=1))),
            ("snapshot a", lambda: s.save_snapshot("a")),
            ("rewrite every page (copy-on-write)", lambda: s.execute(fill.format(v=2))),
            ("snapshot b", lambda: s.save_snapshot("b")),
            ("rewrite again", lambda: s.execute(fill.format(v=3))),
            ("delete a", lambda: s.delete_snapshot("a")),
            ("a failed call", lambda: s.execute(fill.format(v=4) + "\nraise ValueError('no')")),
            ("restore b", lambda: s.restore_snapshot("b")),
            ("three calls (a new head each)", lambda: [s.execute(f"y{i} = {i}") for i in range(3)]),
            ("allocate 100 MB more", lambda: s.execute("more = bytearray(100 << 20)\n"
                                                       "for j in range(0, len(more), 4096):\n    more[j] = 1")),
        ]
        seen = []
        for what, step in steps:
            step()
            s.ensure_next()  # the head's next forked too, as between calls
            pids = pids_of(s)
            est, real = estimate(m, pids), measured_total(pids)
            seen.append((what, est // MB, real // MB))
            # 2 MB of slack: the processes are idle but this reads them one after the other
            assert est >= real - 2 * MB, f"after {what}: estimate {est // MB} MB < real {real // MB} MB ({seen})"
        assert s.execute("print(len(big) + len(more))")["stdout"].strip() == str(250 << 20)
        print("\n(step, estimate MB, measured MB):", seen)
    finally:
        launcher.close_session(s)


def test_the_end_of_call_check_alone_discards_a_call_that_leaves_the_session_over(launcher):
    """Attack: a call allocates past session_memory_mb (within its process's RLIMIT_AS) and returns
    at once. With no watchdog thread to catch it while it runs, the check made at the end of every
    successful call must discard it: SessionMemoryLimit, the state from before intact, the call's
    process gone, and the session still answers."""
    s = unbounded_session(launcher)
    watchdog.WATCHDOG.remove(s.watch)
    try:
        assert s.execute("keep = 41")["ok"]
        head = s.head.pid
        r = s.execute("big = bytearray(900 << 20)\nfor j in range(0, len(big), 4096):\n    big[j] = 1")
        assert not r["ok"] and r["error"]["type"] == "SessionMemoryLimit", r
        assert "after the call" in r["error"]["message"] and "session_memory_mb = 768 MB" in r["error"]["message"]
        assert s.head.pid == head  # not promoted
        r = s.execute("print(keep + 1, 'big' in globals())")
        assert r["ok"] and r["stdout"].split() == ["42", "False"], r
        assert s.memory_report()["kills"] >= 1
    finally:
        launcher.close_session(s)


def test_a_session_far_from_its_bound_is_never_read_exactly():
    """The exact reads (a page-table walk per process) are for sessions near their bound: a session
    with the default 4096 MB bound whose processes' resident sizes add up to far less must run its
    calls on the cheap upper bound alone."""
    with Launcher(FAST, spare_sessions=0) as L:
        s = unbounded_session(L)
        for i in range(20):
            assert s.execute(f"v{i} = {i}")["ok"]
        s.save_snapshot("one")
        assert s.execute("w = 1")["ok"]
        rep = s.memory_report()
        assert rep["limit_bytes"] == 4096 * MB, rep
        assert rep["exact_reads"] == 0, rep
        assert 0 < rep["last_bytes"] <= rep["limit_bytes"] // 2, rep
        L.close_session(s)


# a process holding SIZE of touched memory forks a child that shares it; both print their pid, then wait
SHARING_PAIR = r"""
import os, signal, sys
buf = bytearray(b"\x01") * int(sys.argv[1])  # every page written
if os.fork() == 0:
    print(os.getpid(), flush=True)
    signal.pause()
    os._exit(0)
signal.pause()
"""


def test_an_exact_pass_across_a_killed_process_exit_is_read_again():
    """A pass that reads a process while it exits is not a consistent read: it frees its mappings
    meanwhile, so the pages it shared count twice (read before its teardown, then to a survivor read
    after) or, once its page tables are detached, to nobody (a survivor's share is still divided).
    Before the fix, 5 runs of this test all failed, both ways: 512 MB shared by two processes read as
    294-324 MB, or as 666-774 MB, right after one was killed. The guard now waits for the exit
    (``EXIT_WAIT_S``) and reads again, so the pass sees what the survivor holds."""
    import select
    import signal
    import subprocess
    import sys

    from launcher.contain.memguard import MemoryGuard
    from tests.helpers.proc import exiting, wait_until

    size = 512 * MB  # its teardown takes ~14 ms: the pass right after the kill runs across it
    crossed = 0
    for _ in range(5):  # every round must read right; at least one must have run across the exit
        a = subprocess.Popen([sys.executable, "-c", SHARING_PAIR, str(size)], stdout=subprocess.PIPE)
        b = None
        try:
            assert select.select([a.stdout], [], [], 60)[0], "the pair did not start in 60 s"
            b = int(a.stdout.readline())
            guard = MemoryGuard(4096 * MB)
            both = exact_pass(guard, [a.pid, b])
            assert both >= size, both  # the buffer, counted once across the two
            a.send_signal(signal.SIGKILL)
            across = exact_pass(guard, [a.pid, b])  # right after the kill: the exit runs meanwhile
            a.wait(timeout=30)
            assert wait_until(lambda: exiting(a.pid), 10)
            survivor = exact_pass(MemoryGuard(4096 * MB), [b])
            assert survivor >= size, survivor
            assert abs(across - survivor) <= 16 * MB, (
                f"a pass across the exit read {across >> 20} MB, the survivor alone holds {survivor >> 20} MB")
            crossed += guard.resettled
        finally:
            a.kill()
            a.wait(timeout=30)
            a.stdout.close()
            if b is not None:
                try:
                    os.kill(b, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                try:  # reparented to this process only if it is a subreaper; otherwise init reaps it
                    os.waitpid(b, 0)
                except ChildProcessError:
                    pass
    assert crossed, "no pass was read again although each read a process just killed"


def test_the_watchdog_thread_ends_with_the_last_watched_session():
    """A process whose sessions are all closed has no watchdog thread left (it may fork later)."""
    with Launcher(MEM, spare_sessions=0) as L:
        s = unbounded_session(L)
        assert s.execute("x = 1")["ok"]
        assert any(t.name == "session-watchdog" for t in threading.enumerate())
        L.close_session(s)
    assert not [t for t in threading.enumerate() if t.name == "session-watchdog" and t.is_alive()]


def test_a_process_the_tree_walk_misses_once_is_not_charged_twice(launcher, monkeypatch):
    """The walk over /proc/PID/task/*/children can miss a process being re-parented (a new head
    whose parent, the old head, was just killed). Counted from the session's CPU totals, a process
    missed once and seen again would bring all its past CPU time in again, and the session would be
    throttled (its next stopped) for CPU it never used. Fault injected: one look that misses the
    head, which has ~0.6 s of CPU behind it; the CPU charged over that look and the next must stay
    near what the session really used (a few ticks), far from the head's 0.6 s."""
    s = unbounded_session(launcher)
    watchdog.WATCHDOG.remove(s.watch)  # the looks are made here, one at a time
    try:
        assert s.execute("import time\nt = time.process_time()\nwhile time.process_time() - t < 0.6:\n    pass")["ok"]
        s.ensure_next()
        head = s.head.pid
        st = sampling.stat(head)
        assert st is not None and st[1] >= 0.5 * sampling.HZ, st  # the head carries the spin's CPU
        cpu = s.watch.cpu
        s.watch.tick()
        s.watch.tick()  # primed, both looks saw the head
        # a known start: the spin above may already have been charged (and throttled) by these looks
        cpu.resume()
        cpu.allowance, throttled = cpu.burst, cpu.throttled
        before = cpu.allowance
        real = sampling.session_pids
        monkeypatch.setattr(sampling, "session_pids", lambda k, i: [p for p in real(k, i) if p != head])
        s.watch.tick()  # the walk misses the head
        monkeypatch.setattr(sampling, "session_pids", real)
        s.watch.tick()  # and finds it again
        charged = before - cpu.allowance  # the looks are milliseconds apart: next to no refill
        assert charged < 0.2, f"{charged:.2f} CPU-s charged for two idle looks (the head's past CPU again?)"
        assert cpu.throttled == throttled and not cpu.stopped()
    finally:
        launcher.close_session(s)

"""Session-wide memory and CPU bounds where the kernel gives none: the launcher's watchdog.

Where no writable cgroup memory/cpu controller exists (an unprivileged launcher; forced here as
root by making the launcher see no cgroup, as ``bench/bench_containment.py`` does) a session is
still bounded as a whole:

* **memory**: the sum over the session's processes of their proportional set size of anonymous +
  shmem memory (``Pss_Anon + Pss_Shmem`` of ``/proc/PID/smaps_rollup``) stays at or under
  ``session_memory_mb``. A call that pushes it over has its processes SIGKILLed and returns
  ``SessionMemoryLimit``; the session keeps its state and snapshots. Over the bound while no call
  runs, whatever is not init, the head or a snapshot is killed.
* **CPU**: without a cgroup ``cpu.max`` the session's busy processes are stopped and continued
  (SIGSTOP/SIGCONT) so that the session gets about ``session_cpus`` CPUs; nothing is left stopped.

Ground truth is read by the test itself from the host's ``/proc`` (pid-namespace members and
their ``smaps_rollup``), never from the launcher's own figures; those (``memory_report``,
``cpu_report``) are only checked to agree. Every wait is a poll with a deadline. The CPU
assertions compare CPU time with the wall time the same processes spent, with a margin that
throttling guarantees whatever the host's load (a loaded host only lowers the CPU a session gets).
A polling bound is only as tight as its reaction time, so how far over the bound a session gets
is asserted only for attackers whose growth rate the attack code itself caps ("paced": at most
400 MB/s, allowed 0.4 s of it); for attackers growing as fast as the host faults pages in, the
test asserts that they never get what they went for (all three children holding their memory).

Attacks (each test's docstring says what must hold):
1. a call forks children that each stay within RLIMIT_AS but together exceed the session bound
   (as fast as pages fault in, and at a known pace, for how close to the bound it is stopped);
2. copy-on-write: every call rewrites a buffer that snapshots share, so each snapshot ends up
   holding its own private copy;
3. between calls: the head (rewritten by a successful call) forks memory hogs after the call has
   returned (``setitimer``/``alarm``/``timer_create``/``timerfd`` are refused by seccomp with EPERM
   in the jail, so the hook is the head's own loop: user code replaces ``os.fork``, which the
   head calls to make its next right after promotion);
4. CPU: two spinning children (also with a third child that keeps sending SIGCONT to them, and
   as two chains of 20 ms processes that each fork their successor and exit);
5. attack 1 with the launcher running as uid 65533, where the watchdog is the only bound;
6. a state that fits the bound but not with its next's warm-ups: swept once, not every tick.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.helpers.faults import profile_path

from tests.helpers.cli import REPO, launcher_env
from tests.helpers.proc import (alive, children, exiting, next_pid, ns_members, proc_stat, pss_bytes,  # noqa: E402
                                sigkill_pending, tracked, wait_until)

from tests.helpers.contain import no_cgroups  # noqa: E402

MB = 1 << 20


# ----------------------------------------------------------------- ground truth from the host's /proc


def aggregate(init_pid: int, timeout: float = 10.0) -> tuple[int, dict[int, int]]:
    """(sum, per pid) of Pss_Anon + Pss_Shmem over the session's pid namespace: init, the head,
    the next, the snapshots and whatever user code forked. The keeper (outside the namespace,
    a launcher-side process user code cannot grow) is not counted.

    The processes are read one after the other, so the sum is taken again until no process was
    exiting and none came or went while it was read (or ``timeout`` passes: the last sum). A process
    that exits meanwhile — the old head's deferred kill after every call, decision 0023 — hands its
    shares of pages to the others as it frees them: one read before it and one after counted those
    shares twice (stop 31: 829 MB read for 672 MB held; timeout 0 reads once, as a sampler must)."""
    last: dict[int, int] = {}

    def consistent() -> bool:
        members = ns_members(init_pid)
        last.clear()
        last.update((p, pss_bytes(p)) for p in members)
        return ns_members(init_pid) == members and not any(exiting(p) for p in members)

    if not consistent() and timeout > 0:
        wait_until(consistent, timeout, 0.002)
    return sum(last.values()), dict(last)


def cpu_state(pid: int) -> str | None:
    st = proc_stat(pid)
    return st[0] if st else None


def _roles(s) -> dict[int, str]:
    """pid -> role (init, head, next, snapshot NAME) of the session's tracked processes."""
    p = s.pids()
    return {p["init"]: "init", p["head"]: "head", p["next"]: "next",
            **{v: f"snapshot {k}" for k, v in p["snapshots"].items()}}


def left_stopped(s) -> dict[int, str]:
    """Session processes in state T (stopped) that are not being killed, with their role. The old
    head a successful call retired is stopped until its deferred kill (decision 0023): waited for
    first, once the last call's promotion (which retires it, decision 0028) has run."""
    from launcher.contain.deferred_kill import REAPER
    s.lock.settle()
    wait_until(lambda: REAPER.pending() == 0 or None, 5.0)
    roles = _roles(s)
    return {x: roles.get(x, "untracked") for x in ns_members(s.init.pid)
            if cpu_state(x) in ("T", "t") and not sigkill_pending(x)}


def holders(s) -> list[tuple[int, str, str, str]]:
    """Who holds what now: (pid, role, state, PSS) for every session process, largest first;
    for an assertion's message when a bound is not kept."""
    roles = _roles(s)
    _total, per = aggregate(s.init.pid)
    return [(x, roles.get(x, "untracked"), cpu_state(x) or "-", mb(n))
            for x, n in sorted(per.items(), key=lambda kv: -kv[1])]


def untracked_alive(s, pids) -> set[int]:
    keep = tracked(s)
    return {p for p in pids if p not in keep and alive(p)}


class Sampler:
    """A thread sampling the session's aggregate from /proc every ``interval`` seconds while a
    call runs: the highest total it saw, every pid it saw with its largest PSS, how many samples
    found a process stopped (state T), and the most processes holding ``full`` bytes or more
    in one sample (``most_full``). Samples can miss a peak (they give a lower bound of it)."""

    def __init__(self, init_pid: int, interval: float = 0.03, full: int | None = None):
        self.init_pid, self.interval, self.full = init_pid, interval, full
        self.peak = 0
        self.most_full = 0
        self.seen: dict[int, int] = {}  # written by the sampling thread: read it through seen_now()
        self.stopped_samples = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)

    def sample(self) -> int:
        total, per = aggregate(self.init_pid, timeout=0)
        for p, v in per.items():
            with self._lock:
                self.seen[p] = max(self.seen.get(p, 0), v)
            if cpu_state(p) in ("T", "t"):
                self.stopped_samples += 1
        self.peak = max(self.peak, total)
        if self.full:
            self.most_full = max(self.most_full, sum(1 for v in per.values() if v >= self.full))
        return total

    def seen_now(self) -> dict[int, int]:
        """A copy of ``seen``, safe to iterate while the thread samples."""
        with self._lock:
            return dict(self.seen)

    def _run(self):
        while not self._stop.wait(self.interval):
            self.sample()

    def __enter__(self):
        self.sample()
        self._t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._t.join(10)
        self.sample()


def mb(x: int) -> str:
    return f"{x / MB:.0f} MB"


def report(s, name: str):
    """``memory_report()``/``cpu_report()``, or a readable failure while the watchdog does not exist."""
    fn = getattr(s, name, None)
    assert fn is not None, f"Session.{name}() does not exist (no watchdog yet)"
    return fn()


def assert_x(s, value) -> None:
    r = s.execute("print('X', X)")
    assert r["ok"], r
    assert f"X {value}\n" in r["stdout"], r


# ----------------------------------------------------------------- sessions with the watchdog as the only bound
@pytest.fixture(scope="module")
def mem_launcher(tmp_path_factory):
    from launcher.core import Launcher
    with Launcher(profile_path("contain_memory"), output_dir=tmp_path_factory.mktemp("out"),
                  spare_sessions=0) as L:
        yield L


@contextmanager
def no_cgroup_session(L):
    """A session made while the launcher sees no cgroup at all (as an unprivileged launcher
    without delegation does): no kernel memory bound, so only the watchdog can hold it."""
    with no_cgroups():
        s = L.new_session()
    try:
        assert not s.contain.active and not s.contain.v1_dirs and s.contain.memory_peak_bytes() is None, \
            "the session got a kernel bound: the test would not test the watchdog"
        yield s
    finally:
        L.close_session(s)


# ----------------------------------------------------------------- 1. children that together exceed the bound
# 3 children each touch 400 MB (within the 1024 MB RLIMIT_AS of contain_memory.toml), confirm on a
# pipe once every page is touched, and wait. The parent holds the lot for a second once all three
# confirmed (an attacker keeps what it got), then sets X: a call that was not stopped changes X.
MEM_CHILDREN = r'''
import os, time
N, SIZE = 3, 400
pipes = []
for i in range(N):
    r, w = os.pipe()
    if os.fork() == 0:
        os.close(r)
        b = bytearray(SIZE << 20)
        for j in range(0, len(b), 4096):
            b[j] = 1
        os.write(w, b"k")   # "I hold my SIZE MB": written only once all of it is touched
        while True:
            time.sleep(1)
    os.close(w)
    pipes.append(r)
held = sum(1 for r in pipes if os.read(r, 1) == b"k")   # EOF: that child was killed first
print("HELD", held, "OF", N, flush=True)
if held == N:
    time.sleep(1)
X = 99
'''

# A child counts as holding its 400 MB from 390 MB of PSS on (its share of the baseline is more).
FULL = 390 * MB

def _assert_children_stopped(smp, r: dict, limit: int) -> None:
    """The three 400 MB children were never all full at once, and the call failed with the bound."""
    assert smp.most_full < 3, \
        f"all three children held their 400 MB at once (the session reached {mb(smp.peak)}, bound " \
        f"{mb(limit)}) before anything stopped them ({r.get('error') or r['stdout'].strip()})"
    assert not r["ok"] and r["error"]["type"] == "SessionMemoryLimit", r



def test_call_whose_children_exceed_the_bound_is_killed(mem_launcher):
    """Attack: a call forks 3 children that each touch 400 MB as fast as the host faults pages in
    (each within RLIMIT_AS, 1.2 GB together against a 768 MB session bound) and hold it. Must
    hold: the three never hold their 400 MB at the same time (no sample sees three processes of
    >= 390 MB: that is 1200 MB + the ~140 MB baseline, 572 MB over the bound; how close to the
    bound a polling watchdog keeps a fast grower is not asserted here, see the paced test); the
    call returns ``SessionMemoryLimit`` naming ``session_memory_mb``; every process it started is
    gone; the aggregate is back under the bound; X set by an earlier call still reads 1 (the
    call's ``X = 99`` never took effect); the session answers; ``memory_report`` says watchdog,
    the bound, a peak over it and at least one kill."""
    with no_cgroup_session(mem_launcher) as s:
        limit = s.profile.limits.session_memory_mb * MB
        assert s.execute("X = 1")["ok"]
        before = tracked(s)
        base, _ = aggregate(s.init.pid)
        with Sampler(s.init.pid, full=FULL) as smp:
            r = s.execute(MEM_CHILDREN)
        print(f"\nbaseline {mb(base)}, sampled peak {mb(smp.peak)}, bound {mb(limit)}, most full children at "
              f"once {smp.most_full}; reply {r.get('error') or r['stdout'].strip()}")
        _assert_children_stopped(smp, r, limit)
        assert "session_memory_mb" in r["error"]["message"], r["error"]
        assert "HELD 3" not in r["stdout"], r
        call_pids = set(smp.seen_now()) - before
        assert wait_until(lambda: not untracked_alive(s, call_pids), timeout=10.0), \
            f"processes of the killed call still alive: {sorted(untracked_alive(s, call_pids))}"
        assert not untracked_alive(s, ns_members(s.init.pid)), s.pids()
        assert wait_until(lambda: aggregate(s.init.pid)[0] <= limit, timeout=10.0), \
            f"aggregate after the call {mb(aggregate(s.init.pid)[0])} > {mb(limit)}"
        assert_x(s, 1)
        rep = report(s, "memory_report")
        assert rep["mechanism"] == "watchdog" and rep["limit_bytes"] == limit, rep
        assert rep["peak_bytes"] > limit and rep["kills"] >= 1, rep


# ----------------------------------------------------------------- 1b. children that grow at a known pace
# 3 children each add 4 MB (touched: bytearray zero-fills) at most every 30 ms: together at most
# 400 MB/s whatever the host (a loaded host only slows them), up to 400 MB each, then hold.
PACED = r'''
import os, time
N, STEP, MAX = 3, 4, 400
for i in range(N):
    if os.fork() == 0:
        held = []
        while len(held) * STEP < MAX:
            held.append(bytearray(STEP << 20))
            time.sleep(0.03)
        while True:
            time.sleep(1)
while True:
    time.sleep(1)
'''
PACE = 3 * 4 * MB / 0.03   # bytes per second, at most
# The watchdog (launcher/watchdog.py) says a call may get past the bound by what it touches
# between two measurements (TICK_S = 0.1 s). Allowed here: what this call can touch in 0.4 s
# (four such intervals, for a measurement that costs time and a loaded host), 160 MB.
PACED_SLACK = int(PACE * 0.4)


def test_call_growing_at_a_known_pace_is_stopped_near_the_bound(mem_launcher):
    """Attack: 3 children grow by 4 MB every 30 ms each (at most 400 MB/s together, to 1.2 GB:
    1340 MB with the baseline against 768 MB) and the call waits for ever. Must hold: the
    sampled aggregate never exceeds the bound by more than what the call can touch in 0.4 s
    (PACED_SLACK = 160 MB: four of the watchdog's 0.1 s measurement intervals); the call fails
    with ``SessionMemoryLimit`` (long before its 20 s wall clock) and leaves nothing behind."""
    with no_cgroup_session(mem_launcher) as s:
        limit = s.profile.limits.session_memory_mb * MB
        assert s.execute("X = 1")["ok"]
        before = tracked(s)
        with Sampler(s.init.pid, interval=0.02) as smp:
            r = s.execute(PACED)
        print(f"\npaced: sampled peak {mb(smp.peak)}, bound {mb(limit)} + {mb(PACED_SLACK)}; "
              f"reply {r.get('error') or r['stdout'].strip()}")
        assert not r["ok"] and r["error"]["type"] == "SessionMemoryLimit", r
        assert smp.peak <= limit + PACED_SLACK, \
            f"the session reached {mb(smp.peak)} (bound {mb(limit)}, growing at most {mb(int(PACE))}/s): " \
            f"the watchdog took more than 0.4 s to stop it"
        call_pids = set(smp.seen_now()) - before
        assert wait_until(lambda: not untracked_alive(s, call_pids), timeout=10.0), \
            sorted(untracked_alive(s, call_pids))
        assert_x(s, 1)


# ----------------------------------------------------------------- 2. copy-on-write across snapshots
COW_SIZE = 256  # MB per copy: 2 copies + baseline fit 768 MB, 3 do not
# The buffer is held by an object whose summary is cheap (a bare bytearray would be summarised).
COW_FIRST = ("X = 0\nclass Hold:\n    pass\nh = Hold()\nh.b = bytearray({size} << 20)\n"
             "for j in range(0, len(h.b), 4096):\n    h.b[j] = 1\n")
COW_REWRITE = "X = {i}\nfor j in range(0, len(h.b), 4096):\n    h.b[j] = {v}\n"
# After a call the aggregate may exceed what the watchdog measured before by what the new next
# the head forks dirties of its copy-on-write pages while it warms up (a few MB here): 32 MB.
SETTLE_SLACK = 32 * MB


def test_copy_on_write_across_snapshots(mem_launcher):
    """Attack: call 0 holds a 256 MB buffer (every page touched) and is snapshotted; every later
    call rewrites every page of it (breaking the copy-on-write sharing with the snapshots) and is
    snapshotted in turn, so each snapshot ends up holding a private 256 MB. The rewrite takes
    ~0.1 s, less than a polling interval may be: the bound must also hold for a call that ends
    between two measurements. Must hold: call 1 succeeds (pages shared by the head and snapshot
    s0 count once: PSS, not RSS); a later call (at the latest the one that would make 3 copies)
    fails with ``SessionMemoryLimit``; after every call the measured aggregate settles to
    <= bound + 32 MB (SETTLE_SLACK); X reads the last successful value; every snapshot taken
    before is restorable with its own X."""
    with no_cgroup_session(mem_launcher) as s:
        limit = s.profile.limits.session_memory_mb * MB
        r = s.execute(COW_FIRST.format(size=COW_SIZE))
        assert r["ok"], r
        s.save_snapshot("s0")
        base, _ = aggregate(s.init.pid)
        assert base + COW_SIZE * MB + SETTLE_SLACK < limit, \
            f"baseline {mb(base)}: a second copy would not fit {mb(limit)}; the test premise fails here"
        last_ok, failed_at, seen = 0, None, []

        def settled():
            return aggregate(s.init.pid)[0] <= limit + SETTLE_SLACK

        for i in range(1, 5):
            with Sampler(s.init.pid) as smp:
                r = s.execute(COW_REWRITE.format(i=i, v=i + 1))
            wait_until(settled, timeout=10.0)
            after = aggregate(s.init.pid)[0]
            seen.append((i, r["ok"] or r["error"]["type"], mb(smp.peak), mb(after)))
            assert after <= limit + SETTLE_SLACK, \
                f"after call {i} ({r['ok'] or r['error']}) the session holds {mb(after)} > bound {mb(limit)} " \
                f"+ {mb(SETTLE_SLACK)}; calls so far {seen}; holders {holders(s)}"
            if not r["ok"]:
                assert r["error"]["type"] == "SessionMemoryLimit", r
                assert "session_memory_mb" in r["error"]["message"], r["error"]
                failed_at = i
                break
            last_ok = i
            s.save_snapshot(f"s{i}")
        print(f"\ncalls (i, outcome, sampled peak, settled): {seen}")
        assert last_ok >= 1, f"call 1 (two copies, {mb(base + COW_SIZE * MB)}) was refused: {seen}"
        assert failed_at is not None, f"no call was refused: {seen}"
        assert_x(s, last_ok)
        for k in range(last_ok + 1):
            assert s.restore_snapshot(f"s{k}") == {"restored": f"s{k}"}
            assert_x(s, k)
        assert wait_until(lambda: aggregate(s.init.pid)[0] <= limit + SETTLE_SLACK, timeout=10.0), \
            mb(aggregate(s.init.pid)[0])
        rep = report(s, "memory_report")
        assert rep["mechanism"] == "watchdog" and rep["kills"] >= 1, rep


# ----------------------------------------------------------------- 3. between calls: the head forks hogs
# The call replaces os.fork; the first fork made with it (the head's loop forking its next right
# after this call's promotion: jail/proc/chain.py head_main) first forks 3 children that touch
# 400 MB each and sleep. No call runs then: only a between-calls check can see them.
# "fast": each hog allocates its 400 MB at once; "paced": 4 MB every 30 ms (as PACED).
HOG_BODY = {
    "fast": "b = bytearray(400 << 20)",
    "paced": "b = []\n                while len(b) < 100:\n                    b.append(bytearray(4 << 20))\n"
             "                    time.sleep(0.03)",
}
HEAD_HOGS = r'''
import os, time
_fork = os.fork
_hog_state = {{"done": False}}
def _fork_with_hogs():
    if not _hog_state["done"]:
        _hog_state["done"] = True
        for _ in range(3):
            if _fork() == 0:
                {body}
                while True:
                    time.sleep(1)
    return _fork()
os.fork = _fork_with_hogs
X = 2
'''


@pytest.mark.parametrize("pace", ["fast", "paced"])
def test_head_forks_hogs_between_calls(mem_launcher, pace):
    """Attack: a successful call rewrites the head's ``os.fork`` so that the head, once promoted
    and while no call runs, forks 3 children of 400 MB each (1.2 GB against a 768 MB bound; the
    sweep keeps a head's children, which it takes for nexts), all at once ("fast") or 4 MB every
    30 ms each ("paced"). Must hold, within 30 s and before any other call: the aggregate is <=
    the bound and no process holding 100 MB or more besides the head and snapshots is alive; the
    head was not killed (the next call sees X == 2); ``memory_report`` counts the kill; and
    (checked last, "paced" only: a fast grower's overshoot is what the host faults in during a
    measurement interval, see attack 1) the sampled aggregate never exceeded the bound by more
    than PACED_SLACK."""
    with no_cgroup_session(mem_launcher) as s:
        limit = s.profile.limits.session_memory_mb * MB
        assert s.execute("X = 1")["ok"]
        with Sampler(s.init.pid, interval=0.02) as smp:
            r = s.execute(HEAD_HOGS.format(body=HOG_BODY[pace]))
            assert r["ok"], r
            head = s.head.pid

            def hogs():
                return {p for p, v in smp.seen_now().items() if v >= 100 * MB and p != head and alive(p)}

            def kills():
                fn = getattr(s, "memory_report", None)
                return fn()["kills"] if fn else 0

            def over():
                return any(v >= 100 * MB and p != head for p, v in smp.seen_now().items()) or kills() > 0

            def contained():
                return over() and not hogs() and aggregate(s.init.pid)[0] <= limit

            ok = wait_until(contained, timeout=30.0, interval=0.05)
            total = aggregate(s.init.pid)[0]
        print(f"\nhead {head}, sampled peak {mb(smp.peak)}, now {mb(total)}, bound {mb(limit)}, hogs alive "
              f"{sorted(hogs())}, large pids seen {sorted(p for p, v in smp.seen_now().items() if v >= 100 * MB)}")
        assert over(), "the head forked no hog and the watchdog killed nothing: the attack did not run"
        assert ok, f"30 s after the call the session holds {mb(total)} (bound {mb(limit)}); " \
                   f"hogs alive: {sorted(hogs())}"
        assert alive(head) and s.head.pid == head, "the head itself was killed"
        assert_x(s, 2)
        rep = report(s, "memory_report")
        assert rep["mechanism"] == "watchdog" and rep["kills"] >= 1, rep
        if pace == "paced":  # last: how far over the bound the hogs got before they were killed
            assert smp.peak <= limit + PACED_SLACK, \
                f"the hogs were killed, but only once the session held {mb(smp.peak)} (bound {mb(limit)}, " \
                f"growing at most {mb(int(PACE))}/s): the watchdog took more than 0.4 s"


# 6. a state within a next's warm-ups of the bound: one sweep, not one every tick
NEAR_BOUND = "blob = bytearray({n})\nfor j in range(0, len(blob), 4096):\n    blob[j] = 1\n"


def _kills(s) -> int:
    """How many times the watchdog killed processes of ``s`` for its memory bound."""
    return report(s, "memory_report")["kills"]


def test_a_state_near_the_bound_is_swept_once_not_every_tick(mem_launcher):
    """A successful call leaves a state that fits the bound, but its next's warm-ups and spare (tens
    of MB of copy-on-write pages, paid while idle) do not: the watchdog sweeps them between calls.
    Must hold: the head's next after that sweep warms nothing (decision 0026), so no further sweep
    comes while the session is idle (before, the head forked, the next warmed and was swept again
    every ``IDLE_TICK_S``); and that next serves the following call, which sees the state.

    The state's size is found, not assumed (the warm-ups' size depends on the host): one session per
    try, each holding 5 MB more, until one is swept between calls."""
    limit = mem_launcher.profile.limits.session_memory_mb * MB
    with no_cgroup_session(mem_launcher) as s:
        assert s.execute("x = 1")["ok"]
        s.ensure_next()
        assert wait_until(lambda: children(s.next.pid), 10), "the next forked no spare"
        base = aggregate(s.init.pid)[0]  # a state of nothing, with a warm next and its spare
    tried = []
    for k in range(20):  # 5 MB steps: the window is ~10 MB on some hosts, and 10 MB steps missed it
        n = limit - base - 50 * MB + k * 5 * MB
        with no_cgroup_session(mem_launcher) as s:
            r = s.execute(NEAR_BOUND.format(n=n))
            tried.append(f"{mb(n)}: {r['error']['type'] if not r['ok'] else 'ok'}")
            assert r["ok"] or r["error"]["type"] == "SessionMemoryLimit", r
            if not r["ok"]:
                break
            if not wait_until(lambda: _kills(s) >= 1, 3.0, interval=0.05):
                continue
            first = _kills(s)
            more = wait_until(lambda: _kills(s) > first, 3.0, interval=0.05)
            kills = _kills(s)
            assert not more, f"swept {kills - first + 1} times in 3 s while idle, holding {mb(n)} " \
                             f"(bound {mb(limit)}): the head's nexts warm and are swept again every tick"
            r = s.execute("print(len(blob))")
            assert r["ok"] and r["stdout"] == f"{n}\n", r
            return
    pytest.fail(f"no state between 'fits with its warm next' and 'over the bound during the call' was "
                f"found (a state of nothing holds {mb(base)}; tried {tried})")


def test_memory_report_names_the_kernel_bound_where_there_is_one(mem_launcher):
    """Where the kernel bounds the session (root on this hybrid host: v1 memory), ``memory_report``
    says which cgroup mechanism holds it and the same bound (no watchdog figures then)."""
    s = mem_launcher.new_session()
    try:
        if s.contain.memory_peak_bytes() is None:
            pytest.skip("no kernel memory bound for sessions on this host")
        rep = report(s, "memory_report")
        v2_memory = s.contain.active and "memory" in s.contain.hier.v2_controllers
        assert rep["mechanism"] == ("cgroup-v2" if v2_memory else "cgroup-v1"), rep
        assert rep["limit_bytes"] == s.profile.limits.session_memory_mb * MB, rep
        assert set(rep) >= {"mechanism", "limit_bytes", "peak_bytes", "kills"}, rep
    finally:
        mem_launcher.close_session(s)


# ----------------------------------------------------------------- 4. CPU share
# The parent forks N children that spin until SPIN seconds of wall time have passed since it
# started (so throttling does not lengthen them much), reaps each with wait4 and adds their CPU
# time (user + system, from the kernel's rusage of the child). os.times() is no use in the jail
# (seccomp refuses times(2); Python then reports garbage). FORK_SPINNERS forks the spinners; it has
# no braces, as it is part of templates filled with str.format.
FORK_SPINNERS = r'''
t0 = time.monotonic()
kids = []
for i in range(N):
    pid = os.fork()
    if pid == 0:
        end = t0 + SPIN_S
        while time.monotonic() < end:
            pass
        os._exit(0)
    kids.append(pid)
'''
SPIN = r'''
import os, time, json, signal
SPIN_S, N, WAKER = {spin}, {n}, {waker}''' + FORK_SPINNERS + r'''waker, sent, refused = None, 0, 0
if WAKER:
    # seccomp refuses kill(2) to another process; tgkill(2) (kept for raise/abort) with tgid ==
    # tid == a sibling's pid signals that sibling, except SIGCONT (refused since the watchdog)
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    r, w = os.pipe()
    waker = os.fork()
    if waker == 0:   # sleeps 1 ms at a time and continues its spinning siblings
        os.close(r)
        end = t0 + SPIN_S
        while time.monotonic() < end:
            for k in kids:
                if libc.syscall(ctypes.c_long(234), ctypes.c_long(k), ctypes.c_long(k),
                                ctypes.c_long(int(signal.SIGCONT))) == 0:
                    sent += 1
                elif ctypes.get_errno() == 1:  # EPERM: seccomp refuses tgkill with SIGCONT
                    refused += 1
            time.sleep(0.001)
        os.write(w, f"{{sent}} {{refused}}".encode())
        os._exit(0)
    os.close(w)
cpu = 0.0
for pid in kids + ([waker] if waker else []):
    _, status, ru = os.wait4(pid, 0)
    cpu += ru.ru_utime + ru.ru_stime
wall = time.monotonic() - t0
if waker:
    sent, refused = (int(x) for x in (os.read(r, 64) or b"0 0").split())
print("CPU " + json.dumps({{"cpu": cpu, "wall": wall, "sigcont_sent": sent, "sigcont_refused": refused}}))
'''
SPIN_S = 3.0
# Throttling to C CPUs over short periods (tens to a few hundred ms) gives the session at most
# C x wall + about one period on each core: well under 1.5 x C x wall for a 3 s call. Without
# throttling two spinners get up to 2 x wall on an idle 2-core host.
CPU_MARGIN = 1.5


def _spin_result(r) -> dict:
    assert r["ok"], r
    for line in r["stdout"].splitlines():
        if line.startswith("CPU "):
            return json.loads(line[4:])
    raise AssertionError(f"no CPU line: {r['stdout']!r}")


@pytest.fixture(scope="module", params=["session_cpu", "session_cpu_half"])
def cpu_launcher(request, tmp_path_factory):
    from launcher.core import Launcher
    with Launcher(profile_path(request.param), output_dir=tmp_path_factory.mktemp("out"),
                  spare_sessions=0) as L:
        yield L


def _check_cpu(s, res: dict, smp: Sampler, what: str) -> None:
    cpus = s.profile.limits.session_cpus
    rep = report(s, "cpu_report")
    print(f"\n{what}: cpus {cpus}, CPU {res['cpu']:.2f} s over {res['wall']:.2f} s wall "
          f"({res['cpu'] / res['wall']:.2f} CPUs), report {rep}, samples with a stopped process "
          f"{smp.stopped_samples}")
    assert res["cpu"] <= CPU_MARGIN * cpus * res["wall"], \
        f"{what}: the session used {res['cpu']:.2f} s of CPU in {res['wall']:.2f} s " \
        f"(> {CPU_MARGIN} x {cpus} CPUs); report {rep}"
    assert rep["mechanism"] in ("watchdog", "cgroup-v2") and rep["cpus"] == cpus, rep
    if rep["mechanism"] == "watchdog":
        # it throttled, or the host was so loaded that the session never got more than its share
        assert rep["throttled"] > 0 or res["cpu"] <= 1.1 * cpus * res["wall"], rep
    stopped = left_stopped(s)
    assert not stopped, f"{what}: session processes left stopped after the call: {stopped}"


def test_two_spinning_children_get_the_session_share(cpu_launcher):
    """Attack: a call forks 2 children that spin for 3 s of wall time (2 CPUs of demand) while it
    waits for them. Must hold: their CPU time (kernel rusage) is <= 1.5 x session_cpus x wall;
    ``cpu_report`` says watchdog (no v2 cpu controller here) with the profile's CPUs and
    ``throttled > 0`` (unless the host itself kept the session under its share); right after the
    call no session process is stopped (state T), and the session answers at once."""
    s = cpu_launcher.new_session()
    try:
        assert s.execute("X = 1")["ok"]
        with Sampler(s.init.pid, interval=0.1) as smp:
            r = s.execute(SPIN.format(spin=SPIN_S, n=2, waker=False))
        _check_cpu(s, _spin_result(r), smp, "2 spinners")
        assert_x(s, 1)
        assert not left_stopped(s), left_stopped(s)
    finally:
        cpu_launcher.close_session(s)


def test_a_sibling_that_keeps_sending_sigcont_does_not_lift_the_share(cpu_launcher):
    """Attack: as above, plus a third child that wakes every millisecond (so it is hardly ever
    busy) and sends SIGCONT to both spinners with ``tgkill`` (seccomp allows tgkill for raise/abort;
    ``kill`` it refuses), to undo any SIGSTOP the watchdog sends them. Must hold: seccomp refuses
    tgkill with SIGCONT (EPERM, none delivered: the waker really tried, else the test tests
    nothing); the same CPU bound (<= 1.5 x session_cpus x wall, the waker's own CPU included) and no
    process left stopped."""
    s = cpu_launcher.new_session()
    try:
        assert s.execute("X = 1")["ok"]
        with Sampler(s.init.pid, interval=0.1) as smp:
            r = s.execute(SPIN.format(spin=SPIN_S, n=2, waker=True))
        res = _spin_result(r)
        assert res["sigcont_refused"] > 0 and res["sigcont_sent"] == 0, \
            f"tgkill(SIGCONT) to a sibling must be refused by seccomp, every time ({res})"
        _check_cpu(s, res, smp, f"2 spinners + a SIGCONT sender ({res['sigcont_refused']} refused)")
        assert_x(s, 1)
    finally:
        cpu_launcher.close_session(s)


# Two chains of short-lived spinners: each member spins for 20 ms, forks its successor and exits
# (so no process lives through many of the watchdog's looks, and most never meet one); each
# member reports its own CPU time (getrusage, its fork included) on a pipe all of them share.
CHAIN = r'''
import os, time, json, resource, struct
SPIN_S, CHAINS, LIFE = {spin}, 2, 0.02
t0 = time.monotonic()
r, w = os.pipe()
for c in range(CHAINS):
    if os.fork() == 0:
        os.close(r)
        while True:
            end = min(time.monotonic() + LIFE, t0 + SPIN_S)
            while time.monotonic() < end:
                pass
            last = time.monotonic() >= t0 + SPIN_S
            if not last and os.fork() != 0:
                last = True          # the parent: its successor goes on
            if last:
                ru = resource.getrusage(resource.RUSAGE_SELF)
                os.write(w, struct.pack("d", ru.ru_utime + ru.ru_stime))
                os._exit(0)
os.close(w)
cpu, members, buf = 0.0, 0, b""
while True:
    b = os.read(r, 4096)
    if not b:
        break
    buf += b
    while len(buf) >= 8:
        cpu += struct.unpack("d", buf[:8])[0]
        buf, members = buf[8:], members + 1
wall = time.monotonic() - t0
print("CPU " + json.dumps({{"cpu": cpu, "wall": wall, "members": members}}))
'''


def test_a_chain_of_short_lived_spinners_gets_the_session_share(cpu_launcher):
    """Attack: two chains of processes, each member spinning for 20 ms, forking its successor and
    exiting, for 3 s of wall time (2 CPUs of demand, but no process lives long enough to be seen
    more than once by a watchdog that looks every ~100 ms; a dead member's CPU time moves to
    whoever reaps it). Must hold: the members' CPU time (their own getrusage) is <= 1.5 x
    session_cpus x wall; nothing is left stopped; the session answers."""
    s = cpu_launcher.new_session()
    try:
        assert s.execute("X = 1")["ok"]
        with Sampler(s.init.pid, interval=0.1) as smp:
            r = s.execute(CHAIN.format(spin=SPIN_S))
        res = _spin_result(r)
        assert res["members"] > 20, f"the chains hardly ran: the test tests nothing ({res})"
        _check_cpu(s, res, smp, f"2 chains of 20 ms spinners ({res['members']} members)")
        assert_x(s, 1)
    finally:
        cpu_launcher.close_session(s)


# The call's own process spins too, beside two spinning children; it measures its own CPU time.
SERVER_SPINS = r'''
import os, time, json
SPIN_S, N = {spin}, 2''' + FORK_SPINNERS + r'''c0 = time.process_time()
end = t0 + SPIN_S
while time.monotonic() < end:
    pass
own = time.process_time() - c0
cpu = 0.0
for pid in kids:
    _, status, ru = os.wait4(pid, 0)
    cpu += ru.ru_utime + ru.ru_stime
wall = time.monotonic() - t0
print("CPU " + json.dumps({{"cpu": cpu + own, "own": own, "wall": wall}}))
'''


@pytest.mark.parametrize("profile", ["session_cpu", "session_cpu_half"], ids=["one_cpu", "half_cpu"])
def test_the_call_s_own_process_is_stopped_only_under_a_share_below_one_cpu(profile, tmp_path):
    """The CPU share stops a session's processes while its bucket is empty. The process serving the
    call has one thread (seccomp refuses more), so under a share of a CPU or more it cannot outrun the
    share alone: stopping it made calls wait for what idle warm-ups had used (a render of 45 ms took
    360-460 ms in 8 of 12 calls on a slow VM). Attack: the call spins, beside two spinning children.
    Must hold: the session's CPU stays within the bound either way; with ``session_cpus = 1`` the
    call's process is never stopped (its children are); with 0.5 it is (the share binds it too).
    (Its own launcher: the ``cpu_launcher`` variant with 1.0 is a soak one.)"""
    from launcher.core import Launcher
    with Launcher(profile_path(profile), output_dir=tmp_path, spare_sessions=0) as L:
        s = L.new_session()
        assert s.execute("X = 1")["ok"]
        server = next_pid(s)
        seen: set[str] = set()
        done = threading.Event()

        def watch():
            while not done.wait(0.005):
                if (st := cpu_state(server)) is not None:
                    seen.add(st)
        t = threading.Thread(target=watch, daemon=True)
        t.start()
        try:
            with Sampler(s.init.pid, interval=0.1) as smp:
                r = s.execute(SERVER_SPINS.format(spin=2.0))
        finally:
            done.set()
            t.join(5)
        res = _spin_result(r)
        _check_cpu(s, res, smp, f"the call spinning beside 2 children (its own CPU {res['own']:.2f} s)")
        rep = report(s, "cpu_report")
        if s.profile.limits.session_cpus >= 1:
            assert not seen & {"T", "t"}, f"the call's own process was stopped (states seen {seen}); {rep}"
        elif rep["throttled"]:
            assert seen & {"T", "t"}, f"a share below one CPU must stop the call's process too ({seen}); {rep}"
        assert_x(s, 1)


def test_snapshots_do_not_wait_for_processes_the_cpu_share_stopped(cpu_launcher, monkeypatch):
    """A session's idle warm-ups (a spare meshing a large model) can empty its CPU share between calls;
    the watchdog then stops every process of the session, its next and snapshots included. A call
    continues them before it sends its request (the share's debt is forgiven at a call); a save or a
    restore must too. Before, they waited for the share to refill: 150–270 ms per save after a large
    model's warm-ups in the peer bench, and here, with the stop made to last (``MAX_STOP_S`` 60 s and
    a 10 CPU-second debt), the save timed out. Must hold: save and restore succeed while the session's
    processes are held stopped with such a debt, and the state is the snapshot's."""
    from launcher.contain import cpuguard
    monkeypatch.setattr(cpuguard, "MAX_STOP_S", 60.0)
    with no_cgroup_session(cpu_launcher) as s:
        guard = s.watch.cpu
        assert guard is not None, "no CPU watchdog for this session: the test would not test it"
        assert s.execute("X = 1")["ok"]
        s.save_snapshot("a")
        assert s.execute("X = 2")["ok"]
        for op in ("save", "restore"):
            s.ensure_next()
            with guard.lock:  # the share emptied: every process of the session stopped, a long debt
                guard.allowance = -10.0
                guard._stopped_at = time.monotonic()
                guard.throttled += 1
                guard._hold(lambda: s.watch._pids(s), {s.keeper.pid, s.init.pid})
            stopped = guard.stopped()
            assert s.next.pid in stopped and s.snapshots["a"][0].pid in stopped, (stopped, s.pids())
            if op == "save":
                assert s.save_snapshot("b")["name"] == "b"
            else:
                assert s.restore_snapshot("a") == {"restored": "a"}
        assert_x(s, 1)
        assert s.restore_snapshot("b") == {"restored": "b"}
        assert_x(s, 2)


def test_throttled_processes_are_not_left_stopped_by_a_timeout_or_close(cpu_launcher):
    """Attack: a call's children spin forever, so the call times out while they are being
    throttled (killed while possibly stopped), then the session is closed. Must hold: right
    after the timeout no session process is stopped unless it is being killed (SIGKILL queued),
    and within 10 s none of the call's processes is alive; the session answers; after close none
    of the session's processes is left (stopped or otherwise)."""
    s = cpu_launcher.new_session()
    closed = False
    try:
        assert s.execute("X = 1")["ok"]
        with Sampler(s.init.pid, interval=0.1) as smp:
            r = s.execute(SPIN.format(spin=1000, n=2, waker=False), timeout_s=3)
        assert not r["ok"] and r["error"]["type"] == "ExecutionTimeout", r
        stopped = left_stopped(s)  # a stopped child being killed (SIGKILL queued) is not "left"
        assert not stopped, f"left stopped after the timeout: {stopped}"
        assert wait_until(lambda: not untracked_alive(s, set(smp.seen_now())), timeout=10.0), \
            sorted(untracked_alive(s, set(smp.seen_now())))
        assert_x(s, 1)
        rep = report(s, "cpu_report")
        assert set(rep) >= {"mechanism", "cpus", "throttled"}, rep
        every = set(smp.seen_now()) | ns_members(s.init.pid) | {s.keeper.pid}
        cpu_launcher.close_session(s)
        closed = True
        left = wait_until(lambda: not {p for p in every if alive(p)}, timeout=10.0)
        assert left, f"after close: {[(p, cpu_state(p)) for p in every if alive(p)]}"
    finally:
        if not closed:
            cpu_launcher.close_session(s)


# ----------------------------------------------------------------- 5. the unprivileged launcher
UID = 65533
DRIVER = r'''
import json, sys
sys.path.insert(0, {repo!r})
from launcher.core import Launcher
from launcher.contain import containment
from tests.helpers.proc import spare_pid
def say(**kw):
    print(json.dumps(kw), flush=True)
    sys.stdin.readline()
def tracked(s):
    spare = spare_pid(s)  # forked by the idle next: tracked, not a stray
    p = s.pids()
    return [x for x in (p["init"], p["head"], p["next"], spare, *p["snapshots"].values()) if x]
with Launcher({profile!r}, output_dir={out!r}, spare_sessions=0) as L:
    s = L.new_session()
    assert s.execute("X = 1")["ok"]
    say(describe=containment.describe(), init=s.init.pid, tracked=tracked(s),
        limit=s.profile.limits.session_memory_mb << 20)
    r = s.execute({code!r})
    try:
        rep = s.memory_report()
    except Exception as e:
        rep = repr(e)
    say(result=r, tracked=tracked(s), report=rep)
    r = s.execute("print('X', X)")
    say(final=r)
'''


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root and setpriv")
def test_unprivileged_launcher_bounds_children_over_the_session_memory():
    """Attack 1 (3 children x 400 MB against 768 MB) with the launcher running as uid 65533: no
    cgroup it may write, so the watchdog is the only session-wide bound. Must hold (the test,
    as root, reads the session's /proc from outside): the three children never hold their 400 MB
    at once; the call fails with ``SessionMemoryLimit``; none of its processes survives; the
    aggregate is back under the bound; X still reads 1; ``memory_report`` says watchdog."""
    home = Path(tempfile.mkdtemp(prefix="b123d-bounds-", dir="/tmp"))
    p = None
    try:
        os.chmod(home, 0o755)
        (home / "out").mkdir()
        os.chown(home / "out", UID, UID)
        script = home / "driver.py"
        script.write_text(DRIVER.format(repo=str(REPO), out=str(home / "out"), code=MEM_CHILDREN,
                                        profile=profile_path("contain_memory")))
        env = launcher_env(HOME=str(home), XDG_RUNTIME_DIR=str(home))
        p = subprocess.Popen(["setpriv", f"--reuid={UID}", f"--regid={UID}", "--clear-groups", "--",
                              sys.executable, str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, cwd=str(home), env=env)

        def msg():
            line = p.stdout.readline()
            assert line, f"the driver ended early: {p.stderr.read()[-3000:]}"
            return json.loads(line)

        def go():
            p.stdin.write("\n")
            p.stdin.flush()

        first = msg()
        assert first["describe"]["v2"] is None and not first["describe"]["v1"], first["describe"]
        init, limit, before = first["init"], first["limit"], set(first["tracked"])
        smp = Sampler(init, full=FULL)
        with smp:
            go()
            second = msg()
        r, rep = second["result"], second["report"]
        print(f"\nunprivileged: sampled peak {mb(smp.peak)}, bound {mb(limit)}, most full children at once "
              f"{smp.most_full}, reply {r.get('error') or r['stdout'].strip()}, report {rep}")
        _assert_children_stopped(smp, r, limit)
        keep = set(second["tracked"])

        def left():
            return {x for x in (set(smp.seen_now()) - before) | ns_members(init) if x not in keep and alive(x)}
        assert wait_until(lambda: not left(), timeout=10.0), f"outlived the call: {sorted(left())}"
        assert wait_until(lambda: aggregate(init)[0] <= limit, timeout=10.0), mb(aggregate(init)[0])
        assert isinstance(rep, dict) and rep["mechanism"] == "watchdog" and rep["kills"] >= 1, rep
        go()
        final = msg()["final"]
        assert final["ok"] and "X 1\n" in final["stdout"], final
        go()
        assert p.wait(timeout=60) == 0, p.stderr.read()[-3000:]
    finally:
        if p is not None and p.poll() is None:
            p.kill()
            p.wait()
        shutil.rmtree(home, ignore_errors=True)

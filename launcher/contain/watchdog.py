"""Session-wide memory and CPU bounds where the kernel gives none: a launcher-side watchdog over /proc.

Where a cgroup memory controller is writable (v2 delegated, or v1 as root) the kernel bounds a
session's memory (``containment.py``); where the v2 ``cpu`` controller is delegated, its CPU share.
Everywhere else (an unprivileged launcher without delegation; CPU: also root on a hybrid host,
whose v1 cpu controller is not used) this module enforces ``session_memory_mb`` and
``session_cpus`` from outside the session: one launcher thread reads ``/proc`` of every session's
processes (the keeper, the session's pid-namespace init and all its descendants: orphans are
re-parented to that init, so nothing a session forks is missed) every ``TICK_S`` while a call runs,
every ``IDLE_TICK_S`` between calls.

**Memory.** What a session holds is the sum over its processes of their proportional set size of
anonymous and shared memory (``Pss_Anon + Pss_Shmem`` of ``/proc/PID/smaps_rollup``): a page
shared by k processes counts 1/k to each, so copy-on-write copies across forks and snapshots are
counted once each, and pages shared with the zygote or other sessions only by their share. That
read walks the page tables (~8 ms for a 600 MB process, ~17 ms under load), so it is done only when
needed. Each tick reads ``/proc/PID/stat`` of every process (~15 us each): the sum of resident sizes
is an upper bound (PSS <= RSS); within the bound, nothing more. Over it, an estimate from the last
exact pass: a process's PSS then plus what it can have gained since — no anonymous page is new
without a page fault (a huge page also grows the resident size), so PSS + (new faults + resident
growth) x 4 KiB; a process forked since counts its own faults and resident growth (what it shares
with the processes it descends from is counted by them: every process descends from one that was in
the last exact pass), and once one is, the zygote's resident size is added (a fork inside the session
takes a larger part of the pages it shares with the zygote, the one process outside the session
that shares pages with it); a process that has gone keeps its PSS counted until the next exact pass (its
shared pages now count to the survivors). Only when that estimate is over the bound (or every
``REFRESH_S`` while the upper bound is) are all the session's processes read exactly — at most once
per ``max(TICK_S, 2 x the pass's cost)`` (<= 50% of one core, only while the session is near its
bound, and at every tick while the estimate grows by a quarter of the bound since the last pass).
Over the bound:

* during a call, the call is aborted: its process (the next) is killed through its pidfd and the
  call returns ``SessionMemoryLimit``; the sweep after it kills what the call forked. The session's
  state and snapshots are untouched.
* at the end of every successful call, before its process becomes the head, the whole session is
  measured the same way (the old head and what the call forked still count: an upper bound of what
  is kept); over the bound the call is discarded with ``SessionMemoryLimit`` — so a call too short
  for a tick cannot leave the session over its bound.
* between calls (memory grown by code an earlier call left in the head or a snapshot, e.g. a timer
  signal handler), every process that is not the keeper, init, the head or a snapshot is killed (the
  launcher's sweep, under the session lock); the head and snapshots are never killed by the watchdog.

**CPU.** The session's CPU time (utime + stime of its processes plus the cutime + cstime they reaped
from exited children, from ``/proc/PID/stat``: processes too short-lived for a tick count too) is drawn
from a token bucket filled at ``session_cpus`` CPU-seconds per second (burst ``BURST_S`` of it); when
it is empty every process of the session but the keeper and init is stopped (SIGSTOP through a pidfd;
looked for again until none is left running, so short-lived processes that fork their successors
stop too) until the bucket is half full again — like ``cpu.max``, a session over its share runs slower, it is not killed.
Stopped processes are continued at the latest after ``MAX_STOP_S``, when a call starts or returns (the
debt left is forgiven then: at most a tick's worth of CPU per call), when the session closes and when the
watchdog stops; jailed code cannot continue one (seccomp refuses signals to other processes).

What it does not do: a hard bound. Between two ticks (``TICK_S``) a call may allocate past the bound
(by at most what it touches in that time, each process still under its ``RLIMIT_AS``); the PSS of a
process is stale when a process outside the session that shares its pages (the zygote, another
session) exits (refreshed every ``REFRESH_S``); a region unmapped and replaced by huge pages in
fewer faults than pages is under-estimated until the next exact pass; kernel memory the session
causes (page tables, socket buffers, pipe buffers) is not counted. CPU time is accounted by the kernel
in clock ticks (10 ms), and a session between calls is looked at every ``IDLE_TICK_S``.
The kernel bounds (cgroup ``memory.max``/``cpu.max``) are exact and preferred wherever available.
"""
from __future__ import annotations

import logging
import os
import signal
import threading
import time
import weakref

from launcher.contain.procs import children_of, descendants

log = logging.getLogger("build123d_launcher.watchdog")

PAGE = os.sysconf("SC_PAGE_SIZE")
HZ = os.sysconf("SC_CLK_TCK")
TICK_S = 0.1
REFRESH_S = 10.0          # exact pass at least this often while the upper bound is over the limit
IDLE_TICK_S = 0.5         # sessions with no call running are looked at this often
PRECISE_CPU_SHARE = 0.5    # at most this share of one core on exact (smaps_rollup) reads, while over
BURST_S = 0.3              # CPU-seconds a session may run ahead of its share
MAX_STOP_S = 1.0


# ----------------------------------------------------------------------------- /proc reads
def stat(pid: int) -> tuple[int, int, int, str, int, int, int] | None:
    """(minor+major faults, utime+stime in clock ticks, resident pages, state, ppid, start time,
    cutime+cstime: the CPU of its children it reaped) of ``pid`` from /proc/PID/stat; None when gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    rest = data[data.rfind(b")") + 2:].split()
    # after comm: state(3) ppid(4) ... minflt(10) majflt(12) utime(14) stime(15) cutime(16) cstime(17)
    # ... starttime(22) rss(24)
    try:
        return (int(rest[7]) + int(rest[9]), int(rest[11]) + int(rest[12]), int(rest[21]), rest[0].decode(),
                int(rest[1]), int(rest[19]), int(rest[13]) + int(rest[14]))
    except (IndexError, ValueError):
        return None


def pss(pid: int) -> int | None:
    """Proportional set size of anonymous + shmem memory of ``pid`` in bytes (page-table walk)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
            data = f.read()
    except OSError:
        return None
    got: dict[bytes, int] = {}
    for line in data.splitlines():
        k, _, v = line.partition(b":")
        if k in (b"Pss", b"Pss_Anon", b"Pss_Shmem"):
            try:
                got[k] = int(v.split()[0]) * 1024
            except (IndexError, ValueError):
                pass
    if b"Pss_Anon" in got:
        return got[b"Pss_Anon"] + got.get(b"Pss_Shmem", 0)
    return got.get(b"Pss")  # kernels before 5.8: all of PSS (file pages too: an over-count)


def session_pids(keeper_pid: int, init_pid: int | None) -> list[int]:
    """The keeper, the session's pid-namespace init and every descendant of that init."""
    out = [keeper_pid]
    if init_pid is None:
        return out
    out.append(init_pid)
    stack = [init_pid]
    seen = {keeper_pid, init_pid}
    while stack and len(out) < 4096:
        for c in children_of(stack.pop()):
            if c not in seen:
                seen.add(c)
                out.append(c)
                stack.append(c)
    return out


# ----------------------------------------------------------------------------- memory
class MemoryGuard:
    """One session's memory total, measured as the module docstring says (thread-safe)."""

    def __init__(self, limit_bytes: int, outside_pid: int | None = None):
        self.limit = limit_bytes
        # the zygote: the one process outside the session that shares pages with it (every session
        # process was forked from it); its resident size bounds how much the session's PSS can grow
        # when a fork inside the session takes more of those shared pages
        self.outside_pid = outside_pid
        self.lock = threading.Lock()
        # (pid, start time) -> (pss bytes, faults, resident pages) at its last exact read
        self._cache: dict[tuple[int, int], tuple[int, int, int]] = {}
        self._ghosts = 0  # PSS of processes exactly read that have gone since: counted until the next exact pass
        self._first_rss: dict[tuple[int, int], int] = {}  # resident pages of a process new since, when first seen
        self._counted: dict[tuple[int, int], int] = {}  # what each live process was last counted for
        self._next_exact = 0.0
        self._last_exact = 0.0
        self._last_exact_total = 0
        self._rss: dict[int, int] = {}  # resident pages of each process at the last look
        self.peak = 0
        self.kills = 0
        self.precise_reads = 0
        self.exact_passes = 0
        self.last_total = 0

    def total(self, pids: list[int], *, urgent: bool = False, pausable: set[int] = frozenset(),
              paused: list[tuple[int, int]] | None = None) -> tuple[int, bool]:
        """(bytes, exact) for the session whose processes are ``pids``.

        Not exact: an upper bound that is within the limit, or an estimate over it whose exact read
        is not yet due (``urgent`` reads at once). Exact: every process read from smaps_rollup now,
        or those that grew most, whose PSS alone is over the limit (the total is then at least that).
        ``pausable``: processes that may be stopped (SIGSTOP) while they are read, when they grew: a
        call that allocates fast is held still (and its page tables are read without contention); they
        are continued before returning, or, with ``paused``, their pidfds are appended there and the
        caller continues them (after killing them, if the session is over).
        """
        with self.lock:
            stats = {p: s for p in pids if (s := stat(p)) is not None}
            self._rss = {p: s[2] for p, s in stats.items()}
            est, growth = self._estimate(stats)  # kept up to date at every look, whatever is decided
            upper = sum(s[2] for s in stats.values()) * PAGE
            if upper <= self.limit:
                self._note(upper)
                return upper, False
            now = time.monotonic()
            due = now >= self._next_exact and now - self._last_exact >= REFRESH_S
            if est <= self.limit and (urgent or not due):
                self._note(est)
                return est, False
            if urgent and not due:
                # at the end of a call: read exactly only what changed since the last pass (the call's
                # process, the head) — usually 2 of the session's processes — before reading them all
                part = self._partial(stats, growth)
                if part <= self.limit:
                    self._note(part)
                    return part, False
            # rate limit, except for a session growing fast (a quarter of its bound since the last pass)
            if not urgent and now < self._next_exact and est - self._last_exact_total < self.limit // 4:
                self._note(est)
                return est, False
            t = time.monotonic()
            held = _pause([p for p in pausable if growth.get(p, 0) > 0 and p in stats])
            try:
                return self._exact(stats, growth, now, t)
            finally:
                if paused is None:
                    _resume(held)
                else:
                    paused.extend(held)

    def _partial(self, stats: dict, growth: dict) -> int:
        """The estimate after reading exactly every process that grew or is new since the last pass
        (the others keep their PSS from it: a share that fell since, as a new sharer forked, is an
        over-count; the gone keep theirs as ghosts)."""
        for p, st in stats.items():
            key = (p, st[5])
            if key in self._cache and growth.get(p, 0) <= 0:
                continue
            v = pss(p)
            if v is None:
                continue
            self._cache[key] = (v, st[0], st[2])
            self._counted[key] = v
            self._first_rss.pop(key, None)
            self.precise_reads += 1
        return self._estimate(stats)[0]

    def _exact(self, stats: dict, growth: dict, now: float, t: float, *,
               early_stop: bool = True) -> tuple[int, bool]:
        exact, cache = 0, {}
        # the processes that grew most first: once those alone are over the limit (every PSS is
        # >= 0) the session is over it, and the rest need not be read (a call growing fast is
        # stopped ~N x 10 ms sooner)
        for p in sorted(stats, key=lambda q: growth.get(q, 0), reverse=True):
            s = stats[p]
            v = pss(p)
            if v is None:
                continue  # gone meanwhile
            cache[(p, s[5])] = (v, s[0], s[2])
            exact += v
            if early_stop and exact > self.limit and len(cache) < len(stats):
                self.precise_reads += len(cache)
                self._cache.update(cache)
                for k, v in cache.items():
                    self._counted[k] = v[0]
                self._last_exact_total = exact
                self._note(exact)
                return exact, True
        self.precise_reads += len(cache)
        self.exact_passes += 1
        self._cache, self._ghosts, self._first_rss = cache, 0, {}
        self._counted = {k: v[0] for k, v in cache.items()}
        cost = time.monotonic() - t
        self._last_exact = now
        self._next_exact = time.monotonic() + max(TICK_S, cost / PRECISE_CPU_SHARE)
        self._last_exact_total = exact
        self._note(exact)
        return exact, True

    def _estimate(self, stats: dict) -> tuple[int, dict[int, int]]:
        """The estimate from the last exact pass (see the module docstring), and each process's
        growth since; files gone processes as ghosts. Only /proc/PID/stat values are used."""
        live = {(p, s[5]) for p, s in stats.items()}
        for k in [k for k in self._counted if k not in live]:
            # gone: what it was counted for stays counted (its shared pages now count to survivors)
            self._ghosts += self._counted.pop(k)
            self._first_rss.pop(k, None)
        est, growth, forked = self._ghosts, {}, False
        for p, (faults, _cpu, rss, _st, _ppid, start, _reaped) in stats.items():
            c = self._cache.get((p, start))
            if c is None or faults < c[1]:
                forked = True
                # forked since the last exact pass, from processes that were in it (alive, or ghosts
                # now): what it shares with them is counted there; what it has of its own came with
                # its own faults (counted from 0 at its fork) or, for huge pages, grew its resident
                # size since the watchdog first saw it
                c = (0, 0, self._first_rss.setdefault((p, start), rss))
            # no new anonymous page without a fault (4 KiB each); a huge page also grows the RSS
            e = min(rss * PAGE, c[0] + (faults - c[1] + max(0, rss - c[2])) * PAGE)
            self._counted[(p, start)] = max(e, self._counted.get((p, start), 0))
            growth[p] = e - c[0]
            est += e
        if forked and self.outside_pid is not None:
            # a fork shares pages with the zygote 1/(k+1) more ways: the session's part of them grows
            # (by at most what the zygote has resident)
            z = stat(self.outside_pid)
            est += (z[2] if z is not None else 0) * PAGE
        return est, growth

    def estimate(self, pids: list[int]) -> int:
        """The estimate alone, no exact read (what the ticks compare with the limit; for tests)."""
        with self.lock:
            return self._estimate({p: s for p in pids if (s := stat(p)) is not None})[0]

    def exact(self, pids: list[int]) -> int:
        """An exact pass now (every process's PSS read; the estimate restarts from it)."""
        with self.lock:
            stats = {p: s for p in pids if (s := stat(p)) is not None}
            self._estimate(stats)
            return self._exact(stats, {}, time.monotonic(), time.monotonic(), early_stop=False)[0]

    def quick_upper(self, fresh: list[int]) -> int | None:
        """The upper bound (sum of resident sizes) with ``fresh`` read now and every other process
        as the last look found it (a call's processes are the ones that changed; idle ones are
        looked at by the ticks). None when a process is gone or there was no look yet."""
        with self.lock:
            if not self._rss:
                return None
            rss = dict(self._rss)
            for p in fresh:
                st = stat(p)
                if st is None:
                    return None
                rss[p] = st[2]
            return sum(rss.values()) * PAGE

    def _note(self, total: int) -> None:
        self.last_total = total
        if total > self.peak:
            self.peak = total


def _pause(pids: list[int]) -> list[tuple[int, int]]:
    """SIGSTOP each of ``pids`` through a pidfd; (pid, pidfd) of those stopped."""
    fds = []
    for p in pids:
        try:
            fd = os.pidfd_open(p)
        except OSError:
            continue
        try:
            signal.pidfd_send_signal(fd, signal.SIGSTOP)
            fds.append((p, fd))
        except OSError:
            os.close(fd)
    return fds


def _resume(held: list[tuple[int, int]], kill: set[int] = frozenset()) -> None:
    """SIGCONT what ``_pause`` stopped (SIGKILL first those in ``kill``) and close the pidfds."""
    for pid, fd in held:
        try:
            if pid in kill:
                signal.pidfd_send_signal(fd, signal.SIGKILL)
            signal.pidfd_send_signal(fd, signal.SIGCONT)
        except OSError:
            pass
        finally:
            os.close(fd)


# ----------------------------------------------------------------------------- CPU
class CpuGuard:
    """One session's CPU share by a token bucket and SIGSTOP/SIGCONT (see the module docstring)."""

    def __init__(self, cpus: float):
        self.cpus = max(0.01, float(cpus))
        self.burst = self.cpus * BURST_S
        self.allowance = self.burst
        self._primed = False  # the first tick only takes the session's CPU so far as its start
        self._total = 0
        self._last = time.monotonic()
        self._stopped: dict[int, int] = {}  # pid -> pidfd
        self._stopped_at = 0.0
        self.throttled = 0
        self.lock = threading.Lock()  # the watchdog thread's ticks vs at_call_boundary() in the session's thread

    def tick(self, stats: dict[int, tuple], never_stop: set[int], enumerate_pids) -> None:
        """``stats``: /proc/PID/stat of every session process (``stat()``); ``enumerate_pids()``: the
        session's processes now; ``never_stop``: the keeper and init (launcher-side plumbing)."""
        with self.lock:
            self._tick(stats, never_stop, enumerate_pids)

    def at_call_boundary(self) -> None:
        """A call starts or has returned: continue what is stopped and forgive the debt left (the
        launcher is about to send the next its request, or the head must fork its next; what the call
        started is swept). At most a tick's worth of CPU per call is gained this way, and calls come
        from the client, not from jailed code."""
        with self.lock:
            if self._stopped:
                self._resume()
            self.allowance = max(self.allowance, 0.0)

    def _tick(self, stats: dict[int, tuple], never_stop: set[int], enumerate_pids) -> None:
        now = time.monotonic()
        dt, self._last = now - self._last, now
        # The session's CPU so far: what its live processes used plus what they reaped from children
        # that have exited (the kernel adds a reaped child's time to its parent's cutime/cstime, and
        # every session process is reaped by one: its parent or the session's init) — so processes
        # that live and exit between two ticks are counted too.
        total = sum(s[1] + s[6] for s in stats.values())
        used = max(0, total - self._total) if self._primed else 0
        self._total, self._primed = total, True
        self.allowance = min(self.burst, self.allowance + self.cpus * dt) - used / HZ
        if self._stopped:
            if self.allowance >= self.burst * 0.5 or now - self._stopped_at >= MAX_STOP_S:
                self._resume()
                return
            for p, st in stats.items():  # continued by a one-off kernel event (e.g. a parent-death
                if p in self._stopped and st[3] not in ("T", "t", "Z", "X"):  # signal): stop again
                    self._stop(p)
            self._hold(enumerate_pids, never_stop)  # and what was forked meanwhile
            return
        if self.allowance < 0 and used > 0:
            self._stopped_at = now
            self.throttled += 1
            self._hold(enumerate_pids, never_stop)

    def _hold(self, enumerate_pids, never_stop: set[int]) -> None:
        """Stop every session process but ``never_stop``, looking again until a look finds none
        that is not stopped yet (a stopped process forks no more; at most 4 looks): a chain of
        short-lived processes that fork their successors cannot run on past the stop."""
        for _ in range(4):
            new = [p for p in enumerate_pids() if p not in never_stop and p not in self._stopped]
            if not new:
                return
            for p in new:
                self._stop(p)

    def _stop(self, pid: int) -> None:
        if pid in self._stopped:  # it ran although stopped (continued by a one-off kernel event: stop again)
            try:
                signal.pidfd_send_signal(self._stopped[pid], signal.SIGSTOP)
            except OSError:
                pass
            return
        self._stopped.update(_pause([pid]))

    def resume(self) -> None:
        with self.lock:
            self._resume()

    def _resume(self) -> None:
        stopped, self._stopped = self._stopped, {}
        _resume(list(stopped.items()))


# ----------------------------------------------------------------------------- one session
class SessionWatch:
    """The watchdog's view of one session: which bounds it enforces (the kernel does the others)."""

    def __init__(self, session, *, memory: bool, cpu: bool):
        lim = session.profile.limits
        self._session = weakref.ref(session)
        zp = getattr(getattr(getattr(session, "zygote", None), "proc", None), "pid", None)
        self.memory = MemoryGuard(lim.session_memory_mb * 1024 * 1024, zp) if memory else None
        self.cpu = CpuGuard(lim.session_cpus) if cpu else None
        self.active = self.memory is not None or self.cpu is not None
        self._last_tick = 0.0
        self._known: dict[int, int] = {}  # pid -> start time of what the last look found

    # the launcher's own thread (the session lock is held by the caller)
    def over_after_call(self, roles) -> str | None:
        """At the end of a successful call, before its process becomes the head: a message when the
        session is over ``session_memory_mb``, else None. ``roles``: the session's processes (its
        ``next``, ``keeper``, ``init``, ``head``, ``snapshots``). Cheap when far from the bound: the call's
        process and what it forked read now, the others as the last tick found them (<= 0.5 s)."""
        if self.memory is None:
            return None
        nxt = roles.next.pid
        up = self.memory.quick_upper([nxt] + [p for p in descendants(nxt)])
        state = {roles.keeper.pid, roles.init.pid, roles.head.pid} | \
            {p.pid for p, _ in list(roles.snapshots.values())}
        if up is not None and up <= self.memory.limit and set(self.memory._rss) >= state:
            return None  # every process of the state was in the last look (else: the full look below)
        total, _ = self.memory.total(session_pids(roles.keeper.pid, roles.init.pid), urgent=True)
        if total <= self.memory.limit:
            return None
        self.memory.kills += 1
        return self._message(total, "after the call")

    def _message(self, total: int, when: str) -> str:
        lim = self.memory.limit >> 20
        return (f"the session's processes together held {total >> 20} MB {when}, over the profile's "
                f"session_memory_mb = {lim} MB (all of them count, snapshots included; the bound is kept by the "
                "launcher's watchdog, there is no cgroup memory controller here). The call was killed and "
                "discarded; the session is unchanged. Free memory (del large objects), delete snapshots "
                "(delete_snapshot) or reset")

    # the watchdog thread
    def due(self, now: float) -> bool:
        """A call runs (or processes are stopped): every tick; otherwise every IDLE_TICK_S."""
        s = self._session()
        if s is None:
            return False
        busy = s.running_call() is not None or (self.cpu is not None and bool(self.cpu._stopped))
        if now - self._last_tick < (TICK_S * 0.9 if busy else IDLE_TICK_S):
            return False
        self._last_tick = now
        return True

    def _pids(self, s) -> list[int]:
        """The session's processes: the tree walk, plus every process an earlier look found that is
        still there (same start time). The walk reads each process's ``children`` file, which can miss
        one being re-parented (a head whose parent, the old head, was just killed); a process missed
        once and seen again would otherwise count all its CPU time again."""
        pids = session_pids(s.keeper.pid, s.init.pid)
        walked = set(pids)
        for p, start in list(self._known.items()):
            if p not in walked:
                st = stat(p)
                if st is not None and st[5] == start:
                    pids.append(p)
        return pids

    def tick(self) -> None:
        s = self._session()
        if s is None or s.closed or s.init is None:
            return
        pids = self._pids(s)
        stats = {p: st for p in pids if (st := stat(p)) is not None}
        self._known = {p: st[5] for p, st in stats.items()}
        if self.cpu is not None:
            self.cpu.tick(stats, {s.keeper.pid, s.init.pid}, lambda: self._pids(s))
        if self.memory is None:
            return
        hold = set(pids) - {s.keeper.pid, s.init.pid} - (set(self.cpu._stopped) if self.cpu else set())
        paused: list[tuple[int, int]] = []
        kill: set[int] = set()
        try:
            kill = self._enforce(s, pids, hold, paused)
        finally:
            _resume(paused, kill)

    def _enforce(self, s, pids: list[int], hold: set[int], paused: list) -> set[int]:
        """Measure; over the bound, abort the call (or sweep between calls). Returns the stopped
        processes to kill before they are continued: a killed call's, not its head's or snapshots'."""
        total, exact = self.memory.total(pids, pausable=hold, paused=paused)
        if total <= self.memory.limit or not exact:
            return set()
        if s.abort_call("SessionMemoryLimit", self._message(total, "during the call")):
            self.memory.kills += 1
            log.warning("session %s: over session_memory_mb (%d MB): the call was killed", s.id, total >> 20)
            state = {p.pid for p in [s.head, *[q for q, _ in list(s.snapshots.values())]] if p is not None}
            return {pid for pid, _ in paused} - state
        _resume(paused)  # the sweep below runs with everything continued (it may freeze the cgroup)
        paused.clear()
        if not s.lock.acquire(blocking=False):
            return set()  # a call is starting or finishing: the end-of-call check or the next tick sees it
        try:
            if s.closed:
                return set()
            killed = s.sweep_strays()
        finally:
            s.lock.release()
        if killed:
            self.memory.kills += 1
            log.warning("session %s: over session_memory_mb between calls (%d MB): %d process(es) that were not "
                        "its head or a snapshot killed", s.id, total >> 20, killed)
        # else the head and the snapshots alone: the watchdog never kills those; the next call fails
        # at its end-of-call check with the explanation (free memory, delete snapshots or reset)
        return set()

    def at_call_boundary(self) -> None:
        """Nothing of the session is stopped when a call starts or returns (CpuGuard.at_call_boundary)."""
        if self.cpu is not None:
            self.cpu.at_call_boundary()

    def close(self) -> None:
        if self.cpu is not None:
            self.cpu.resume()


# ----------------------------------------------------------------------------- the thread
class _Watchdog:
    """One thread for every watched session of this launcher process; it exits when none is left
    (so a process that forks later is single-threaded again) and starts again with the next."""

    def __init__(self):
        self._lock = threading.Lock()
        self._watches: list[SessionWatch] = []
        self._thread: threading.Thread | None = None
        self._wake = threading.Event()

    def add(self, w: SessionWatch) -> None:
        with self._lock:
            self._watches.append(w)
            if self._thread is None or not self._thread.is_alive():
                self._wake.clear()
                self._thread = threading.Thread(target=self._run, daemon=True, name="session-watchdog")
                self._thread.start()

    def remove(self, w: SessionWatch) -> None:
        with self._lock:
            if w in self._watches:
                self._watches.remove(w)
            last = not self._watches
            t = self._thread
        w.close()
        if last and t is not None and t is not threading.current_thread():
            self._wake.set()
            t.join(2.0)

    def _run(self) -> None:
        while True:
            with self._lock:
                watches = list(self._watches)
                if not watches:
                    self._thread = None
                    return
            now = time.monotonic()
            for w in watches:
                try:
                    if w.due(now):
                        w.tick()
                except Exception:  # noqa: BLE001 - a watchdog that dies bounds nothing: log, go on
                    log.exception("watchdog tick failed")
            if self._wake.wait(TICK_S):
                self._wake.clear()


WATCHDOG = _Watchdog()

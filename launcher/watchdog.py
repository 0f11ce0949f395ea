"""Session-wide memory and CPU bounds where the kernel gives none: a launcher-side watchdog over /proc.

Where a cgroup memory controller is writable (v2 delegated, or v1 as root) the kernel bounds a
session's memory (``containment.py``); where the v2 ``cpu`` controller is delegated, its CPU share.
Everywhere else (an unprivileged launcher without delegation; CPU: also root on a hybrid host,
whose v1 cpu controller is not used) this module enforces ``session_memory_mb`` and
``session_cpus`` from outside the session: one launcher thread reads ``/proc`` of every session's
processes (the keeper, the session's pid-namespace init and all its descendants: orphans are
re-parented to that init, so nothing a session forks is missed) every ``TICK_S``.

**Memory.** What a session holds is the sum over its processes of their proportional set size of
anonymous and shared memory (``Pss_Anon + Pss_Shmem`` of ``/proc/PID/smaps_rollup``): a page
shared by k processes counts 1/k to each, so copy-on-write copies across forks and snapshots are
counted once each, and pages shared with the zygote or other sessions only by their share. That
read walks the page tables (~8 ms for a 600 MB process, ~17 ms under load), so it is done only when
needed: first an upper bound from ``/proc/PID/stat`` (resident pages, ~15 us a process: Pss <= Rss);
below the bound, nothing more. Over it, the cached PSS of every process whose page-fault count
and resident size did not change since it was read (a process that took no fault has no new page)
plus the resident size of the others; only when that is still over the bound are the changed
processes read exactly — at most once per ``max(TICK_S, 4 x its cost)`` (<= 25% of one core, and
only while the session is near its bound), and all of them again every ``FULL_REFRESH_S``. Over the bound:

* during a call, the call is aborted: its process (the next) is killed through its pidfd and the
  call returns ``SessionMemoryLimit``; the sweep after it kills what the call forked. The session's
  state and snapshots are untouched.
* at the end of every successful call (before its process becomes the head) the state that would be
  kept (keeper, init, snapshots, the call's process) is measured the same way; over the bound the call
  is discarded with ``SessionMemoryLimit`` — so a call too short for a tick cannot leave the session
  over its bound.
* between calls (memory grown by code an earlier call left in the head or a snapshot, e.g. a timer
  signal handler), every process that is not the keeper, init, the head or a snapshot is killed (the
  launcher's sweep, under the session lock); the head and snapshots are never killed by the watchdog.

**CPU.** The session's CPU time (utime + stime of its processes, from ``/proc/PID/stat``) is drawn
from a token bucket filled at ``session_cpus`` CPU-seconds per second (burst ``BURST_S`` of it); when
it is empty the processes that ran in the last tick are stopped (SIGSTOP through a pidfd) until the
bucket is full again — like ``cpu.max``, a session over its share runs slower, it is not killed.
Stopped processes are continued at the latest after ``MAX_STOP_S``, when the session closes and when
the watchdog stops; jailed code cannot continue one (seccomp refuses signals to other processes).

What it does not do: a hard bound. Between two ticks (``TICK_S``) a call may allocate past the bound
(by at most what it touches in that time, each process still under its ``RLIMIT_AS``); the PSS of a
process that took no fault is stale when one that shares its pages changed (refreshed every
``FULL_REFRESH_S``); kernel memory the session causes (page tables, socket buffers, pipe buffers) is
not counted; a process the kernel accounts in clock ticks (10 ms) may run that long between checks.
The kernel bounds (cgroup ``memory.max``/``cpu.max``) are exact and preferred wherever available.
"""
from __future__ import annotations

import logging
import os
import signal
import threading
import time
import weakref

from .procs import children_of

log = logging.getLogger("build123d_launcher.watchdog")

PAGE = os.sysconf("SC_PAGE_SIZE")
HZ = os.sysconf("SC_CLK_TCK")
TICK_S = 0.1
FULL_REFRESH_S = 5.0
PRECISE_CPU_SHARE = 0.25   # at most this share of one core on exact (smaps_rollup) reads, while over
BURST_S = 0.3              # CPU-seconds a session may run ahead of its share
MAX_STOP_S = 1.0


# ----------------------------------------------------------------------------- /proc reads
def stat(pid: int) -> tuple[int, int, int, str] | None:
    """(minor+major faults, utime+stime in clock ticks, resident pages, state) of ``pid``; None when gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    rest = data[data.rfind(b")") + 2:].split()
    try:  # fields after comm: state(3) ... minflt(10) majflt(12) utime(14) stime(15) ... rss(24)
        return int(rest[7]) + int(rest[9]), int(rest[11]) + int(rest[12]), int(rest[21]), rest[0].decode()
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

    def __init__(self, limit_bytes: int):
        self.limit = limit_bytes
        self.lock = threading.Lock()
        self._cache: dict[int, tuple[int, int, int]] = {}  # pid -> (pss bytes, faults, rss pages) when read
        self._next_precise = 0.0
        self._last_full = 0.0
        self.peak = 0
        self.kills = 0
        self.precise_reads = 0
        self.last_total = 0

    def total(self, pids: list[int], *, urgent: bool = False) -> tuple[int, bool]:
        """(bytes, exact) for ``pids``. ``exact`` False: the bytes are an upper bound that is within
        the limit, or an estimate not yet read exactly (rate limit; ``urgent`` ignores the limit)."""
        with self.lock:
            stats = {p: s for p in pids if (s := stat(p)) is not None}
            upper = sum(s[2] for s in stats.values()) * PAGE
            if upper <= self.limit:
                self._note(upper)
                return upper, False
            now = time.monotonic()
            full = not urgent and now - self._last_full >= FULL_REFRESH_S
            est, changed = 0, []
            for p, (faults, _cpu, rss, _st) in stats.items():
                c = self._cache.get(p)
                if c is not None and not full and c[1] == faults and c[2] == rss:
                    est += c[0]
                else:
                    est += rss * PAGE
                    changed.append(p)
            if est <= self.limit or not changed:
                self._note(est)
                return est, not changed
            if not urgent and now < self._next_precise:
                return est, False
            t = time.monotonic()
            for p in changed:
                v = pss(p)
                s = stats[p]
                if v is None:
                    continue  # gone meanwhile
                self._cache[p] = (v, s[0], s[2])
                est += v - s[2] * PAGE
                self.precise_reads += 1
            cost = time.monotonic() - t
            self._next_precise = time.monotonic() + max(TICK_S, cost / PRECISE_CPU_SHARE)
            if full:
                self._last_full = now
                self._cache = {p: v for p, v in self._cache.items() if p in stats}
            self._note(est)
            return est, True

    def _note(self, total: int) -> None:
        self.last_total = total
        if total > self.peak:
            self.peak = total


# ----------------------------------------------------------------------------- CPU
class CpuGuard:
    """One session's CPU share by a token bucket and SIGSTOP/SIGCONT (see the module docstring)."""

    def __init__(self, cpus: float):
        self.cpus = max(0.01, float(cpus))
        self.burst = self.cpus * BURST_S
        self.allowance = self.burst
        self._ticks: dict[int, int] | None = None  # None until the first tick (no charge for the past)
        self._last = time.monotonic()
        self._stopped: dict[int, int] = {}  # pid -> pidfd
        self._stopped_at = 0.0
        self.throttled = 0

    def tick(self, stats: dict[int, tuple], never_stop: set[int]) -> None:
        now = time.monotonic()
        dt, self._last = now - self._last, now
        used, ran = 0, []
        ticks = {}
        for p, s in stats.items():
            t = s[1]
            ticks[p] = t
            d = t - (self._ticks or {}).get(p, 0)
            if d > 0:
                used += d
                if p not in never_stop:
                    ran.append(p)
        if self._ticks is None:
            used, ran = 0, []
        self._ticks = ticks
        self.allowance = min(self.burst, self.allowance + self.cpus * dt) - used / HZ
        if self._stopped:
            if self.allowance >= self.burst * 0.5 or now - self._stopped_at >= MAX_STOP_S:
                self.resume()
            else:
                for p in ran:  # something continued it or it was forked meanwhile: stop it too
                    self._stop(p)
            return
        if self.allowance < 0 and ran:
            self._stopped_at = now
            self.throttled += 1
            for p in ran:
                self._stop(p)

    def _stop(self, pid: int) -> None:
        if pid in self._stopped:
            return
        try:
            fd = os.pidfd_open(pid)
        except OSError:
            return
        try:
            signal.pidfd_send_signal(fd, signal.SIGSTOP)
        except OSError:
            os.close(fd)
            return
        self._stopped[pid] = fd

    def resume(self) -> None:
        stopped, self._stopped = self._stopped, {}
        for fd in stopped.values():
            try:
                signal.pidfd_send_signal(fd, signal.SIGCONT)
            except OSError:
                pass
            finally:
                os.close(fd)


# ----------------------------------------------------------------------------- one session
class SessionWatch:
    """The watchdog's view of one session: which bounds it enforces (the kernel does the others)."""

    def __init__(self, session, *, memory: bool, cpu: bool):
        lim = session.profile.limits
        self._session = weakref.ref(session)
        self.memory = MemoryGuard(lim.session_memory_mb * 1024 * 1024) if memory else None
        self.cpu = CpuGuard(lim.session_cpus) if cpu else None
        self.active = self.memory is not None or self.cpu is not None

    # the launcher's own thread (the session lock is held by the caller)
    def over_after_call(self, kept: list[int]) -> str | None:
        """At the end of a successful call: a message when keeping its state would put the session
        over ``session_memory_mb`` (``kept``: the processes that would remain), else None."""
        if self.memory is None:
            return None
        total, _ = self.memory.total(kept, urgent=True)
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
    def tick(self) -> None:
        s = self._session()
        if s is None or s.closed or s.init is None:
            return
        pids = session_pids(s.keeper.pid, s.init.pid)
        if self.cpu is not None:
            stats = {p: st for p in pids if (st := stat(p)) is not None}
            self.cpu.tick(stats, {s.keeper.pid, s.init.pid})
        if self.memory is None:
            return
        total, exact = self.memory.total(pids)
        if total <= self.memory.limit or not exact:
            return
        if s.abort_call("SessionMemoryLimit", self._message(total, "during the call")):
            self.memory.kills += 1
            log.warning("session %s: over session_memory_mb (%d MB): the call was killed", s.id, total >> 20)
            return
        if not s.lock.acquire(blocking=False):
            return  # a call is starting or finishing: the end-of-call check or the next tick sees it
        try:
            if s.closed:
                return
            killed = s.sweep_strays()
        finally:
            s.lock.release()
        if killed:
            self.memory.kills += 1
            log.warning("session %s: over session_memory_mb between calls (%d MB): %d process(es) that were not "
                        "its head or a snapshot killed", s.id, total >> 20, killed)
        # else the head and the snapshots alone: the watchdog never kills those; the next call fails
        # at its end-of-call check with the explanation (free memory, delete snapshots or reset)

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
            for w in watches:
                try:
                    w.tick()
                except Exception:  # noqa: BLE001 - a watchdog that dies bounds nothing: log, go on
                    log.exception("watchdog tick failed")
            if self._wake.wait(TICK_S):
                self._wake.clear()


WATCHDOG = _Watchdog()

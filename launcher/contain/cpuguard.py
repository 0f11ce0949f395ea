"""A session's CPU share, where no delegated cgroup v2 ``cpu`` controller bounds it.

Like ``cpu.max``, a session over its share runs slower, it is not killed: ``CpuGuard`` stops its
processes (SIGSTOP by pidfd) while its token bucket is empty. Jailed code cannot continue one
(seccomp refuses signals to other processes).

Does not: account finer than the kernel's clock ticks (10 ms), or look at a session between calls
more often than the watchdog's idle tick.
"""
from __future__ import annotations

import signal
import threading
import time

from launcher.contain import sampling

BURST_S = 0.3              # CPU-seconds a session may run ahead of its share
MAX_STOP_S = 1.0


class CpuGuard:
    """One session's CPU share by a token bucket and SIGSTOP/SIGCONT.

    The session's CPU time (utime + stime of its processes plus the cutime + cstime they reaped from
    exited children: processes too short-lived for a look count too) is drawn from a bucket filled
    at ``session_cpus`` CPU-seconds per second (burst ``BURST_S`` of it). When it is empty every
    process of the session but the keeper and init is stopped (SIGSTOP through a pidfd; looked for
    again until none is left running, so short-lived processes that fork their successors stop too)
    until the bucket is half full again. Stopped processes are continued at the latest after
    ``MAX_STOP_S``, when a call (a save and a restore too) starts or returns (the debt left is
    forgiven then: at most a tick's worth of CPU per call), when the session closes and when the
    watchdog stops. ``never_stop`` (from the watchdog) also holds the process serving a call in
    flight when the share is a CPU or more (``SessionWatch._exempt``).
    """

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
        self.allowance = min(self.burst, self.allowance + self.cpus * dt) - used / sampling.HZ
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
        self._stopped.update(sampling.pause([pid]))

    def stopped(self) -> set[int]:
        """The processes this guard holds stopped now."""
        return set(self._stopped)

    def resume(self) -> None:
        with self.lock:
            self._resume()

    def _resume(self) -> None:
        stopped, self._stopped = self._stopped, {}
        sampling.resume(list(stopped.items()))

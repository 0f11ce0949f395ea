"""The launcher's watchdog: session-wide memory and CPU bounds where the kernel gives none.

Where a cgroup memory controller is writable (v2 delegated, or v1 as root) the kernel bounds a
session's memory (``containment.py``); where the v2 ``cpu`` controller is delegated, its CPU share.
Everywhere else one launcher thread looks at every watched session's processes in ``/proc`` every
``TICK_S`` while a call runs, every ``IDLE_TICK_S`` between calls: ``memguard.MemoryGuard`` keeps
``session_memory_mb``, ``cpuguard.CpuGuard`` keeps ``session_cpus``. Over the memory bound, a call
running is aborted (``SessionMemoryLimit``; its process is killed, the session unchanged); a call
that returns over it is discarded (checked at its end, so no call is too short for a look); between
calls, every process that is not the keeper, init, the head or a snapshot is swept.

Blocks: a session outgrowing its bounds through children, snapshots or a head left running code.
Does not: keep a hard bound (see ``memguard``); kill the head or a snapshot (the next call fails
with the explanation). The kernel bounds (``memory.max``/``cpu.max``) are exact and preferred.
"""
from __future__ import annotations

import logging
import threading
import time
import weakref

from launcher.contain import sampling
from launcher.contain.cpuguard import CpuGuard
from launcher.contain.memguard import MemoryGuard
from launcher.contain.procs import descendants

log = logging.getLogger("build123d_launcher.watchdog")

IDLE_TICK_S = 0.5         # sessions with no call running are looked at this often


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
        #: the processes that may be serving the call in flight (set by the session once it sent the
        #: request, emptied at every call boundary): not stopped by a CPU share of a CPU or more
        self.serving: frozenset[int] = frozenset()

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
        if up is not None and up <= self.memory.limit and self.memory.last_look_saw(state):
            return None  # every process of the state was in the last look (else: the full look below)
        total, _ = self.memory.total(sampling.session_pids(roles.keeper.pid, roles.init.pid), urgent=True)
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
        busy = s.running_call() is not None or (self.cpu is not None and bool(self.cpu.stopped()))
        if now - self._last_tick < (sampling.TICK_S * 0.9 if busy else IDLE_TICK_S):
            return False
        self._last_tick = now
        return True

    def _pids(self, s) -> list[int]:
        """The session's processes: the tree walk, plus every process an earlier look found that is
        still there (same start time). The walk reads each process's ``children`` file, which can miss
        one being re-parented (a head whose parent, the old head, was just killed); a process missed
        once and seen again would otherwise count all its CPU time again."""
        pids = sampling.session_pids(s.keeper.pid, s.init.pid)
        walked = set(pids)
        for p, start in list(self._known.items()):
            if p not in walked:
                st = sampling.stat(p)
                if st is not None and st[5] == start:
                    pids.append(p)
        return pids

    def tick(self) -> None:
        s = self._session()
        if s is None or s.closed or s.init is None:
            return
        leaving = s.retiring()  # their memory is being given back; they run nothing more of the session's
        pids = [p for p in self._pids(s) if p not in leaving]
        stats = {p: st for p in pids if (st := sampling.stat(p)) is not None}
        self._known = {p: st[5] for p, st in stats.items()}
        if self.cpu is not None:
            self.cpu.tick(stats, {s.keeper.pid, s.init.pid} | self._exempt(), lambda: self._pids(s))
        if self.memory is None:
            return
        hold = set(pids) - {s.keeper.pid, s.init.pid} - (self.cpu.stopped() if self.cpu else set())
        paused: list[tuple[int, int]] = []
        kill: set[int] = set()
        try:
            kill = self._enforce(s, pids, hold, paused)
        finally:
            sampling.resume(paused, kill)

    def _enforce(self, s, pids: list[int], hold: set[int], paused: list) -> set[int]:
        """Measure; over the bound, abort the call (or sweep between calls). Returns the stopped
        processes to kill before they are continued: a killed call's, not its head's or snapshots'."""
        total, exact = self.memory.total(pids, pausable=hold, paused=paused)
        if total <= self.memory.limit or not exact:
            return set()
        if s.abort_call("SessionMemoryLimit", self._message(total, "during the call")):
            self.memory.kills += 1
            log.warning("session %s: over session_memory_mb (%d MB): the call was killed", s.id, total >> 20)
            state = {p.pid for p in [s.chain.head, *[q for q, _ in list(s.snapshots.values())]] if p is not None}
            return {pid for pid, _ in paused} - state
        sampling.resume(paused)  # the sweep below runs with everything continued (it may freeze the cgroup)
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

    def _exempt(self) -> set[int]:
        """The call's own process (or, until a read-only call's server is known, the next and its
        spare) when the share is at least one CPU: a jailed process has one thread (seccomp refuses
        new ones), so the one serving cannot outrun such a share alone; stopping it only made the call
        wait for what the session's other processes (idle warm-ups, the call's children) used. Those
        are still stopped. Under a share below one CPU nothing is exempt."""
        serving = self.serving
        return set(serving) if serving and self.cpu is not None and self.cpu.cpus >= 1 else set()

    def at_call_boundary(self) -> None:
        """Nothing of the session is stopped when a call starts or returns (CpuGuard.at_call_boundary);
        no process is the call's until the session says so again (``serving``)."""
        self.serving = frozenset()
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
            if self._wake.wait(sampling.TICK_S):
                self._wake.clear()


WATCHDOG = _Watchdog()

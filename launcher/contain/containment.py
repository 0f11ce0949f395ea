"""Containment of a session's processes, enforced from outside the session (the launcher + kernel).

**cgroup** (where a writable cgroup v2 subtree exists, ``cgroups.py``): each session gets
``build123d-launcher/<launcher pid>-<n>-<session id>``; the keeper is moved there before it makes
the session's namespaces, so everything the session ever runs is inside, whatever clone flags it
uses. After every call, snapshot change and restore, ``SessionContainment.sweep`` kills what is
not a known process (frozen, by pidfd); close is ``cgroup.kill``. The session-wide bounds go there
too: v2 ``memory.max``/``pids.max``/``cpu.max`` where delegated, else (root on a hybrid host) v1.
**seccomp + sweep** (always on; the only mechanism for an unprivileged launcher without a delegated
cgroup): the jail's seccomp filter allows fork-like clones only, so every process a call makes
descends from its next, and ``procs.kill_strays`` kills every one in the pid namespace that is
not init, head, next, a snapshot or dying.

Does not contain: what a head rewritten by earlier user code forks *between* two sweeps; which
process the kernel's OOM killer picks at the session's memory bound (the call first: ``_oom``).
"""
from __future__ import annotations

import atexit
import itertools
import logging
import os
import signal
import threading

from launcher.contain import cgroups
from launcher.contain.procs import children_of

log = logging.getLogger("build123d_launcher.containment")

_ORPHANS: list[str] = []  # cgroups of closed sessions not yet empty: removed by later sweeps
_ORPHANS_LOCK = threading.Lock()
_SEQ = itertools.count(1)


def _orphan(d: str) -> None:
    with _ORPHANS_LOCK:
        if d not in _ORPHANS:
            _ORPHANS.append(d)


def _tidy_orphans() -> None:
    with _ORPHANS_LOCK:
        for d in list(_ORPHANS):
            try:
                if cgroups.rmdir_tree(d):
                    _ORPHANS.remove(d)
            except OSError:
                _ORPHANS.remove(d)


atexit.register(_tidy_orphans)


def describe() -> dict:
    """What `doctor` shows: the mechanism in use and why not the other."""
    h = cgroups.hierarchy()
    if h.v2:
        mech = f"cgroup v2 ({h.v2}/<launcher pid>-<n>-<session>: cgroup.kill per call and per session)"
    else:
        mech = f"seccomp clone-flag filter + pid-namespace sweep (no cgroup: {h.reason})"
    kernel = {c: "cgroup v2" for c in h.v2_controllers} | {c: "cgroup v1" for c in h.v1 if c not in h.v2_controllers}
    bounds = [f"memory: {kernel['memory']} ({'memory.max' if kernel['memory'] == 'cgroup v2' else 'memory.limit_in_bytes'}, "
              "the kernel's exact bound)" if "memory" in kernel else
              "memory: the launcher's watchdog (sum of the processes' PSS from /proc, checked every 0.1 s and at "
              "the end of every call; not a hard bound: no writable cgroup memory controller)",
              "processes: RLIMIT_NPROC in the session's user namespace" +
              (f" + {kernel['pids']} pids.max" if "pids" in kernel else ""),
              "cpu: cgroup v2 (cpu.max)" if "cpu" in h.v2_controllers else
              "cpu: the launcher's watchdog (SIGSTOP/SIGCONT throttling to session_cpus; no delegated cgroup v2 "
              "cpu controller)"]
    return {"mechanism": mech, "session_bounds": bounds, **h.describe()}


def clone_filtered(evidence: dict) -> bool:
    """True when the session's seccomp filter (which allows fork-like clones only) is applied."""
    sc = evidence.get("seccomp") if isinstance(evidence, dict) else None
    return isinstance(sc, dict) and sc.get("status") == "applied" and not sc.get("threads_allowed")


class SessionContainment:
    """One session's cgroups (all methods are no-ops when the host has no writable cgroup v2)."""

    def __init__(self, sid: str, keeper_pid: int, limits):
        self.hier = cgroups.hierarchy()
        self.dir: str | None = None
        self.v1_dirs: list[str] = []
        self.v1_applied: set[str] = set()  # v1 controllers whose bound is on this session
        self.killed_strays = 0
        self._oom_set: dict[int, int] = {}  # pid -> oom_score_adj the launcher gave it
        name = f"{os.getpid()}-{next(_SEQ)}-{sid}"  # unique even for several Launchers in one process
        if self.hier.v2:
            d = os.path.join(self.hier.v2, name)
            try:
                os.mkdir(d)
                self._limits_v2(d, limits)
                cgroups.move(keeper_pid, d)
                self.dir = d
            except OSError as e:
                log.warning("session %s: no cgroup containment (%s); seccomp + sweep only", sid, e)
                try:
                    os.rmdir(d)
                except OSError:
                    pass
        for c, top in self.hier.v1.items():
            d = os.path.join(top, name)
            try:
                os.mkdir(d)
                self._limits_v1(c, d, limits)
                cgroups.move(keeper_pid, d)
                self.v1_dirs.append(d)
                self.v1_applied.add(c)
            except OSError as e:
                log.warning("session %s: v1 %s bound not applied (%s)", sid, c, e)
                try:
                    os.rmdir(d)
                except OSError:
                    pass

    @property
    def active(self) -> bool:
        return self.dir is not None

    @property
    def memory_mechanism(self) -> str | None:
        """"cgroup-v2"/"cgroup-v1" when the kernel bounds the session's memory, else None."""
        if self.dir is not None and "memory" in self.hier.v2_controllers:
            return "cgroup-v2"
        if "memory" in self.v1_applied:
            return "cgroup-v1"
        return None

    @property
    def memory_bounded(self) -> bool:
        return self.memory_mechanism is not None

    @property
    def cpu_bounded(self) -> bool:
        """The kernel bounds the session's CPU share (a delegated v2 ``cpu`` controller)."""
        return self.dir is not None and "cpu" in self.hier.v2_controllers

    def cpu_throttled(self) -> int | None:
        """How many periods the kernel throttled the session (``cpu.stat`` nr_throttled)."""
        try:
            for line in cgroups.read(self.dir + "/cpu.stat").splitlines():
                k, _, v = line.partition(" ")
                if k == "nr_throttled":
                    return int(v)
        except (OSError, TypeError, ValueError):
            pass
        return None

    # ------------------------------------------------------------ bounds
    @staticmethod
    def _limits_v2(d: str, lim) -> None:
        ctrl = cgroups.hierarchy().v2_controllers
        if "memory" in ctrl:
            cgroups.write(d + "/memory.max", str(lim.session_memory_mb * 1024 * 1024))
            if os.path.exists(d + "/memory.swap.max"):
                cgroups.write(d + "/memory.swap.max", "0")
        if "pids" in ctrl:
            cgroups.write(d + "/pids.max", str(lim.nproc + 4))
        if "cpu" in ctrl:
            cgroups.write(d + "/cpu.max", f"{int(lim.session_cpus * 100000)} 100000")

    @staticmethod
    def _limits_v1(c: str, d: str, lim) -> None:
        if c == "memory":
            cgroups.write(d + "/memory.limit_in_bytes", str(lim.session_memory_mb * 1024 * 1024))
            if os.path.exists(d + "/memory.memsw.limit_in_bytes"):
                cgroups.write(d + "/memory.memsw.limit_in_bytes", str(lim.session_memory_mb * 1024 * 1024))
        elif c == "pids":
            cgroups.write(d + "/pids.max", str(lim.nproc + 4))

    def memory_peak_bytes(self) -> int | None:
        """The kernel's high-water mark of the session's memory (all its processes), if bounded."""
        for path in ([self.dir + "/memory.peak"] if self.dir else []) + \
                    [d + "/memory.max_usage_in_bytes" for d in self.v1_dirs]:
            try:
                return int(cgroups.read(path))
            except (OSError, ValueError):
                continue
        return None

    def oom_kills(self) -> int | None:
        """How many processes the kernel's OOM killer took to keep the session within its bound."""
        for path in ([self.dir + "/memory.events"] if self.dir else []) + \
                    [d + "/memory.oom_control" for d in self.v1_dirs]:
            try:
                for line in cgroups.read(path).splitlines():
                    k, _, v = line.partition(" ")
                    if k == "oom_kill":
                        return int(v)
            except (OSError, ValueError):
                continue
        return None

    # ------------------------------------------------------------ OOM order inside the session
    def _oom(self, p, value: int) -> None:
        """Every jailed process starts at oom_score_adj 1000 (the keeper sets it): the kernel
        kills sessions before the user's applications. Inside the session the launcher then puts
        the head and the snapshots at 500 and each next (the running call) back at 1000, so
        when the session's own memory bound is hit the call that grew is killed, not the state
        it started from. Jailed code cannot change it (Landlock: /proc is read-only; lowering
        below the last privileged write needs CAP_SYS_RESOURCE in the host)."""
        if p is None or self._oom_set.get(p.pid) == value or not p.alive():
            return
        try:
            cgroups.write(f"/proc/{p.pid}/oom_score_adj", str(value))
        except OSError:
            pass  # not allowed here (unprivileged, not dumpable): it stays at 1000
        self._oom_set[p.pid] = value

    # ------------------------------------------------------------ hooks (called by Session)
    def on_ready(self, head, nxt, snapshots=()) -> None:
        """A next was taken, before any request is sent to it: the OOM order (see ``_oom``)."""
        self._oom(nxt, 1000)
        for p in [head, *snapshots]:
            self._oom(p, 500)

    def sweep(self, keep: set[int], head, snapshots, *, head_children_legit: bool) -> set[int]:
        """After a call, a snapshot change or a restore: kill every process in the session's
        cgroup that is not in ``keep`` (keeper, init, head, next, snapshots, already dying).

        Common case: one read of ``cgroup.procs``, nothing else there. Otherwise the cgroup is
        frozen (nothing in it can fork, exit or be reaped, so no pid can be reused), every
        member not in ``keep`` that is still in the cgroup is SIGKILLed through a pidfd, and it
        is thawed: so a child holding the head's pipe cannot make the head wait, and a failed
        call costs neither the session nor a snapshot. No process is migrated here (membership
        is inherited on every fork, ``CLONE_PARENT``/``CLONE_VM``/vfork included; a migration
        would wait for an RCU grace period). ``head_children_legit``: the head's direct children are kept too — a head
        forks its next on its own, at any time after a failed call — which is sound only while
        the seccomp filter refuses CLONE_PARENT (otherwise a call's child could be the head's);
        without the filter they are killed and the head forks another next. Returns the pids
        killed: one may have said ``ready`` before the kill and still be dying.
        """
        for p in [head, *snapshots]:
            self._oom(p, 500)
        alive = set(keep)
        for pid in [q for q in self._oom_set if q not in alive]:
            del self._oom_set[pid]
        if self.dir is None:
            return set()
        if _ORPHANS:
            _tidy_orphans()
        if head_children_legit and head is not None:
            keep = keep | set(children_of(head.pid))
        if not set(cgroups.procs(self.dir)) - keep:
            return set()
        if not cgroups.freeze(self.dir):
            log.warning("containment: %s did not freeze in time; killing the strays anyway", self.dir)
        try:
            if head_children_legit and head is not None:  # re-read while frozen
                keep = set(keep) | set(children_of(head.pid))
            killed = self._kill_members(set(cgroups.procs(self.dir)) - keep)
        finally:
            cgroups.thaw(self.dir)
        self.killed_strays += len(killed)
        if killed:
            log.info("containment: killed %d stray process(es) in %s", len(killed), self.dir)
        return killed

    def _kill_members(self, pids: set[int]) -> set[int]:
        rel = self.dir[len(self.hier.v2_mount):] if self.hier.v2_mount else None
        killed = set()
        for pid in pids:
            try:
                fd = os.pidfd_open(pid)
            except OSError:
                continue
            try:
                if cgroups.cgroup_of(pid) == rel:  # the pidfd now pins this very process
                    signal.pidfd_send_signal(fd, signal.SIGKILL)
                    killed.add(pid)
            except OSError:
                pass
            finally:
                os.close(fd)
        return killed

    def close(self) -> None:
        """Kill everything in the session's cgroups; remove them now or, once empty, later."""
        _tidy_orphans()
        if self.dir is not None:
            cgroups.kill(self.dir)
            try:
                if not cgroups.rmdir_tree(self.dir):
                    _orphan(self.dir)
            except OSError:
                pass
            self.dir = None
        for d in self.v1_dirs:
            try:
                if not cgroups.rmdir_tree(d):
                    _orphan(d)
            except OSError:
                pass
        self.v1_dirs = []

"""Containment of a session's processes, enforced from outside the session (the launcher + kernel).

Two mechanisms, the first where the host allows it, the second always:

**cgroup** (a writable cgroup v2 subtree, see ``cgroups.py``): each session gets
``build123d-launcher/<launcher pid>-<n>-<session id>`` (the keeper is moved there before it
makes the session's namespaces, so everything the session ever runs is inside, and the
session's cgroup namespace is rooted there). Inside it every tracked process of the session
(head, next, each snapshot) gets a cgroup of its own, ``c<N>``: a next is moved into a fresh
one when its ``ready`` is taken, before any code is sent to it. Cgroup membership is inherited
on every fork whatever the clone flags (``CLONE_PARENT``, ``CLONE_VM``, a vfork), so:

* a failed call (exception, timeout, crash, cancel): ``cgroup.kill`` of the next's cgroup kills
  the next and everything it started — nothing can keep the head's pipe open;
* a successful call: the old head's cgroup is killed; the new head's cgroup must hold the head
  alone: if it holds anything else, it is frozen (nothing in it can fork any more), the head is
  moved to a fresh cgroup (which thaws it), and the old one is killed;
* the same check for the head's cgroup when a next is taken (what a head forks besides its
  next) and for each snapshot's cgroup; direct children of the current head are exempt
  from the check only (they are its not-yet-taken nexts, and CLONE_PARENT children of a next
  are in the *next's* cgroup);
* close: ``cgroup.kill`` of the session's cgroup.
Session-wide bounds go on the session's cgroup: ``memory.max``/``pids.max``/``cpu.max`` where
cgroup v2 delegates those controllers, otherwise (root on a hybrid host) the v1 ``memory``,
``pids`` and ``cpu`` hierarchies (``memory.limit_in_bytes``, ``pids.max``, CFS quota).

**seccomp + sweep** (always on; the only mechanism for an unprivileged launcher without a
delegated cgroup): the jail's seccomp filter allows ``clone`` with plain fork flags only (no
``CLONE_PARENT``/``CLONE_VM``/``CLONE_VFORK``/..., exit signal SIGCHLD) and ``clone3`` gets
ENOSYS, so every process a call makes descends from its next; the launcher's sweep
(``procs.kill_strays``) then kills every process in the session's pid namespace that is not
init, head, next, a snapshot or already dying.

Not contained: what a head that earlier user code rewrote does *between* two checks (it can
fork a process that runs until the next call or sweep); inside one session, which process the
kernel's OOM killer picks when the session's memory bound is hit (normally the largest: the
call that grew).
"""
from __future__ import annotations

import itertools
import logging
import os
import threading

from . import cgroups
from .procs import children_of

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


def describe() -> dict:
    """What `doctor` shows: the mechanism in use and why not the other."""
    h = cgroups.hierarchy()
    if h.v2:
        mech = f"cgroup v2 ({h.v2}/<launcher pid>-<n>-<session>: cgroup.kill per call and per session)"
    else:
        mech = f"seccomp clone-flag filter + pid-namespace sweep (no cgroup: {h.reason})"
    bounds = []
    for c in sorted(h.v2_controllers):
        bounds.append(f"{c} (v2)")
    for c in sorted(h.v1):
        bounds.append(f"{c} (v1)")
    return {"mechanism": mech, "session_bounds": bounds or ["none (no delegated controllers; "
                                                            "per-process RLIMIT_AS/NPROC only)"],
            **h.describe()}


class SessionContainment:
    """One session's cgroups (all methods are no-ops when the host has no writable cgroup v2)."""

    def __init__(self, sid: str, keeper_pid: int, limits):
        self.hier = cgroups.hierarchy()
        self.dir: str | None = None
        self.v1_dirs: list[str] = []
        self.cg: dict[int, str] = {}     # tracked pid -> its cgroup
        self.owner: dict[str, int] = {}  # cgroup -> the tracked pid it holds
        self.pending: list[str] = []     # killed cgroups, removed once empty
        self.killed_strays = 0
        self._n = 0
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
            except OSError as e:
                log.warning("session %s: v1 %s bound not applied (%s)", sid, c, e)
                try:
                    os.rmdir(d)
                except OSError:
                    pass

    @property
    def active(self) -> bool:
        return self.dir is not None

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
        elif c == "cpu":
            cgroups.write(d + "/cpu.cfs_period_us", "100000")
            cgroups.write(d + "/cpu.cfs_quota_us", str(int(lim.session_cpus * 100000)))

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

    # ------------------------------------------------------------ per process
    def _fresh(self) -> str:
        self._n += 1
        d = f"{self.dir}/c{self._n}"
        os.mkdir(d)
        return d

    def _register(self, pid: int, cg: str) -> None:
        old = self.cg.pop(pid, None)
        if old is not None:
            self.owner.pop(old, None)
        self.cg[pid] = cg
        self.owner[cg] = pid

    def _adopt(self, p) -> None:
        """Move tracked process ``p`` (held by pidfd) into a cgroup of its own."""
        if not p.alive():
            return
        d = self._fresh()
        try:
            cgroups.move(p.pid, d)
        except OSError:  # it died meanwhile
            os.rmdir(d)
            return
        self._register(p.pid, d)

    def _kill_cg(self, cg: str) -> None:
        cgroups.kill(cg)
        self.pending.append(cg)
        pid = self.owner.pop(cg, None)
        if pid is not None and self.cg.get(pid) == cg:
            del self.cg[pid]

    def _isolate(self, p, exempt: set[int] = frozenset()) -> None:
        """Make ``p``'s cgroup hold ``p`` alone: freeze it, move ``p`` out, kill the rest."""
        cg = self.cg.get(p.pid)
        if cg is None:
            return
        extras = set(cgroups.procs(cg)) - {p.pid} - set(exempt)
        if not extras:
            return
        if not cgroups.freeze(cg):
            log.warning("containment: %s did not freeze in time; separating anyway", cg)
        d = self._fresh()
        if p.alive():
            try:
                cgroups.move(p.pid, d)
                self._register(p.pid, d)
            except OSError:
                pass
        self.owner.pop(cg, None)
        self._kill_cg(cg)
        cgroups.thaw(cg)
        self.killed_strays += len(extras)
        log.info("containment: killed %d stray process(es) sharing the cgroup of pid %d", len(extras), p.pid)

    def _tidy(self) -> None:
        still = []
        for cg in self.pending:
            try:
                if not cgroups.rmdir_tree(cg):
                    still.append(cg)
            except OSError:
                pass
        self.pending = still
        if _ORPHANS:
            _tidy_orphans()

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
            self._oom_set[p.pid] = value
        except OSError:
            self._oom_set[p.pid] = value  # not allowed here (unprivileged, not dumpable): stay at 1000

    # ------------------------------------------------------------ hooks (called by Session)
    def on_ready(self, head, nxt, snapshots=()) -> None:
        """A next was taken (before any request is sent to it): give it a cgroup of its own;
        the head's cgroup must then hold the head alone."""
        self._oom(nxt, 1000)
        for p in [head, *snapshots]:
            self._oom(p, 500)
        if self.dir is None or nxt is None:
            return
        if head is not None and head.pid not in self.cg:
            self._adopt(head)
        if nxt.pid not in self.cg:
            self._adopt(nxt)
        if head is not None:
            self._isolate(head)

    def sweep(self, head, nxt, snapshots) -> None:
        """After a call, a snapshot change or a restore: kill the cgroup of every process that is
        no longer tracked, and every process sharing a cgroup with a tracked one."""
        tracked = [p for p in [head, nxt] + list(snapshots) if p is not None]
        pids = {p.pid for p in tracked}
        for p in [head] + list(snapshots):
            self._oom(p, 500)
        for pid in [q for q in self._oom_set if q not in pids]:
            del self._oom_set[pid]
        if self.dir is None:
            return
        for cg, pid in list(self.owner.items()):
            if pid not in pids:
                self._kill_cg(cg)
        if head is not None and head.pid not in self.cg:
            self._adopt(head)  # a restored head, still in its snapshot's cgroup
        exempt = set(children_of(head.pid)) if head is not None else set()
        for p in tracked:
            self._isolate(p, exempt)
        self._tidy()

    def close(self) -> None:
        """Kill everything in the session's cgroups; remove them now or, once empty, later."""
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

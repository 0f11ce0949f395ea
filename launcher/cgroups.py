"""Cgroup plumbing for process containment (see ``containment.py`` for the policy).

Finds a writable cgroup v2 directory for the launcher (its own v2 cgroup, from the
``0::`` line of ``/proc/self/cgroup`` under the cgroup2 mount: on a hybrid host as root
``/sys/fs/cgroup/unified/...``; under a systemd user service with ``Delegate=yes`` the
delegated subtree) and, as root on a hybrid host, the v1 ``memory``/``pids``
hierarchies for the session-wide bounds (CPU share: only a delegated v2 ``cpu``).
Small, synchronous file operations only:
``mkdir``, a pid written to ``cgroup.procs``, ``cgroup.kill``, ``cgroup.freeze``, the
``populated``/``frozen`` keys of ``cgroup.events``.

Blocks nothing by itself; nothing here runs inside a session. What it cannot do: move a
process by pidfd (the kernel takes pids in ``cgroup.procs``), so callers write only pids
they hold a live pidfd for.
"""
from __future__ import annotations

import errno
import os
import select
import time

ROOT_NAME = "build123d-launcher"
# not "cpu": a v1 cpu cgroup per session made each trivial call ~30x slower on the loaded 2-core
# development host (the session then competes as one scheduling entity against every other task)
V1_CONTROLLERS = ("memory", "pids")


def _mounts() -> list[tuple[str, str, str, str]]:
    """(fstype, mount point, root within the hierarchy, super options) from mountinfo."""
    out = []
    try:
        with open("/proc/self/mountinfo") as f:
            for line in f:
                left, _, right = line.partition(" - ")
                a, b = left.split(), right.split()
                if len(a) >= 5 and len(b) >= 3:
                    out.append((b[0], a[4], a[3], b[2]))
    except OSError:
        pass
    return out


def _own_cgroups() -> dict[str, str]:
    """controller (or "" for v2) -> path, from /proc/self/cgroup."""
    out = {}
    try:
        with open("/proc/self/cgroup") as f:
            for line in f:
                _, ctrls, path = line.rstrip("\n").split(":", 2)
                for c in (ctrls.split(",") if ctrls else [""]):
                    out[c] = path
    except (OSError, ValueError):
        pass
    return out


def _join(mount: str, mount_root: str, path: str) -> str | None:
    """The directory of cgroup ``path`` under a mount of the hierarchy rooted at ``mount_root``."""
    if mount_root != "/" and not (path == mount_root or path.startswith(mount_root.rstrip("/") + "/")):
        return None  # our cgroup is not visible through this mount
    rel = path[len(mount_root):] if mount_root != "/" else path
    return os.path.normpath(mount + "/" + rel.lstrip("/"))


def write(path: str, value: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, value.encode())
    finally:
        os.close(fd)


def read(path: str) -> str:
    with open(path) as f:
        return f.read()


def procs(cg: str) -> list[int]:
    try:
        return [int(x) for x in read(cg + "/cgroup.procs").split()]
    except FileNotFoundError:
        return []


def events(cg: str) -> dict[str, int]:
    out = {}
    try:
        for line in read(cg + "/cgroup.events").splitlines():
            k, _, v = line.partition(" ")
            out[k] = int(v)
    except (OSError, ValueError):
        pass
    return out


def populated(cg: str) -> bool:
    return events(cg).get("populated", 0) == 1


def kill(cg: str) -> None:
    """SIGKILL every process in ``cg`` and its descendants (``cgroup.kill``: the kernel also
    kills what is being forked meanwhile)."""
    try:
        write(cg + "/cgroup.kill", "1")
    except FileNotFoundError:
        pass


def freeze(cg: str, timeout: float = 2.0) -> bool:
    """Freeze ``cg`` and wait (poll on cgroup.events, with a deadline) until every task in it
    is frozen. False when the deadline passed first (the cgroup stays frozen-pending)."""
    write(cg + "/cgroup.freeze", "1")
    deadline = time.monotonic() + timeout
    fd = os.open(cg + "/cgroup.events", os.O_RDONLY | os.O_CLOEXEC)
    try:
        p = select.poll()
        p.register(fd, select.POLLPRI)
        while True:
            os.lseek(fd, 0, 0)
            if b"frozen 1" in os.read(fd, 256):
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            p.poll(min(left, 0.05) * 1000)
    finally:
        os.close(fd)


def thaw(cg: str) -> None:
    try:
        write(cg + "/cgroup.freeze", "0")
    except FileNotFoundError:
        pass


def move(pid: int, cg: str) -> None:
    write(cg + "/cgroup.procs", str(pid))


def cgroup_of(pid: int) -> str | None:
    """The v2 path of ``pid`` (as the launcher's cgroup namespace shows it), None if gone."""
    try:
        with open(f"/proc/{pid}/cgroup") as f:
            for line in f:
                if line.startswith("0::"):
                    return line[3:].rstrip("\n")
    except (FileNotFoundError, ProcessLookupError):
        return None
    return None


def rmdir_tree(cg: str) -> bool:
    """Remove ``cg`` and its child cgroups, deepest first. False if one is still populated."""
    ok = True
    try:
        subs = [e.path for e in os.scandir(cg) if e.is_dir(follow_symlinks=False)]
    except FileNotFoundError:
        return True
    for s in subs:
        ok = rmdir_tree(s) and ok
    try:
        os.rmdir(cg)
    except FileNotFoundError:
        pass
    except OSError as e:
        if e.errno in (errno.EBUSY, errno.ENOTEMPTY):
            return False
        raise
    return ok


class Hierarchy:
    """What this launcher process can use, found once (``discover``).

    ``v2``: the directory under which session cgroups are made (``.../build123d-launcher``),
    or None with ``reason``. ``v2_controllers``: controllers enabled for session cgroups there.
    ``v1``: controller -> directory for the session-wide bounds on a hybrid host (root only).
    """

    def __init__(self):
        self.v2: str | None = None
        self.v2_mount: str | None = None
        self.reason = ""
        self.v2_controllers: set[str] = set()
        self.v1: dict[str, str] = {}
        self.v1_reason = ""

    @classmethod
    def discover(cls) -> "Hierarchy":
        h = cls()
        mounts = _mounts()
        own = _own_cgroups()
        v2 = [(mp, root) for fs, mp, root, _ in mounts if fs == "cgroup2"]
        if not v2:
            h.reason = "no cgroup2 hierarchy is mounted"
        elif "" not in own:
            h.reason = "/proc/self/cgroup has no cgroup v2 (0::) line"
        else:
            base = None
            for mp, root in v2:
                base = _join(mp, root, own[""])
                if base and os.path.isdir(base):
                    h.v2_mount = mp
                    break
                base = None
            if base is None:
                h.reason = f"the launcher's v2 cgroup {own['']!r} is not visible under a cgroup2 mount"
            else:
                top = os.path.join(base, ROOT_NAME)
                try:
                    os.makedirs(top, exist_ok=True)
                    if not os.path.exists(top + "/cgroup.kill"):
                        h.reason = "the kernel's cgroup v2 has no cgroup.kill (Linux < 5.14)"
                    elif not os.access(top + "/cgroup.procs", os.W_OK):
                        h.reason = f"{top} is not writable"
                    else:
                        h.v2 = top
                except OSError as e:
                    h.reason = f"cannot create {top}: {e.strerror} (no writable, delegated cgroup v2 subtree)"
                if h.v2:
                    h._enable_v2_controllers(base)
        h._find_v1(mounts, own)
        return h

    def _enable_v2_controllers(self, base: str) -> None:
        """Enable memory/pids/cpu for the session cgroups if the parent delegates them."""
        try:
            avail = set(read(self.v2 + "/cgroup.controllers").split())
        except OSError:
            return
        want = avail & {"memory", "pids", "cpu"}
        if not want:
            return
        try:
            write(self.v2 + "/cgroup.subtree_control", " ".join("+" + c for c in sorted(want)))
        except OSError:
            pass
        try:
            self.v2_controllers = set(read(self.v2 + "/cgroup.subtree_control").split()) & want
        except OSError:
            self.v2_controllers = set()

    def _find_v1(self, mounts, own) -> None:
        if os.geteuid() != 0:
            self.v1_reason = "v1 controllers need root"
            return
        for c in V1_CONTROLLERS:
            if c in self.v2_controllers:
                continue
            for fs, mp, root, opts in mounts:
                if fs == "cgroup" and c in opts.split(",") and c in own:
                    d = _join(mp, root, own[c])
                    if d and os.path.isdir(d):
                        top = os.path.join(d, ROOT_NAME)
                        try:
                            os.makedirs(top, exist_ok=True)
                            self.v1[c] = top
                        except OSError as e:
                            self.v1_reason = f"cannot create {top}: {e.strerror}"
                    break

    def describe(self) -> dict:
        return {"v2": self.v2, "v2_reason": self.reason, "v2_controllers": sorted(self.v2_controllers),
                "v1": dict(self.v1), "v1_reason": self.v1_reason}


_HIER: Hierarchy | None = None


def hierarchy() -> Hierarchy:
    global _HIER
    if _HIER is None:
        _HIER = Hierarchy.discover()
        reap_stale(_HIER)
    return _HIER


def reap_stale(h: Hierarchy) -> None:
    """Remove session cgroups left by launchers that died (named ``<launcher pid>-<sid>``)."""
    for top in ([h.v2] if h.v2 else []) + list(h.v1.values()):
        try:
            names = [e.name for e in os.scandir(top) if e.is_dir(follow_symlinks=False)]
        except OSError:
            continue
        for n in names:
            pid = n.split("-", 1)[0]
            if not pid.isdigit() or int(pid) == os.getpid() or os.path.exists(f"/proc/{pid}"):
                continue
            d = os.path.join(top, n)
            try:  # only empty ones: a populated one may belong to a launcher in another pid namespace
                rmdir_tree(d)
            except OSError:
                pass

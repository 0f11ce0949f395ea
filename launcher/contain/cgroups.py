"""Cgroup plumbing for process containment (see ``containment.py`` for the policy).

Finds a writable cgroup v2 directory for the launcher (its own v2 cgroup, from the ``0::`` line of
``/proc/self/cgroup`` under the cgroup2 mount; under a systemd service with ``Delegate=yes`` the
delegated subtree) and, as root on a hybrid host, the v1 ``memory``/``pids`` hierarchies for the
session-wide bounds. In a delegated v2 cgroup that holds the launcher's processes, those move into
the leaf ``launcher-main`` so the cgroup may enable ``V2_WANTED`` for the session cgroups
(``Hierarchy._delegate`` says when that is done and when never). Small, synchronous file
operations only: ``mkdir``, a pid written to ``cgroup.procs``, ``cgroup.kill``, ``cgroup.freeze``.

Blocks nothing by itself; nothing here runs inside a session. What it cannot do: move a process
by pidfd (the kernel takes pids in ``cgroup.procs``), so callers write only pids they hold a live
pidfd for.
"""
from __future__ import annotations

import errno
import os
import select
import time

ROOT_NAME = "build123d-launcher"
# Under a delegated cgroup (systemd ``Delegate=yes``) the launcher's own processes move into this
# leaf, a sibling of ROOT_NAME, so the delegated cgroup holds no process and may enable controllers
# for its children (the kernel's no-internal-process rule). The unit's ``DelegateSubgroup=`` names
# the same leaf: systemd >= 254 then starts the service in it and nothing needs to move.
LEAF_NAME = "launcher-main"
# Controllers enabled for the session cgroups where the launcher's cgroup offers them (a module
# constant: the tests extend it with a controller the host really has).
V2_WANTED = ("memory", "pids", "cpu")
MOVE_ROUNDS = 8  # re-reads of the delegated cgroup's cgroup.procs while moving its processes out
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
        self.leaf: str | None = None  # where the launcher's processes were moved (LEAF_NAME), if they were
        self.delegation_note = ""  # why the launcher's cgroup did not (or did not need to) hand controllers down

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
            if base is not None and os.path.basename(base) == LEAF_NAME \
                    and os.path.normpath(base) != os.path.normpath(h.v2_mount) \
                    and os.access(os.path.dirname(base) + "/cgroup.procs", os.W_OK):
                # already in the leaf (systemd's DelegateSubgroup=, or the move of an earlier
                # launcher in this cgroup): the delegated cgroup is its parent
                base = os.path.dirname(base)
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
        """Enable the V2_WANTED controllers for the session cgroups (``<base>/build123d-launcher/*``).

        ``base`` (the launcher's own cgroup) must first enable them in its own
        ``cgroup.subtree_control``, which the kernel refuses (EBUSY) while ``base`` holds processes.
        Under systemd's ``Delegate=yes`` the controllers are offered to ``base`` and ``base`` holds
        the service's processes: those are moved into the leaf ``<base>/launcher-main`` first
        (``_delegate``), only when ``base`` is really delegated to us (see there)."""
        want_all = set(V2_WANTED)
        try:
            offered = set(read(base + "/cgroup.controllers").split()) & want_all
            enabled = set(read(base + "/cgroup.subtree_control").split()) & want_all
        except OSError as e:
            self.delegation_note = f"cannot read {base}/cgroup.controllers: {e.strerror}"
            offered = enabled = set()
        if not offered and not self.delegation_note:
            self.delegation_note = (f"{base} offers none of {', '.join(V2_WANTED)} in cgroup.controllers "
                                    "(no delegated controllers)")
        missing = offered - enabled
        if missing:
            self._delegate(base, missing)
        leaf = os.path.join(base, LEAF_NAME)
        if self.leaf is None and os.getpid() in procs(leaf):
            self.leaf = leaf
        try:
            avail = set(read(self.v2 + "/cgroup.controllers").split()) & want_all
        except OSError:
            return
        for c in sorted(avail):
            try:
                write(self.v2 + "/cgroup.subtree_control", "+" + c)
            except OSError:
                pass
        try:
            self.v2_controllers = set(read(self.v2 + "/cgroup.subtree_control").split()) & want_all
        except OSError:
            self.v2_controllers = set()

    def _delegate(self, base: str, missing: set[str]) -> set[str]:
        """Move the launcher's processes out of ``base`` into ``base/LEAF_NAME``, then enable
        ``missing`` in ``base/cgroup.subtree_control``. Returns what got enabled; says why not in
        ``delegation_note``.

        Only inside a cgroup really delegated to this launcher: not the hierarchy root (as root on
        a host its processes are the host's), a ``domain`` cgroup whose directory, ``cgroup.procs``
        and ``cgroup.subtree_control`` are owned by our euid and writable (systemd's delegation
        chowns them), for root also marked delegated by systemd's system manager (``trusted.delegate``
        or ``user.delegate`` = 1: everything on a plain host is owned by root), and holding only the
        launcher and its descendants (a user-owned but not delegated cgroup, e.g. the scope of the
        desktop app that started the launcher, holds that app: its processes are never moved)."""
        why = _not_delegated(base, self.v2_mount)
        if why:
            self.delegation_note = why
            return set()
        leaf = os.path.join(base, LEAF_NAME)
        try:
            os.makedirs(leaf, exist_ok=True)
        except OSError as e:
            self.delegation_note = f"cannot create {leaf}: {e.strerror}"
            return set()
        moved = 0
        for _ in range(MOVE_ROUNDS):
            left = procs(base)
            if not left:
                break
            mine = _own_tree()
            foreign = [p for p in left if p not in mine]
            if foreign:
                self.delegation_note = (f"{base} holds processes that are not the launcher's "
                                        f"({_describe_pids(foreign)}): not moving them, so it cannot "
                                        "hand controllers to its children")
                break
            for pid in left:
                try:
                    if _move_pinned(pid, leaf):
                        moved += 1
                except OSError as e:
                    self.delegation_note = f"cannot move pid {pid} into {leaf}: {e.strerror}"
                    break
            if self.delegation_note:
                break
        else:
            if procs(base):
                self.delegation_note = f"{base} kept getting new processes ({MOVE_ROUNDS} rounds of moves)"
        if procs(leaf) or moved:
            self.leaf = leaf
        else:
            try:
                os.rmdir(leaf)
            except OSError:
                pass
        if self.delegation_note:
            return set()
        done, errs = set(), []
        for c in sorted(missing):
            try:
                write(base + "/cgroup.subtree_control", "+" + c)
                done.add(c)
            except OSError as e:
                errs.append(f"{c}: {errno.errorcode.get(e.errno, e.errno)} ({e.strerror})")
        if errs:
            self.delegation_note = f"{base}/cgroup.subtree_control refused " + "; ".join(errs)
        return done

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
                "v1": dict(self.v1), "v1_reason": self.v1_reason,
                "v2_leaf": self.leaf, "v2_delegation_note": self.delegation_note}


def _not_delegated(base: str, mount: str | None) -> str:
    """Why ``base`` is not a cgroup delegated to this process ("" when it is; see ``_delegate``)."""
    if mount is not None and os.path.normpath(base) == os.path.normpath(mount) \
            or not os.path.exists(base + "/cgroup.type"):
        return (f"the launcher's cgroup {base} is the hierarchy root: its processes are the host's, "
                "none is moved")
    try:
        kind = read(base + "/cgroup.type").strip()
    except OSError as e:
        return f"cannot read {base}/cgroup.type: {e.strerror}"
    if kind != "domain":
        return f"{base} is a {kind!r} cgroup, not a plain domain"
    euid = os.geteuid()
    for f in (base, base + "/cgroup.procs", base + "/cgroup.subtree_control"):
        try:
            st = os.stat(f)
        except OSError as e:
            return f"cannot stat {f}: {e.strerror}"
        if st.st_uid != euid or not os.access(f, os.W_OK):
            return f"{base} is not delegated to uid {euid} ({f} is owned by uid {st.st_uid})"
    if euid == 0 and not _marked_delegated(base):
        return (f"{base} is not marked delegated (no trusted.delegate/user.delegate xattr): as root, "
                "the launcher moves no process out of a cgroup systemd did not delegate")
    return ""


def _move_pinned(pid: int, cg: str) -> bool:
    """Move ``pid`` (one of the launcher's own processes, see ``_own_tree``) into ``cg``, holding
    a pidfd across the write: False if it was gone. The kernel takes only a pid number, so if the
    process exits and is reaped between the read of cgroup.procs and the write, and its number is
    reused at once, the write could name another process: the pidfd tells that it exited, its
    start time that the number now names another process, and that is raised, not ignored."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return False
    try:
        start = _starttime(pid)
        try:
            move(pid, cg)
        except ProcessLookupError:
            return False
        if select.select([fd], [], [], 0)[0]:  # readable: it exited meanwhile
            now = _starttime(pid)
            if now is not None and now != start:
                raise OSError(errno.ESRCH, f"pid {pid} exited and was reused while it was being moved")
            return False
        return True
    finally:
        os.close(fd)


def _starttime(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rpartition(")")[2].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def _marked_delegated(cg: str) -> bool:
    for name in ("trusted.delegate", "user.delegate"):
        try:
            if os.getxattr(cg, name).strip() == b"1":
                return True
        except OSError:
            continue
    return False


def _own_tree() -> set[int]:
    """This process and its descendants (from every /proc/<pid>/stat's parent pid)."""
    kids: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                ppid = int(f.read().rpartition(")")[2].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        kids.setdefault(ppid, []).append(int(d))
    out, todo = set(), [os.getpid()]
    while todo:
        p = todo.pop()
        if p not in out:
            out.add(p)
            todo.extend(kids.get(p, ()))
    return out


def _describe_pids(pids: list[int], n: int = 3) -> str:
    out = []
    for p in pids[:n]:
        try:
            with open(f"/proc/{p}/comm") as f:
                out.append(f"pid {p} {f.read().strip()}")
        except OSError:
            out.append(f"pid {p}")
    return ", ".join(out) + (f" and {len(pids) - n} more" if len(pids) > n else "")


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

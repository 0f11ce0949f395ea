"""Layer 4a: a read-only filesystem view in the session's own mount namespace. Applied in init.

Bubblewrap-style (ctypes ``mount``/``pivot_root``): a tmpfs root holding read-only, nosuid, nodev
binds of each read path (symlinks on the way recreated, so the view has the host's layout), the
listed device nodes, and a fresh procfs of the session's pid namespace; see apply_mount_view.

Blocks: every path not listed (``$HOME``, ``/tmp``, most of ``/etc``, ``/root``, ``/var``, ``/run``,
``/sys``, the host's ``/dev``, other programs' sockets): they do not exist, so even ``stat`` and
``access`` give ENOENT (no existence oracle, which Landlock alone leaves open). All writes (EROFS,
the root included); suid bits and device nodes on read paths are inert. ``/proc`` shows only the
session's processes (``subset=pid`` where the kernel has it: no ``/proc/sys``, ``/proc/kcore``).

Does not block: reading anything beneath a read path (keep them narrow); writes to the bound
devices and through fds inherited from before; undoing itself while the process has CAP_SYS_ADMIN
in its user namespace (the privilege drop and seccomp make it stick). Needs its own mount
namespace and, for ``/proc``, to be pid 1 of a pid namespace it created.
"""
from __future__ import annotations

import ctypes
import errno
import os
import platform
import stat

from jail.wire.errors import LayerError

LAYER = "mountview"

MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_NOATIME = 1024
MS_NODIRATIME = 2048
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
MS_RELATIME = 1 << 21
MS_STRICTATIME = 1 << 24
MNT_DETACH = 2

# statvfs f_flag bits (ST_*) map 1:1 onto MS_* for the ones we care about.
_ST_TO_MS = {os.ST_RDONLY: MS_RDONLY, os.ST_NOSUID: MS_NOSUID, os.ST_NODEV: MS_NODEV,
             os.ST_NOEXEC: MS_NOEXEC, os.ST_NOATIME: MS_NOATIME,
             os.ST_NODIRATIME: MS_NODIRATIME, os.ST_RELATIME: MS_RELATIME}

_NR_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "riscv64": 41}.get(platform.machine(), 155)

_OLD = ".oldroot"
_BASE_CANDIDATES = ("/tmp", "/run", "/mnt", "/var/tmp", "/media", "/opt", "/srv")

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
_libc.umount2.argtypes = [ctypes.c_char_p, ctypes.c_int]
_libc.syscall.restype = ctypes.c_long


def _b(s):
    return None if s is None else os.fsencode(s)


def _mount(src, target, fstype, flags, data=None) -> None:
    if _libc.mount(_b(src), _b(target), _b(fstype), flags, _b(data)) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e), target)


def _umount2(target, flags) -> None:
    if _libc.umount2(_b(target), flags) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e), target)


def _pivot_root(new, old) -> None:
    if _libc.syscall(ctypes.c_long(_NR_PIVOT_ROOT), ctypes.c_char_p(_b(new)), ctypes.c_char_p(_b(old))) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e), new)


def _fail(step: str, e: OSError, hint: str = "") -> LayerError:
    name = errno.errorcode.get(e.errno or 0, str(e.errno))
    where = f" ({e.filename})" if e.filename else ""
    return LayerError(LAYER, f"{step}{where} failed: {name} ({e.strerror})" + (f"; {hint}" if hint else ""))


def _locked_flags(path: str) -> int:
    """MS_* flags currently on the mount at ``path`` that a user namespace may not clear."""
    f = os.statvfs(path).f_flag
    ms = 0
    for st_bit, ms_bit in _ST_TO_MS.items():
        if f & st_bit:
            ms |= ms_bit
    return ms


def _remount_ro(path: str, extra: int = MS_NOSUID | MS_NODEV) -> None:
    """Make the (bind) mount at ``path`` read-only + ``extra``, keeping locked flags."""
    flags = MS_BIND | MS_REMOUNT | MS_RDONLY | extra
    try:
        _mount(None, path, None, flags)
        return
    except OSError as e:
        if e.errno != errno.EPERM:
            raise
    # EPERM: the mount came from a more privileged mount namespace and carries
    # locked flags (noexec, nosuid, nodev, atime) that a remount must restate.
    _mount(None, path, None, flags | _locked_flags(path))


def _submounts(path: str) -> list[str]:
    """Mount points strictly beneath ``path`` (from mountinfo of the host procfs, still
    reachable under the old root while the view is built), shallowest first."""
    out = []
    try:
        with open(f"/{_OLD}/proc/self/mountinfo") as f:
            for line in f:
                mp = line.split()[4]
                mp = mp.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\")
                if mp.startswith(path.rstrip("/") + "/"):
                    out.append(mp)
    except OSError:
        pass
    return sorted(set(out), key=lambda p: p.count("/"))


def _make_parents(view_path: str) -> None:
    os.makedirs(os.path.dirname(view_path) or "/", mode=0o755, exist_ok=True)


def _resolve_into_view(path: str, old: str, symlinks: list) -> str | None:
    """Walk ``path`` component by component on the old root. Recreate every
    symlink met on the way inside the view (as a symlink, same target text) and
    return the real absolute path (old-root relative), or None if it is missing."""
    todo = [c for c in path.split("/") if c]
    real = "/"
    hops = 0
    while todo:
        comp = todo.pop(0)
        if comp == ".":
            continue
        if comp == "..":
            real = os.path.dirname(real.rstrip("/")) or "/"
            continue
        cand = os.path.join(real, comp)
        try:
            st = os.lstat(old + cand)
        except OSError:
            return None
        if stat.S_ISLNK(st.st_mode):
            hops += 1
            if hops > 40:
                return None
            target = os.readlink(old + cand)
            if not os.path.lexists(cand):
                _make_parents(cand)
                os.symlink(target, cand)
                symlinks.append({"path": cand, "target": target})
            todo = [c for c in target.split("/") if c] + todo
            if target.startswith("/"):
                real = "/"
            continue
        real = cand
    return real


def apply_mount_view(read_paths: list[str], devices: list[str], *, mount_proc: bool = True) -> dict:
    """Replace this mount namespace's root with a read-only view of ``read_paths``
    plus ``devices`` (and a fresh /proc when ``mount_proc``). Raises LayerError
    with the failing step and errno. Returns evidence: ``bound`` (list of
    {path, source}), ``symlinks``, ``covered`` (inside an already bound path),
    ``skipped`` (missing), ``devices``, ``proc`` (bool), ``proc_options``."""
    try:
        _mount(None, "/", None, MS_REC | MS_PRIVATE)
    except OSError as e:
        raise _fail("making / private (MS_REC|MS_PRIVATE)", e,
                    "the process needs its own mount namespace: unshare(CLONE_NEWUSER|CLONE_NEWNS) first") from None

    base = None
    for cand in _BASE_CANDIDATES:
        if os.path.isdir(cand) and not os.path.islink(cand):
            try:
                _mount("tmpfs", cand, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m,nr_inodes=4096,mode=0755")
                base = cand
                break
            except OSError as e:
                last = e
                continue
    if base is None:
        raise _fail("mounting the tmpfs for the new root", last,
                    f"none of {', '.join(_BASE_CANDIDATES)} could hold a tmpfs")

    bound: list[dict] = []
    symlinks: list[dict] = []
    covered: list[str] = []
    skipped: list[str] = []
    devs: list[str] = []
    proc = False
    proc_options = None
    old = "/" + _OLD
    try:
        os.mkdir(os.path.join(base, _OLD), 0o700)
        _pivot_root(base, os.path.join(base, _OLD))
        os.chdir("/")
    except OSError as e:
        raise _fail("pivot_root into the tmpfs", e) from None

    try:
        # ---- read paths ------------------------------------------------
        resolved = []
        for p in read_paths:
            p = os.path.normpath(p)
            real = _resolve_into_view(p, old, symlinks) if os.path.isabs(p) else None
            if real is None:
                skipped.append(p)
            elif real == "/":
                raise LayerError(LAYER, f"read path {p!r} resolves to / and would expose the whole host; "
                                 "list narrower [filesystem] read_paths")
            else:
                resolved.append((real, p))
        done: list[str] = []
        for real, p in sorted(resolved):  # parents sort before their children
            if any(real == d or real.startswith(d + "/") for d in done):
                covered.append(p)
                continue
            src = old + real
            _make_parents(real)
            if os.path.isdir(src):
                os.makedirs(real, mode=0o755, exist_ok=True)
            elif not os.path.exists(real):
                os.close(os.open(real, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
            _mount(src, real, None, MS_BIND | MS_REC)
            _remount_ro(real)
            for sub in _submounts(real):
                try:
                    _remount_ro(sub)
                except OSError as e:
                    if e.errno not in (errno.ENOENT, errno.EACCES):
                        raise
            done.append(real)
            bound.append({"path": p, "source": real})

        # ---- device nodes ----------------------------------------------
        for d in devices:
            d = os.path.normpath(d)
            try:
                st = os.stat(old + d)
            except OSError:
                skipped.append(d)
                continue
            if not stat.S_ISCHR(st.st_mode):
                raise LayerError(LAYER, f"device {d} is not a character device; fix [filesystem] devices")
            _make_parents(d)
            if not os.path.exists(d):
                os.close(os.open(d, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            _mount(old + d, d, None, MS_BIND)
            _remount_ro(d, MS_NOSUID | MS_NOEXEC)
            devs.append(d)

        # ---- /proc -------------------------------------------------------
        if mount_proc:
            os.makedirs("/proc", mode=0o555, exist_ok=True)
            err = None
            for opts in ("subset=pid", None):
                try:
                    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, opts)
                    proc, proc_options = True, opts or "defaults"
                    break
                except OSError as e:
                    err = e
            if not proc:
                raise _fail("mounting a fresh procfs at /proc", err,
                            "the process must be in a pid namespace its user namespace owns "
                            "(pid 1 after unshare(CLONE_NEWPID)+fork), with an unobstructed /proc on the host; "
                            "or call with mount_proc=False")

        # ---- drop the old root, seal the tmpfs ---------------------------
        _umount2(old, MNT_DETACH)
        os.rmdir(old)
        os.chdir("/")
        _remount_ro("/", MS_NOSUID | MS_NODEV)
    except LayerError:
        raise
    except OSError as e:
        raise _fail("building the view", e) from None

    return {"root": base, "bound": bound, "symlinks": symlinks, "covered": covered,
            "skipped": skipped, "devices": devs, "proc": proc, "proc_options": proc_options}

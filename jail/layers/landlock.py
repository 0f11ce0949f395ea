"""Layer 4b: Landlock (unprivileged, stackable kernel access control), via ctypes. Applied in init.

Blocks, for this process and all it forks: every filesystem right the kernel's ABI knows is
*handled*, and only two are granted: ``READ_FILE | READ_DIR`` beneath each existing read path,
``READ_FILE | WRITE_FILE`` (+ ``IOCTL_DEV`` from ABI 5) on each device node. So no write, create,
remove, rename/link (``REFER``, ABI 2), truncate (ABI 3), mknod, symlink, ``execve`` (``EXECUTE``
handled, never granted), and no open/listdir outside the read paths (``$HOME``, ``/etc`` secrets,
``/tmp``, ``/proc`` ...) -> ``EACCES``. ABI >= 4: TCP bind/connect denied; ABI >= 6: no abstract
unix sockets made outside the domain, no signals to processes outside it.

Does not block: ``stat``/``access``/``readlink`` outside the read paths (no metadata mediation up
to ABI 7: the mount view closes that oracle); reads through fds opened before; ``mmap(PROT_EXEC)``
of readable files; UDP, raw, netlink and unix-socket traffic (seccomp and the empty network
namespace); anything on kernels without Landlock (``min_abi`` decides if that is fatal).
Never re-applied: domains stack, and the kernel caps the depth at 16.
"""
from __future__ import annotations

import ctypes
import errno
import os
import platform
import stat

from jail.wire.errors import LayerError
from jail.layers.libc import prctl

LAYER = "landlock"

# Syscall numbers: 444/445/446 in both the x86_64 table and the asm-generic
# table (aarch64, riscv64 …).
_NR = {"x86_64": (444, 445, 446), "aarch64": (444, 445, 446), "riscv64": (444, 445, 446)}
_NR_CREATE, _NR_ADD_RULE, _NR_RESTRICT = _NR.get(platform.machine(), (444, 445, 446))

LANDLOCK_CREATE_RULESET_VERSION = 1 << 0
LANDLOCK_RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38

# Filesystem access rights, with the ABI that introduced them.
ACCESS_FS_EXECUTE = 1 << 0
ACCESS_FS_WRITE_FILE = 1 << 1
ACCESS_FS_READ_FILE = 1 << 2
ACCESS_FS_READ_DIR = 1 << 3
ACCESS_FS_REMOVE_DIR = 1 << 4
ACCESS_FS_REMOVE_FILE = 1 << 5
ACCESS_FS_MAKE_CHAR = 1 << 6
ACCESS_FS_MAKE_DIR = 1 << 7
ACCESS_FS_MAKE_REG = 1 << 8
ACCESS_FS_MAKE_SOCK = 1 << 9
ACCESS_FS_MAKE_FIFO = 1 << 10
ACCESS_FS_MAKE_BLOCK = 1 << 11
ACCESS_FS_MAKE_SYM = 1 << 12
ACCESS_FS_REFER = 1 << 13      # ABI 2
ACCESS_FS_TRUNCATE = 1 << 14   # ABI 3
ACCESS_FS_IOCTL_DEV = 1 << 15  # ABI 5
ACCESS_NET_BIND_TCP = 1 << 0     # ABI 4
ACCESS_NET_CONNECT_TCP = 1 << 1  # ABI 4
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1                # ABI 6

_FS_ABI1 = (1 << 13) - 1

_FS_NAMES = {
    ACCESS_FS_EXECUTE: "execute", ACCESS_FS_WRITE_FILE: "write_file",
    ACCESS_FS_READ_FILE: "read_file", ACCESS_FS_READ_DIR: "read_dir",
    ACCESS_FS_REMOVE_DIR: "remove_dir", ACCESS_FS_REMOVE_FILE: "remove_file",
    ACCESS_FS_MAKE_CHAR: "make_char", ACCESS_FS_MAKE_DIR: "make_dir",
    ACCESS_FS_MAKE_REG: "make_reg", ACCESS_FS_MAKE_SOCK: "make_sock",
    ACCESS_FS_MAKE_FIFO: "make_fifo", ACCESS_FS_MAKE_BLOCK: "make_block",
    ACCESS_FS_MAKE_SYM: "make_sym", ACCESS_FS_REFER: "refer",
    ACCESS_FS_TRUNCATE: "truncate", ACCESS_FS_IOCTL_DEV: "ioctl_dev",
}


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64),
                ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1  # __attribute__((packed)) in the uapi header: 12 bytes
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


def _syscall(nr: int, *args) -> int:
    ctypes.set_errno(0)
    res = _libc.syscall(ctypes.c_long(nr), *args)
    if res < 0:
        return -ctypes.get_errno()
    return res


def abi_version() -> int:
    """The Landlock ABI of the running kernel; 0 when unsupported or disabled. Never raises."""
    try:
        res = _syscall(_NR_CREATE, ctypes.c_void_p(None), ctypes.c_size_t(0),
                       ctypes.c_uint32(LANDLOCK_CREATE_RULESET_VERSION))
        return int(res) if res > 0 else 0
    except Exception:  # pragma: no cover - ctypes trouble on exotic hosts
        return 0


def handled_fs_for(abi: int) -> int:
    fs = _FS_ABI1
    if abi >= 2:
        fs |= ACCESS_FS_REFER
    if abi >= 3:
        fs |= ACCESS_FS_TRUNCATE
    if abi >= 5:
        fs |= ACCESS_FS_IOCTL_DEV
    return fs


def fs_names(mask: int) -> list[str]:
    return [name for bit, name in sorted(_FS_NAMES.items()) if mask & bit]


def _err(what: str, e: int) -> LayerError:
    name = errno.errorcode.get(e, str(e))
    hint = {
        "ENOSYS": "the kernel has no Landlock (CONFIG_SECURITY_LANDLOCK)",
        "EOPNOTSUPP": "Landlock is built in but disabled: add 'landlock' to the lsm= boot parameter",
        "EPERM": "no_new_privs is not set and the process lacks CAP_SYS_ADMIN",
        "E2BIG": "the kernel rejected the ruleset struct size",
        "EINVAL": "the kernel rejected an access mask for this ABI",
    }.get(name, "")
    return LayerError(LAYER, f"{what} failed: {name} ({os.strerror(e)})" + (f"; {hint}" if hint else ""))


def apply_landlock(read_paths, devices, *, min_abi: int = 1) -> dict:
    """Restrict this process (and its future children) to reading ``read_paths``
    and reading/writing ``devices``. Sets no_new_privs. Raises LayerError when the
    kernel's ABI is below ``min_abi`` or a syscall fails. Returns evidence."""
    abi = abi_version()
    if abi < max(1, min_abi):
        raise LayerError(LAYER, f"kernel Landlock ABI is {abi} but the profile needs >= {max(1, min_abi)}"
                         + (" (Landlock unsupported or disabled: enable CONFIG_SECURITY_LANDLOCK and "
                            "'landlock' in lsm=, or set [layers] landlock = \"best-effort\")" if abi == 0 else
                            " (use a newer kernel or lower [filesystem] require_landlock_abi)"))
    handled_fs = handled_fs_for(abi)
    handled_net = (ACCESS_NET_BIND_TCP | ACCESS_NET_CONNECT_TCP) if abi >= 4 else 0
    scoped = (SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL) if abi >= 6 else 0
    attr = _RulesetAttr(handled_fs, handled_net, scoped)
    size = ctypes.sizeof(_RulesetAttr) if abi >= 6 else (16 if abi >= 4 else 8)
    rfd = _syscall(_NR_CREATE, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if rfd < 0:
        raise _err("landlock_create_ruleset", -rfd)
    read_dir = ACCESS_FS_READ_FILE | ACCESS_FS_READ_DIR
    read_file = ACCESS_FS_READ_FILE
    dev_rights = ACCESS_FS_READ_FILE | ACCESS_FS_WRITE_FILE | (ACCESS_FS_IOCTL_DEV if abi >= 5 else 0)
    rules: list[dict] = []
    skipped: list[dict] = []
    try:
        for path, kind in [(p, "read") for p in read_paths] + [(d, "device") for d in devices]:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError as e:
                skipped.append({"path": path, "kind": kind, "reason": errno.errorcode.get(e.errno, str(e.errno))})
                continue
            try:
                st = os.fstat(fd)
                if kind == "device":
                    if not stat.S_ISCHR(st.st_mode):
                        skipped.append({"path": path, "kind": kind, "reason": "not a character device"})
                        continue
                    rights = dev_rights
                else:
                    rights = read_dir if stat.S_ISDIR(st.st_mode) else read_file
                rule = _PathBeneathAttr(rights & handled_fs, fd)
                res = _syscall(_NR_ADD_RULE, ctypes.c_int(rfd), ctypes.c_int(LANDLOCK_RULE_PATH_BENEATH),
                               ctypes.byref(rule), ctypes.c_uint32(0))
                if res < 0:
                    raise _err(f"landlock_add_rule({path})", -res)
                rules.append({"path": path, "access": fs_names(rights & handled_fs)})
            finally:
                os.close(fd)
        try:
            prctl(PR_SET_NO_NEW_PRIVS, 1)
        except OSError as e:
            raise _err("prctl(PR_SET_NO_NEW_PRIVS)", e.errno) from None
        res = _syscall(_NR_RESTRICT, ctypes.c_int(rfd), ctypes.c_uint32(0))
        if res < 0:
            raise _err("landlock_restrict_self", -res)
    finally:
        os.close(rfd)
    return {
        "abi": abi,
        "handled_fs": fs_names(handled_fs),
        "handled_net": (["bind_tcp", "connect_tcp"] if handled_net else []),
        "scoped": (["abstract_unix_socket", "signal"] if scoped else []),
        "rules": rules,
        "skipped": skipped,
    }

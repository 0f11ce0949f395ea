"""Layer 5: privilege drop (capabilities, securebits, no_new_privs), via python-prctl. Applied in init.

Blocks, for this process and all it forks: every capability (bounding set emptied up to
``cap_last_cap``, including ones newer than python-prctl knows; ambient, effective, permitted and
inheritable cleared): uid 0 of the session's user namespace without any capability cannot mount,
pivot_root, chroot, mknod, setuid, raise hard rlimits, override DAC... (EPERM). Securebits locked
(NOROOT, NO_SETUID_FIXUP, KEEP_CAPS off, NO_CAP_AMBIENT_RAISE, each with its lock). no_new_privs:
execve never grants privileges (setuid bits, file caps); it is also what unprivileged seccomp and
Landlock need. Everything is read back (``/proc/self/status``, or capget/prctl when /proc is
hidden); a mismatch raises LayerError: fail closed.

Does not block: what an unprivileged process may do (read the files it sees, use its own uid's
resources, make syscalls): the filesystem layers, rlimits and seccomp do. Uids are unchanged (the
user-namespace mapping set them).
"""
from __future__ import annotations

import ctypes
import errno
import os

import prctl

from jail.layers.libc import libc as _libc, prctl as _prctl
from jail.wire.errors import LayerError

LAYER = "privileges"

PR_CAPBSET_READ = 23
PR_CAPBSET_DROP = 24
PR_GET_SECUREBITS = 27
PR_SET_SECUREBITS = 28
PR_GET_NO_NEW_PRIVS = 39
PR_GET_SECCOMP = 21
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_IS_SET = 1
PR_CAP_AMBIENT_CLEAR_ALL = 4

SECBIT_NOROOT = 1 << 0
SECBIT_NOROOT_LOCKED = 1 << 1
SECBIT_NO_SETUID_FIXUP = 1 << 2
SECBIT_NO_SETUID_FIXUP_LOCKED = 1 << 3
SECBIT_KEEP_CAPS = 1 << 4
SECBIT_KEEP_CAPS_LOCKED = 1 << 5
SECBIT_NO_CAP_AMBIENT_RAISE = 1 << 6
SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED = 1 << 7
SECUREBITS = (SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP
              | SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED
              | SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED)

_STATUS_KEYS = ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs",
                "Seccomp", "Seccomp_filters")


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                ("inheritable", ctypes.c_uint32)]


_LINUX_CAPABILITY_VERSION_3 = 0x20080522


def _capget() -> tuple[int, int, int]:
    hdr = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    if _libc.capget(ctypes.byref(hdr), data) != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"capget: {os.strerror(e)}")
    eff = data[0].effective | (data[1].effective << 32)
    prm = data[0].permitted | (data[1].permitted << 32)
    inh = data[0].inheritable | (data[1].inheritable << 32)
    return eff, prm, inh


def _capset_zero() -> None:
    hdr = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    if _libc.capset(ctypes.byref(hdr), data) != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"capset: {os.strerror(e)}")


def cap_last_cap() -> int:
    try:
        with open("/proc/sys/kernel/cap_last_cap") as f:
            return int(f.read())
    except (OSError, ValueError):
        # probe: PR_CAPBSET_READ fails with EINVAL beyond the last capability
        n = 0
        while n < 64:
            try:
                _prctl(PR_CAPBSET_READ, n + 1)
            except OSError:
                break
            n += 1
        return n


def read_status() -> dict:
    """Parse ``/proc/self/status``: Cap* (hex strings), NoNewPrivs, Seccomp,
    Seccomp_filters (ints). Raises OSError if /proc is not readable."""
    out: dict = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, val = line.partition(":")
            if key in _STATUS_KEYS:
                val = val.strip()
                out[key] = val if key.startswith("Cap") else int(val)
    return out


def _status_from_syscalls(last: int) -> dict:
    """The same fields as :func:`read_status`, from capget/prctl (no /proc needed)."""
    eff, prm, inh = _capget()
    bnd = 0
    amb = 0
    for c in range(last + 1):
        if _prctl(PR_CAPBSET_READ, c):
            bnd |= 1 << c
        if _prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_IS_SET, c):
            amb |= 1 << c
    return {"CapInh": f"{inh:016x}", "CapPrm": f"{prm:016x}", "CapEff": f"{eff:016x}",
            "CapBnd": f"{bnd:016x}", "CapAmb": f"{amb:016x}",
            "NoNewPrivs": _prctl(PR_GET_NO_NEW_PRIVS), "Seccomp": _prctl(PR_GET_SECCOMP)}


def current_status() -> dict:
    """``read_status()`` when /proc is readable, else the syscall read-back; adds ``source``."""
    try:
        st = read_status()
        st["source"] = "/proc/self/status"
    except OSError:
        st = _status_from_syscalls(cap_last_cap())
        st["source"] = "capget+prctl"
    return st


def drop_privileges() -> dict:
    """Drop every capability, lock the securebits, set no_new_privs, then verify.

    Raises LayerError("privileges", ...) on failure or if anything reads back
    wrong. Returns the read-back evidence (Cap* hex strings, NoNewPrivs,
    securebits, source)."""
    last = cap_last_cap()
    try:
        # bounding set: python-prctl names only the caps it was built with; drop
        # every number up to the kernel's cap_last_cap. Needs CAP_SETPCAP, so
        # it must come before the effective set is cleared.
        prctl.capbset.limit()
        for c in range(last + 1):
            if _prctl(PR_CAPBSET_READ, c):
                _prctl(PR_CAPBSET_DROP, c)
        _prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
        # securebits need CAP_SETPCAP too; python-prctl rejects the ambient bits,
        # so set them all in one prctl.
        _prctl(PR_SET_SECUREBITS, SECUREBITS)
        prctl.cap_inheritable.limit()
        prctl.cap_effective.limit()
        prctl.cap_permitted.limit()
        _capset_zero()  # also clears caps newer than python-prctl knows
        prctl.set_no_new_privs(1)
    except OSError as e:
        name = errno.errorcode.get(e.errno or 0, str(e.errno))
        raise LayerError(LAYER, f"{e} ({name}); dropping capabilities needs CAP_SETPCAP in the "
                         "session's user namespace: apply this layer before anything else drops it") from None
    except ValueError as e:  # python-prctl argument checks
        raise LayerError(LAYER, f"python-prctl refused: {e}") from None

    st = current_status()
    st["securebits"] = _prctl(PR_GET_SECUREBITS)
    bad = [f"{k}={st.get(k)}" for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")
           if int(str(st.get(k, "1")), 16) != 0]
    if st.get("NoNewPrivs") != 1:
        bad.append(f"NoNewPrivs={st.get('NoNewPrivs')}")
    if st["securebits"] & SECUREBITS != SECUREBITS:
        bad.append(f"securebits={st['securebits']:#x} (want {SECUREBITS:#x})")
    if bad:
        raise LayerError(LAYER, "read-back after the drop is wrong: " + ", ".join(bad))
    return st

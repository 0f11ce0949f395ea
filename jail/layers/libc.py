"""Thin ctypes wrappers for what Python 3.11's ``os`` lacks (``unshare``, raw ``prctl``), shared by the layers."""
from __future__ import annotations

import ctypes
import os

CLONE_THREAD = 0x00010000
CLONE_NEWNS = 0x00020000
CLONE_NEWCGROUP = 0x02000000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

libc = ctypes.CDLL(None, use_errno=True)
_libc = libc
_libc.unshare.argtypes = [ctypes.c_int]


def unshare(flags: int) -> None:
    if _libc.unshare(flags) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


def prctl(option: int, a2: int = 0, a3: int = 0, a4: int = 0, a5: int = 0) -> int:
    """Raw prctl(2) (python-prctl does not know every option); raises OSError on failure."""
    res = _libc.prctl(ctypes.c_int(option), ctypes.c_ulong(a2), ctypes.c_ulong(a3),
                      ctypes.c_ulong(a4), ctypes.c_ulong(a5))
    if res < 0:
        e = ctypes.get_errno()
        raise OSError(e, f"prctl({option}): {os.strerror(e)}")
    return res

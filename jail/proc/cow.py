"""Copy-on-write carry-over: the pages a call wrote, copied ahead into the next process while it is idle.

A ``next`` is forked from its head and shares every page with it; each first write to a shared page
copies it (a minor fault). On the VMs we measure, such a fault costs 5-13 us, and a warm ``execute``
of a small plate still took ~500 of them in its next after the idle CAD warm-up (jail/cad/warmup.py):
the pages a call writes are mostly the same from one call to the next (CPython's reference counts
and arenas, malloc's and OCCT's free lists, build123d's caches), but the warm-up's part is not the
session's. So:

* ``written_since_fork`` runs in a next 5 ms after it replied to a successful transaction, while
  its old head still lives (the launcher kills a retired head 50 ms after the reply, decision 0023):
  a page of the heap or of an anonymous private writable mapping that is present and mapped by this
  process alone (``/proc/self/pagemap``'s exclusive bit) was written (or first allocated) by this
  process since its fork. The promoted next keeps that list as the head, and every next it forks
  inherits it. The scan (~11 ms of CPU for the plate, most of it the kernel writing
  ``/proc/self/maps``) delays the fork of the following next, so it runs only after a call that
  came to an idle next: a call after think time. Back-to-back calls keep the list they inherited.
* ``populate`` runs in such an idle next (after its warm-up): ``madvise(MADV_POPULATE_WRITE)`` on
  those ranges makes the kernel copy each shared page now, contents unchanged; the call then
  faults only on pages it writes for the first time.

What it costs and what bounds it: one scan per successful transaction that came after think time
(after the reply); in each warm next, a private copy of the listed pages (about 13 MB for the
plate), counted in the session's memory like any of its pages, dropped when the next leaves idle
(decision 0026).
A list over ``MAX_PAGES`` is not kept (the old head died before the scan, so every resident page
looked exclusive; or a call that rewrote more than that, whose faults are then a small part of its
time). Any error (no pagemap, a kernel before 5.14 without MADV_POPULATE_WRITE) means no carry-over,
never a failed call.

What it does not do: it changes no page's contents and reads nothing of another process; a session
that rewrote its own process only slows its own next calls, inside the same memory and CPU bounds.
"""
from __future__ import annotations

import ctypes
import errno
import os
import time
from collections.abc import Callable

import numpy as np

PAGE = os.sysconf("SC_PAGE_SIZE")
MAX_PAGES = 8192            # 32 MiB with 4 KiB pages
SCAN_AFTER_S = 0.005        # the wait between the reply and the scan (``remember_written``)
CHUNK_PAGES = 256           # ``stop()`` is asked between chunks of about this many pages
MADV_POPULATE_WRITE = 23    # Linux 5.14
_PRESENT = np.uint64(1 << 63)
_EXCLUSIVE = np.uint64(1 << 56)

_libc = ctypes.CDLL(None, use_errno=True)
_madvise = _libc.madvise
_madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
_madvise.restype = ctypes.c_int

#: the runs this process (or the head it was forked from) wrote during its last call:
#: ``(starts, counts)``, addresses and page counts; empty until a transaction was scanned
carried: tuple[np.ndarray, np.ndarray] = (np.zeros(0, np.uint64), np.zeros(0, np.uint64))
_works = True  # False once MADV_POPULATE_WRITE was refused for good (see _REFUSED)
_REFUSED = {errno.EINVAL, errno.EPERM, errno.ENOSYS}  # an unknown advice (before 5.14); a filter


def _read_all(path: str) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _anonymous_writable(maps: bytes) -> list[tuple[int, int]]:
    """``(start, page count)`` of each private writable mapping with no file: the heap and anonymous
    mappings (CPython's arenas, malloc's and OCCT's blocks), where ~97 % of a call's copies are (a
    plate: 3 380 of 3 480 pages); the ~400 small data segments of shared libraries hold the rest."""
    out = []
    for line in maps.splitlines():
        fields = line.split(None, 5)
        if len(fields) < 5 or fields[1] != b"rw-p":
            continue
        if len(fields) == 6 and fields[5].strip() != b"[heap]":
            continue
        lo, _, hi = fields[0].partition(b"-")
        lo_i = int(lo, 16)
        out.append((lo_i, (int(hi, 16) - lo_i) // PAGE))
    return out


def written_since_fork(max_pages: int = MAX_PAGES) -> tuple[np.ndarray, np.ndarray]:
    """The runs of pages of the heap and anonymous private writable mappings that are present and
    mapped by this process alone: ``(starts, counts)``. Empty when there are more than
    ``max_pages`` or on any error."""
    empty = (np.zeros(0, np.uint64), np.zeros(0, np.uint64))
    try:
        ranges = _anonymous_writable(_read_all("/proc/self/maps"))
        fd = os.open("/proc/self/pagemap", os.O_RDONLY | os.O_CLOEXEC)
        try:
            raw = b"".join([os.pread(fd, n * 8, lo // PAGE * 8) for lo, n in ranges])
        finally:
            os.close(fd)
    except (OSError, ValueError):
        return empty
    entries = np.frombuffer(raw, dtype=np.uint64)
    lows = np.array([lo for lo, _ in ranges], dtype=np.uint64)
    sizes = np.array([n for _, n in ranges], dtype=np.int64)
    if entries.size != int(sizes.sum()):  # a short read: a mapping shrank while it was read
        return empty
    hit = np.flatnonzero((entries & _PRESENT).astype(bool) & (entries & _EXCLUSIVE).astype(bool))
    if hit.size == 0 or hit.size > max_pages:
        return empty
    # the address of each hit page: its range's start plus its index within the range
    first_index = np.cumsum(sizes) - sizes
    which = np.searchsorted(first_index, hit, side="right") - 1
    pages = lows[which] + (hit - first_index[which]).astype(np.uint64) * np.uint64(PAGE)
    breaks = np.flatnonzero(np.diff(pages) != np.uint64(PAGE))
    run_first = np.concatenate(([0], breaks + 1))
    run_last = np.concatenate((breaks, [pages.size - 1]))
    return pages[run_first], (run_last - run_first + 1).astype(np.uint64)


def remember_written() -> None:
    """In a next that has replied to a successful transaction: keep what it wrote (``carried``).
    It first lets the launcher and the client take the reply for ``SCAN_AFTER_S``: on two cores the
    scan's CPU right after the reply delayed it (``x = 1`` through the ``mcp`` client, alternating:
    12.5 / 11.0 ms p50 scanning at once, 10.2 / 7.1 ms 5 ms later; 15 ms later: the same as 5)."""
    global carried
    time.sleep(SCAN_AFTER_S)
    carried = written_since_fork()


def populate(stop: Callable[[], bool] = lambda: False, runs: tuple[np.ndarray, np.ndarray] | None = None) -> int:
    """Copy ``runs`` (default: ``carried``) into this process now (``MADV_POPULATE_WRITE``), in
    chunks of at most ``CHUNK_PAGES`` pages with ``stop()`` asked before each; returns the pages
    asked for, at most ``MAX_PAGES`` whatever the list says. A range unmapped or made read-only
    since the scan is skipped (ENOMEM, EFAULT). Never raises."""
    global _works
    starts, counts = carried if runs is None else runs
    done = 0
    for start, count in zip(starts.tolist(), counts.tolist()):
        count = min(count, MAX_PAGES - done)
        while _works and count > 0:
            if stop():
                return done
            step = min(count, CHUNK_PAGES)
            if _madvise(start, step * PAGE, MADV_POPULATE_WRITE) != 0 and ctypes.get_errno() in _REFUSED:
                _works = False  # the kernel lacks the advice (before 5.14) or seccomp refuses madvise
                return done
            done += step
            start += step * PAGE
            count -= step
    return done

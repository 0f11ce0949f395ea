"""What the launcher's watchdog reads of a session's processes, and how it holds them still.

``stat`` and ``pss`` read ``/proc/PID/stat`` (cheap) and ``/proc/PID/smaps_rollup`` (a page-table
walk: read only when needed); ``session_pids`` walks the session's tree from its pid-namespace init
(orphans are re-parented to it, so nothing a session forks is missed). ``pause``/``resume`` stop
and continue processes through pidfds, so a recycled pid is never signalled.

Blocks nothing by itself; nothing here runs inside a session.
"""
from __future__ import annotations

import os
import signal

from launcher.contain.procs import children_of

PAGE = os.sysconf("SC_PAGE_SIZE")
HZ = os.sysconf("SC_CLK_TCK")
TICK_S = 0.1  # a session with a call running is looked at this often (and read exactly at most this often)


def stat(pid: int) -> tuple[int, int, int, str, int, int, int] | None:
    """(minor+major faults, utime+stime in clock ticks, resident pages, state, ppid, start time,
    cutime+cstime: the CPU of its children it reaped) of ``pid`` from /proc/PID/stat; None when gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    rest = data[data.rfind(b")") + 2:].split()
    # after comm: state(3) ppid(4) ... minflt(10) majflt(12) utime(14) stime(15) cutime(16) cstime(17)
    # ... starttime(22) rss(24)
    try:
        return (int(rest[7]) + int(rest[9]), int(rest[11]) + int(rest[12]), int(rest[21]), rest[0].decode(),
                int(rest[1]), int(rest[19]), int(rest[13]) + int(rest[14]))
    except (IndexError, ValueError):
        return None


def pss(pid: int) -> int | None:
    """Proportional set size of anonymous + shmem memory of ``pid`` in bytes (page-table walk)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
            data = f.read()
    except OSError:
        return None
    got: dict[bytes, int] = {}
    for line in data.splitlines():
        k, _, v = line.partition(b":")
        if k in (b"Pss", b"Pss_Anon", b"Pss_Shmem"):
            try:
                got[k] = int(v.split()[0]) * 1024
            except (IndexError, ValueError):
                pass
    if b"Pss_Anon" in got:
        return got[b"Pss_Anon"] + got.get(b"Pss_Shmem", 0)
    return got.get(b"Pss")  # kernels before 5.8: all of PSS (file pages too: an over-count)


def session_pids(keeper_pid: int, init_pid: int | None) -> list[int]:
    """The keeper, the session's pid-namespace init and every descendant of that init."""
    out = [keeper_pid]
    if init_pid is None:
        return out
    out.append(init_pid)
    stack = [init_pid]
    seen = {keeper_pid, init_pid}
    while stack and len(out) < 4096:
        for c in children_of(stack.pop()):
            if c not in seen:
                seen.add(c)
                out.append(c)
                stack.append(c)
    return out


def pause(pids: list[int]) -> list[tuple[int, int]]:
    """SIGSTOP each of ``pids`` through a pidfd; (pid, pidfd) of those stopped."""
    fds = []
    for p in pids:
        try:
            fd = os.pidfd_open(p)
        except OSError:
            continue
        try:
            signal.pidfd_send_signal(fd, signal.SIGSTOP)
            fds.append((p, fd))
        except OSError:
            os.close(fd)
    return fds


def resume(held: list[tuple[int, int]], kill: set[int] = frozenset()) -> None:
    """SIGCONT what ``pause`` stopped (SIGKILL first those in ``kill``) and close the pidfds."""
    for pid, fd in held:
        try:
            if pid in kill:
                signal.pidfd_send_signal(fd, signal.SIGKILL)
            signal.pidfd_send_signal(fd, signal.SIGCONT)
        except OSError:
            pass
        finally:
            os.close(fd)

"""Process helpers for the launcher: pidfds, /proc tree walks, certain kills.

Signals go through pidfds (``pidfd_open`` + ``pidfd_send_signal``) so a pid
recycled by the kernel can never receive a kill meant for a dead process.
"""
from __future__ import annotations

import os
import select
import signal
import time


def _read_stat(pid: int) -> str | None:
    """/proc/PID/stat, or None when the process is gone. Other errors (EMFILE…) propagate:
    treating them as "gone" would make the launcher drop messages from live processes."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read()
    except (FileNotFoundError, ProcessLookupError):
        return None


def _stat_fields(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after ``comm`` (state first), None when the process is gone.
    comm may contain spaces and parens: the state field follows the last ')'."""
    data = _read_stat(pid)
    if data is None:
        return None
    return data[data.rfind(")") + 2:].split()


def ppid_of(pid: int) -> int | None:
    rest = _stat_fields(pid)
    try:
        return int(rest[1]) if rest is not None else None
    except (IndexError, ValueError):
        return None


def state_of(pid: int) -> str | None:
    rest = _stat_fields(pid)
    return rest[0] if rest else None


PF_EXITING = 0x4  # task->flags bit set at the very start of do_exit()


def exiting(pid: int) -> bool:
    """True once ``pid`` has entered the kernel's exit path (or is gone): from then on it runs no
    more user-space code and can take nothing more from a socket — its ~10 ms of memory teardown
    may still be to come. Read from ``/proc/PID/stat`` (field 9, the task flags)."""
    rest = _stat_fields(pid)
    if rest is None:
        return True
    try:
        return rest[0] in ("Z", "X") or bool(int(rest[6]) & PF_EXITING)
    except (IndexError, ValueError):
        return False


def sigkill_pending(pid: int) -> bool:
    """SIGKILL is queued for ``pid`` (killed, not yet in its exit path: a stopped process is woken
    only to exit). Read from ``/proc/PID/status`` (``SigPnd``/``ShdPnd``, signal 9)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(("SigPnd:", "ShdPnd:")) and int(line.split()[1], 16) & (1 << (signal.SIGKILL - 1)):
                    return True
    except (OSError, ValueError, IndexError):
        pass
    return False


def dying(pid: int) -> bool:
    """Killed, exiting, or gone: ``exiting(pid)`` or ``sigkill_pending(pid)``. Such a process may be
    freeing its memory now, so a read of several processes' shared pages across it is not consistent."""
    return exiting(pid) or sigkill_pending(pid)


def wait_exits(pids, timeout: float) -> bool:
    """Wait until every one of ``pids`` has exited (``Proc.wait_dead``: a zombie's memory is freed, its
    ``exit_mm`` ran before ``exit_notify``), for at most ``timeout`` seconds in all; True when all have.
    For processes already killed: their teardown takes milliseconds."""
    deadline = time.monotonic() + timeout
    done = True
    for pid in pids:
        try:
            p = Proc(pid)
        except ProcessLookupError:
            continue  # gone
        except OSError:
            return False  # no pidfd (EMFILE): not waited for
        try:
            done = p.wait_dead(max(0.0, deadline - time.monotonic())) and done
        finally:
            p.close()
    return done


def children_of(pid: int) -> list[int]:
    out = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                out.extend(int(x) for x in f.read().split())
        except OSError:
            pass
    return out


def descendants(pid: int) -> list[int]:
    seen, stack = [], [pid]
    while stack:
        p = stack.pop()
        for c in children_of(p):
            if c not in seen:
                seen.append(c)
                stack.append(c)
    return seen


def descends_from(pid: int, root: int, max_depth: int = 64) -> bool:
    """True when ``root`` is an ancestor of ``pid`` (by the parent chain, read upwards: unlike a
    walk down from ``root`` it cannot miss a process that is being reparented meanwhile)."""
    p = pid
    for _ in range(max_depth):
        pp = ppid_of(p)
        if pp == root:
            return True
        if pp is None or pp <= 1:
            return False
        p = pp
    return False


class Proc:
    """A process held by pidfd."""

    def __init__(self, pid: int):
        self.pid = pid
        self.fd = os.pidfd_open(pid)

    def alive(self) -> bool:
        """False once the process has exited: a pidfd polls readable as soon as the process is a
        zombie (not only once it is reaped), so no /proc read is needed."""
        if self.fd < 0:
            return False
        r, _, _ = select.select([self.fd], [], [], 0)
        return not r

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.fd >= 0:
            try:
                signal.pidfd_send_signal(self.fd, sig)
            except ProcessLookupError:
                pass

    def wait_dead(self, timeout: float = 2.0) -> bool:
        """Wait until the process has exited (a zombie counts as exited)."""
        deadline = time.monotonic() + timeout
        while True:
            if not self.alive():
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            select.select([self.fd], [], [], min(left, 0.05))

    def wait_exiting(self, timeout: float = 1.0) -> bool:
        """After a SIGKILL: wait until the process has left user space for good (see ``exiting``),
        which takes microseconds once it is scheduled, not the whole teardown ``wait_dead`` waits for."""
        deadline = time.monotonic() + timeout
        delay = 0.0001
        while True:
            try:
                if self.fd < 0 or exiting(self.pid):
                    return True
            except OSError:  # no fd left to read /proc (EMFILE): wait on the pidfd for its whole exit
                return self.wait_dead(max(0.0, deadline - time.monotonic()))
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            select.select([self.fd], [], [], min(left, delay))
            delay = min(delay * 2, 0.01)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


def kill_strays(root: int, keep: set[int], rounds: int = 50, *, dying: list[int] | tuple = ()) -> list[int]:
    """SIGKILL every descendant of ``root`` not in ``keep``, until no new one appears.

    Each stray is opened by pidfd and re-checked to still descend from ``root``
    before the signal, so a recycled pid is never hit. A process that has been
    sent SIGKILL can run no more code (and so fork no more), so it is not waited
    for: the scan repeats only while it finds strays it has not killed yet
    (children forked before the signal landed). Returns the pids killed.

    ``dying``: processes below ``root`` that were SIGKILLed and may still have children. Those
    children move to ``root`` only when their parent's teardown ends, and a walk down from
    ``root`` at that moment can see them under neither; their parents' child lists are
    therefore read *before* the walk (a killed process's child set can only shrink), which
    misses none of them.
    """
    killed: list[int] = []
    held: list[Proc] = []
    try:
        for _ in range(rounds):
            early = [c for d in dying for c in children_of(d)]
            tree = descendants(root)
            for c in early:
                if c not in tree:
                    tree += [c] + descendants(c)
            fresh = [p for p in tree
                     if p not in keep and p not in killed and state_of(p) not in (None, "Z", "X")]
            if not fresh:
                break
            for p in fresh:
                try:
                    pr = Proc(p)
                except OSError:
                    continue
                if descends_from(p, root):
                    pr.kill()
                    killed.append(p)
                    held.append(pr)
                else:
                    pr.close()
        # Strays are rare (user code forked, or an untracked next): wait until each has entered its
        # exit, so that none can still take a datagram from the session socket (a killed process that
        # was not scheduled yet would still dequeue one that arrived first) when the next command is sent.
        for pr in held:
            pr.wait_exiting(1.0)
    finally:
        for pr in held:
            pr.close()
    return killed

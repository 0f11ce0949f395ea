"""Processes seen from the host's /proc: states, trees, fds, memory, and polling with a deadline.

The readers parse /proc themselves (not ``launcher.contain.procs``) so that a bug there cannot
hide the bug a test looks for; only :func:`children` and :func:`descendants` (the tests check the
tree the launcher sees) and :func:`exiting` / :func:`sigkill_pending` (a test's consistent memory
read waits out the same dying processes the watchdog's exact pass does) are the launcher's own, on purpose.
"""
from __future__ import annotations

import os
import sys
import time

from launcher.contain.procs import children_of, descendants  # noqa: F401 - descendants is part of this API
from launcher.contain.procs import dying as exiting  # noqa: F401 - part of this API: killed, exiting or gone
from launcher.contain.procs import sigkill_pending  # noqa: F401 - part of this API


# ----------------------------------------------------------------- one process
def proc_stat(pid: int) -> tuple[str, int, int] | None:
    """(state, ppid, starttime) of ``pid``, or None if it does not exist."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            data = f.read()
    except OSError:
        return None
    rest = data[data.rfind(")") + 2:].split()
    return rest[0], int(rest[1]), int(rest[19])


def alive(pid: int, starttime: int | None = None) -> bool:
    """True if ``pid`` exists, is not a zombie and (if given) is the same process (start time)."""
    st = proc_stat(pid)
    if st is None or st[0] in ("Z", "X"):
        return False
    return starttime is None or st[2] == starttime


def proc_status(pid: int, key: str) -> str | None:
    """The value of ``key`` in /proc/PID/status, None when absent or the process is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        return None
    return None


def fd_count(pid: int | None = None) -> int:
    """Open fds of ``pid``. For this process the promotions still to run after a reply run first
    (decision 0028), then the pending deferred kills are sent: each holds a pidfd of its own for
    ~50 ms after a call (decision 0023), which is not a leak."""
    if pid is None and (after := sys.modules.get("launcher.session.lock")) is not None:
        after.FINISHER.flush()
    if pid is None and (deferred := sys.modules.get("launcher.contain.deferred_kill")) is not None:
        deferred.REAPER.flush()
    return len(os.listdir(f"/proc/{pid or 'self'}/fd"))


def task_count(pid: int | None = None) -> int:
    """Threads of ``pid`` (default: this process), native ones included."""
    return len(os.listdir(f"/proc/{pid or 'self'}/task"))


def rss_kb(pid: int | None = None) -> int:
    with open(f"/proc/{pid or 'self'}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def pss_bytes(pid: int) -> int:
    """Pss_Anon + Pss_Shmem of ``pid`` in bytes from /proc/PID/smaps_rollup, read here (not through
    the launcher's watchdog, which the tests check); 0 once it is gone."""
    total = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                k, _, rest = line.partition(":")
                if k in ("Pss_Anon", "Pss_Shmem"):
                    total += int(rest.split()[0]) * 1024
    except (OSError, ValueError, IndexError):
        return 0
    return total


# ----------------------------------------------------------------- trees
def children(pid: int | None = None) -> list[int]:
    """Direct children of ``pid`` (default: this process), as the launcher finds them."""
    return children_of(pid or os.getpid())


def live_descendants(pid: int) -> list[int]:
    return [p for p in descendants(pid) if alive(p)]


def zombie_children(pid: int | None = None) -> list[int]:
    return [c for c in children(pid) if (proc_stat(c) or ("?",))[0] == "Z"]


def zombies_under(pid: int) -> list[tuple[int, int]]:
    """(zombie pid, its parent) for every zombie among ``pid``'s descendants."""
    out = []
    for p in descendants(pid):
        st = proc_stat(p)
        if st and st[0] == "Z":
            out.append((p, st[1]))
    return out


# ----------------------------------------------------------------- waiting
def wait_until(pred, timeout: float = 5.0, interval: float = 0.01):
    """Poll ``pred()`` until it returns a truthy value (returned) or ``timeout`` passes (None)."""
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() > deadline:
            return None
        time.sleep(interval)


def settled_tree(root: int, expect_min: int, timeout: float = 5.0, quiet: float = 0.05) -> list[int]:
    """Live descendants of ``root`` once there are at least ``expect_min`` and the set has not
    changed for ``quiet`` seconds (or ``timeout`` passed: then the last sample)."""
    last: list[int] = []
    since = time.monotonic()

    def stable():
        nonlocal last, since
        now = sorted(live_descendants(root))
        if now != last:
            last, since = now, time.monotonic()
            return False
        return len(now) >= expect_min and time.monotonic() - since >= quiet

    wait_until(stable, timeout, 0.01)
    return last


def next_pid(session, timeout: float = 10.0) -> int:
    """Host pid of the process the session's next ``execute`` goes to (waits for its ``ready``)."""
    with session.lock:
        session.ensure_next(timeout)
        return session.next.pid


def spare_pid(session, timeout: float = 10.0) -> int | None:
    """Host pid of the next's spare once the launcher knows it (jail/proc/spare.py: an idle next
    forks one after 0.1 s and announces it). Waits for the next's ready, then for the spare; None
    if none comes within ``timeout``. Process counts use it so that a spare forked while a test
    looks is neither missed nor taken for a stray."""
    next_pid(session, timeout)

    def known():
        with session.lock:
            chain = session.chain
            if chain.spare is None:
                session.channel.pump(time.monotonic() + 0.01)  # an offer sent since the last call
                chain.take_spare()
            return chain.spare.pid if chain.spare is not None else None

    return wait_until(known, timeout)


# ground truth from the host's /proc: what is in a session but not tracked by its launcher
def ns_members(init_pid: int) -> set[int]:
    """Every live (not zombie) process in the pid namespace of ``init_pid`` (none once init is gone)."""
    try:
        ns = os.readlink(f"/proc/{init_pid}/ns/pid")
    except OSError:
        return set()
    out = set()
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                if os.readlink(f"/proc/{d}/ns/pid") == ns and alive(int(d)):
                    out.add(int(d))
            except OSError:
                pass
    return out


def tracked(s) -> set[int]:
    spare = spare_pid(s)  # the next's spare, once forked (an idle next forks it after 0.1 s)
    p = s.pids()
    return {x for x in (p["init"], p["head"], p["next"], spare, *p["snapshots"].values()) if x}


def strays(s) -> set[int]:
    """After taking the next's ready: what is in the session but not tracked by the launcher."""
    next_pid(s)
    return ns_members(s.init.pid) - tracked(s)


def assert_contained(s, what: str) -> None:
    left = wait_until(lambda: not strays(s) or None, timeout=10.0) is None and strays(s)
    assert not left, f"{what}: processes outlived their call: {sorted(left)} " \
                     f"(tracked {s.pids()}, all {sorted(ns_members(s.init.pid))})"

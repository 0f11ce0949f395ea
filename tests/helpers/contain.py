"""Test and bench helpers for ``launcher.contain``: a host seen without cgroups, the watchdog's numbers.

``no_cgroups()`` makes the launcher see no cgroup at all while sessions are made, as an
unprivileged launcher without delegation does (the seccomp clone filter, the pid-namespace sweep
and the watchdog only), so tests and benches compare both on one host. ``estimate`` and
``exact_pass`` read a ``MemoryGuard``'s numbers outside the watchdog's own looks.
"""
from __future__ import annotations

import contextlib
import time

from launcher.contain import cgroups, sampling
from launcher.contain.memguard import MemoryGuard


@contextlib.contextmanager
def no_cgroups():
    """While inside, the launcher sees no cgroup at all, as an unprivileged launcher without
    delegation does: sessions made meanwhile get no cgroup containment and no kernel bound (the
    seccomp clone filter, the pid-namespace sweep and the watchdog only)."""
    saved, cgroups._HIER = cgroups._HIER, cgroups.Hierarchy()
    try:
        yield
    finally:
        cgroups._HIER = saved


def estimate(guard: MemoryGuard, pids: list[int]) -> int:
    """The guard's estimate alone, no exact read (what the ticks compare with the limit)."""
    with guard.lock:
        return guard._estimate({p: s for p in pids if (s := sampling.stat(p)) is not None})[0]


def exact_pass(guard: MemoryGuard, pids: list[int]) -> int:
    """An exact pass now, as the guard makes one (every process's PSS read, again once a process read
    was dying; the guard's estimate restarts from it)."""
    with guard.lock:
        stats = {p: s for p in pids if (s := sampling.stat(p)) is not None}
        guard._estimate(stats)
        return guard._settled_exact(pids, stats, {}, time.monotonic(), time.monotonic(), early_stop=False)[0]

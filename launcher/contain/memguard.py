"""A session's memory total, where no cgroup memory controller bounds it: PSS from /proc, cheaply.

``MemoryGuard`` measures what the launcher's watchdog compares with ``session_memory_mb``: an upper
bound from ``/proc/PID/stat`` at every look, an estimate from the last exact pass over it, and an
exact pass (``smaps_rollup`` of every process) only when the estimate is over the bound.

Does not: keep a hard bound (between two looks a call may allocate past it, each process still
under its ``RLIMIT_AS``); see a PSS go stale when a process outside the session that shares its
pages exits (refreshed every ``REFRESH_S``); count a region replaced by huge pages in fewer faults
than pages until the next exact pass, or kernel memory (page tables, socket and pipe buffers); read
the processes at one instant. A process that was killed or exiting while an exact pass read it makes
the pass inconsistent (its shares of pages counted twice, or by nobody once its page tables are
detached: 512 MB shared by two processes read as 294-383 MB, or 666-774 MB, right after one was
killed): the pass is then read again once the exits have ended, waiting ``EXIT_WAIT_S`` at most
(teardown: ~27 ms a GB).
That wait is in the watchdog's one thread, so a session that keeps a process of its own dying slows
the other sessions' looks by up to that much each; an exit slower than it leaves the second pass as
inconsistent as the first, for that pass.
"""
from __future__ import annotations

import threading
import time

from launcher.contain import procs, sampling

REFRESH_S = 10.0          # exact pass at least this often while the upper bound is over the limit
PRECISE_CPU_SHARE = 0.5    # at most this share of one core on exact (smaps_rollup) reads, while over
EXIT_WAIT_S = 0.1          # an exact pass that read a dying process waits this long at most for its exit (~27 ms a GB)


class MemoryGuard:
    """One session's memory total (thread-safe).

    What a session holds is the sum over its processes of their proportional set size of anonymous
    and shared memory (``Pss_Anon + Pss_Shmem`` of ``smaps_rollup``): a page shared by k processes
    counts 1/k to each, so copy-on-write copies across forks and snapshots are counted once each, and
    pages shared with the zygote or other sessions only by their share. That read walks the page
    tables, so it is done only when needed. Each look reads ``/proc/PID/stat`` of every process: the
    sum of resident sizes is an upper bound (PSS <= RSS); within the bound, nothing more. Over it, an
    estimate from the last exact pass: a process's PSS then plus what it can have gained since (no
    anonymous page is new without a page fault; a huge page also grows the resident size), so
    PSS + (new faults + resident growth) x 4 KiB. A process forked since counts its own faults and
    resident growth (what it shares with the processes it descends from is counted by them), and
    once one is, the zygote's resident size is added (a fork inside the session takes a larger part
    of the pages it shares with the zygote); a process that has gone keeps its PSS counted until the
    next exact pass (its shared pages now count to the survivors). Only when that estimate is over
    the bound (or every ``REFRESH_S`` while the upper bound is) are all the session's processes read
    exactly: at most once per ``max(TICK_S, cost / PRECISE_CPU_SHARE)``, and at every tick while the
    estimate grows by a quarter of the bound since the last pass.
    """

    def __init__(self, limit_bytes: int, outside_pid: int | None = None):
        self.limit = limit_bytes
        # the zygote: the one process outside the session that shares pages with it (every session
        # process was forked from it); its resident size bounds how much the session's PSS can grow
        # when a fork inside the session takes more of those shared pages
        self.outside_pid = outside_pid
        self.lock = threading.Lock()
        # (pid, start time) -> (pss bytes, faults, resident pages) at its last exact read
        self._cache: dict[tuple[int, int], tuple[int, int, int]] = {}
        self._ghosts = 0  # PSS of processes exactly read that have gone since: counted until the next exact pass
        self._first_rss: dict[tuple[int, int], int] = {}  # resident pages of a process new since, when first seen
        self._counted: dict[tuple[int, int], int] = {}  # what each live process was last counted for
        self._next_exact = 0.0
        self._last_exact = 0.0
        self._last_exact_total = 0
        self._rss: dict[int, int] = {}  # resident pages of each process at the last look
        self.peak = 0
        self.kills = 0
        self.precise_reads = 0
        self.exact_passes = 0
        self.resettled = 0  # exact passes read again because a process read was dying
        self.last_total = 0

    def total(self, pids: list[int], *, urgent: bool = False, pausable: set[int] = frozenset(),
              paused: list[tuple[int, int]] | None = None) -> tuple[int, bool]:
        """(bytes, exact) for the session whose processes are ``pids``.

        Not exact: an upper bound that is within the limit, or an estimate over it whose exact read
        is not yet due (``urgent`` reads at once). Exact: every process read from smaps_rollup now,
        or those that grew most, whose PSS alone is over the limit (the total is then at least that).
        ``pausable``: processes that may be stopped (SIGSTOP) while they are read, when they grew: a
        call that allocates fast is held still (and its page tables are read without contention); they
        are continued before returning, or, with ``paused``, their pidfds are appended there and the
        caller continues them (after killing them, if the session is over).
        """
        with self.lock:
            stats = {p: s for p in pids if (s := sampling.stat(p)) is not None}
            self._rss = {p: s[2] for p, s in stats.items()}
            est, growth = self._estimate(stats)  # kept up to date at every look, whatever is decided
            upper = sum(s[2] for s in stats.values()) * sampling.PAGE
            if upper <= self.limit:
                self._note(upper)
                return upper, False
            now = time.monotonic()
            due = now >= self._next_exact and now - self._last_exact >= REFRESH_S
            if est <= self.limit and (urgent or not due):
                self._note(est)
                return est, False
            if urgent and not due:
                # at the end of a call: read exactly only what changed since the last pass (the call's
                # process, the head) — usually 2 of the session's processes — before reading them all
                part = self._partial(stats, growth)
                if part <= self.limit:
                    self._note(part)
                    return part, False
            # rate limit, except for a session growing fast (a quarter of its bound since the last pass)
            if not urgent and now < self._next_exact and est - self._last_exact_total < self.limit // 4:
                self._note(est)
                return est, False
            t = time.monotonic()
            held = sampling.pause([p for p in pausable if growth.get(p, 0) > 0 and p in stats])
            try:
                return self._settled_exact(pids, stats, growth, now, t)
            finally:
                if paused is None:
                    sampling.resume(held)
                else:
                    paused.extend(held)

    def _partial(self, stats: dict, growth: dict) -> int:
        """The estimate after reading exactly every process that grew or is new since the last pass
        (the others keep their PSS from it: a share that fell since, as a new sharer forked, is an
        over-count; the gone keep theirs as ghosts)."""
        for p, st in stats.items():
            key = (p, st[5])
            if key in self._cache and growth.get(p, 0) <= 0:
                continue
            v = sampling.pss(p)
            if v is None:
                continue
            self._cache[key] = (v, st[0], st[2])
            self._counted[key] = v
            self._first_rss.pop(key, None)
            self.precise_reads += 1
        return self._estimate(stats)[0]

    def _settled_exact(self, pids: list[int], stats: dict, growth: dict, now: float, t: float, *,
                       early_stop: bool = True) -> tuple[int, bool]:
        """An exact pass that no exit ran across: a process that was killed or exiting while the pass
        read the others frees its mappings meanwhile, and the pages it shared count again to a
        process read after it (an over-count of up to its PSS) or, once its page tables are detached
        but not yet unmapped, to nobody (an under-count: the survivors' shares are still divided). So
        when a process read was dying, wait for the exits to end (``EXIT_WAIT_S`` at most: its
        teardown takes milliseconds) and read again, once."""
        result = self._exact(stats, growth, now, t, early_stop=early_stop)
        # a zombie when its stat was read held no memory: no read crossed its exit
        dying = [p for p, st in stats.items() if st[3] not in ("Z", "X") and procs.dying(p)]
        if not dying:
            return result
        self.resettled += 1
        procs.wait_exits(dying, EXIT_WAIT_S)
        stats = {p: s for p in pids if (s := sampling.stat(p)) is not None}
        growth = self._estimate(stats)[1]
        return self._exact(stats, growth, now, time.monotonic(), early_stop=early_stop)

    def _exact(self, stats: dict, growth: dict, now: float, t: float, *,
               early_stop: bool = True) -> tuple[int, bool]:
        exact, cache = 0, {}
        # the processes that grew most first: once those alone are over the limit (every PSS is
        # >= 0) the session is over it, and the rest need not be read (a call growing fast is
        # stopped ~N x 10 ms sooner)
        for p in sorted(stats, key=lambda q: growth.get(q, 0), reverse=True):
            s = stats[p]
            v = sampling.pss(p)
            if v is None:
                continue  # gone meanwhile
            cache[(p, s[5])] = (v, s[0], s[2])
            exact += v
            if early_stop and exact > self.limit and len(cache) < len(stats):
                self.precise_reads += len(cache)
                self._cache.update(cache)
                for k, v in cache.items():
                    self._counted[k] = v[0]
                self._last_exact_total = exact
                self._note(exact)
                return exact, True
        self.precise_reads += len(cache)
        self.exact_passes += 1
        self._cache, self._ghosts, self._first_rss = cache, 0, {}
        self._counted = {k: v[0] for k, v in cache.items()}
        cost = time.monotonic() - t
        self._last_exact = now
        self._next_exact = time.monotonic() + max(sampling.TICK_S, cost / PRECISE_CPU_SHARE)
        self._last_exact_total = exact
        self._note(exact)
        return exact, True

    def _estimate(self, stats: dict) -> tuple[int, dict[int, int]]:
        """The estimate from the last exact pass (see the class docstring), and each process's
        growth since; files gone processes as ghosts. Only /proc/PID/stat values are used."""
        live = {(p, s[5]) for p, s in stats.items()}
        for k in [k for k in self._counted if k not in live]:
            # gone: what it was counted for stays counted (its shared pages now count to survivors)
            self._ghosts += self._counted.pop(k)
            self._first_rss.pop(k, None)
        est, growth, forked = self._ghosts, {}, False
        for p, (faults, _cpu, rss, _st, _ppid, start, _reaped) in stats.items():
            c = self._cache.get((p, start))
            if c is None or faults < c[1]:
                forked = True
                # forked since the last exact pass, from processes that were in it (alive, or ghosts
                # now): what it shares with them is counted there; what it has of its own came with
                # its own faults (counted from 0 at its fork) or, for huge pages, grew its resident
                # size since the watchdog first saw it
                c = (0, 0, self._first_rss.setdefault((p, start), rss))
            # no new anonymous page without a fault (4 KiB each); a huge page also grows the RSS
            e = min(rss * sampling.PAGE, c[0] + (faults - c[1] + max(0, rss - c[2])) * sampling.PAGE)
            self._counted[(p, start)] = max(e, self._counted.get((p, start), 0))
            growth[p] = e - c[0]
            est += e
        if forked and self.outside_pid is not None:
            # a fork shares pages with the zygote 1/(k+1) more ways: the session's part of them grows
            # (by at most what the zygote has resident)
            z = sampling.stat(self.outside_pid)
            est += (z[2] if z is not None else 0) * sampling.PAGE
        return est, growth

    def quick_upper(self, fresh: list[int]) -> int | None:
        """The upper bound (sum of resident sizes) with ``fresh`` read now and every other process
        as the last look found it (a call's processes are the ones that changed; idle ones are
        looked at by the ticks). None when a process is gone or there was no look yet."""
        with self.lock:
            if not self._rss:
                return None
            rss = dict(self._rss)
            for p in fresh:
                st = sampling.stat(p)
                if st is None:
                    return None
                rss[p] = st[2]
            return sum(rss.values()) * sampling.PAGE

    def last_look_saw(self, pids: set[int]) -> bool:
        """True when every one of ``pids`` was among the processes the last look read."""
        return set(self._rss) >= pids

    def _note(self, total: int) -> None:
        self.last_total = total
        if total > self.peak:
            self.peak = total

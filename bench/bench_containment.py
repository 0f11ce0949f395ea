#!/usr/bin/env python3
"""What process containment costs per call, and what it bounds (issue 11).

    python bench/bench_containment.py            # N = 300 calls per mode
    python bench/bench_containment.py --n 100

1. Per-call cost (:func:`run_modes`, :func:`stray_path`): a session with the cgroup containment
   vs one without it, p50 of the whole call and p50/p99 of the containment hooks, in microseconds;
   and failed calls that each leave a forked child behind (the sweep's freeze + kill + thaw path).
2. Bound (:func:`memory_bound`): the session's memory high-water mark vs ``session_memory_mb``
   after three children that each touch 400 MB, with the OOM kills the kernel made.

Nothing is asserted: the figures are printed (``--json`` for a machine-readable line).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from launcher.contain import cgroups  # noqa: E402
from launcher.core import Launcher  # noqa: E402
from tests.helpers.contain import no_cgroups  # noqa: E402

FAST = str(REPO / "tests" / "profiles" / "sessions_fast.toml")
MEM = str(REPO / "tests" / "profiles" / "contain_memory.toml")


def _timed(obj, name, sink):
    orig = getattr(obj, name)

    def wrapper(*a, **kw):
        t = time.perf_counter()
        try:
            return orig(*a, **kw)
        finally:
            sink.append((time.perf_counter() - t) * 1e6)
    setattr(obj, name, wrapper)


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p))] if xs else float("nan")


STRAY = "import os, time\nif os.fork() == 0:\n    time.sleep(1000)\nraise ValueError('a stray left behind')"


def stray_path(n: int) -> dict:
    """Failed calls that each leave a forked child: the sweep's freeze + kill + thaw path."""
    with Launcher(str(REPO / "tests" / "profiles" / "contain_os_only.toml"), spare_sessions=0) as L:
        s = L.new_session()
        hooks: list[float] = []
        _timed(s.contain, "sweep", hooks)
        for _ in range(5):
            s.execute(STRAY)
        hooks.clear()
        for _ in range(n):
            s.execute(STRAY)
        out = {"cgroup": s.contain.active, "sweeps_with_a_stray_p50_us": round(statistics.median(hooks)),
               "p99_us": round(pct(hooks, 0.99)), "strays_killed_by_cgroup": s.contain.killed_strays}
        L.close_session(s)
        return out


def run_modes(L, n: int) -> dict:
    """Two sessions, one with and one without cgroups, called alternately (same host load).

    On ``tests/profiles/sessions_fast.toml`` (the default jail, short clocks). With: a cgroup per
    tracked process, moved when a next is taken; the old head's cgroup killed and the new head's
    checked after a successful call. Without: the hierarchy forced to "none", as for an
    unprivileged launcher (only the seccomp clone filter and the pid-namespace sweep). Both run N
    trivial ``execute("x = 1")`` calls and N failing ones (``raise ValueError``). Reported: p50 of
    the whole call as the launcher sees it, and p50/p99 of the containment hooks themselves
    (``on_ready`` + ``sweep``, timed around the calls the Session makes), in microseconds."""
    s_cg = L.new_session()
    with no_cgroups():  # as an unprivileged launcher without delegation sees it
        s_no = L.new_session()
    out = {}
    data = {}
    for key, s in (("with_cgroups", s_cg), ("without_cgroups", s_no)):
        hooks: list[float] = []
        _timed(s.contain, "on_ready", hooks)
        _timed(s.contain, "sweep", hooks)
        data[key] = (s, hooks, [], [], [])
        for _ in range(20):  # warm-up
            s.execute("x = 1")
    for i in range(n):
        for key, (s, hooks, ok, bad, per_call) in data.items():
            hooks.clear()
            t = time.perf_counter()
            r = s.execute("x = 1")
            ok.append((time.perf_counter() - t) * 1e6)
            assert r["ok"], r
            t = time.perf_counter()
            r = s.execute("raise ValueError('no')")
            bad.append((time.perf_counter() - t) * 1e6)
            assert not r["ok"]
            per_call.append(sum(hooks) / 2)
    for key, (s, hooks, ok, bad, per_call) in data.items():
        out[key] = {"cgroup": s.contain.active, "execute_ok_p50_us": round(statistics.median(ok)),
                    "execute_failed_p50_us": round(statistics.median(bad)),
                    "hooks_per_call_p50_us": round(statistics.median(per_call), 1),
                    "hooks_per_call_p99_us": round(pct(per_call, 0.99), 1)}
        L.close_session(s)
    return out


def memory_bound() -> dict | None:
    """The kernel's ``memory.peak`` (or v1 ``memory.max_usage_in_bytes``) after three children touch
    400 MB each (``contain_memory.toml``: 768 MB session bound, 1024 MB RLIMIT_AS per process)."""
    code = ("import os\npipes = []\nfor i in range(3):\n    r, w = os.pipe()\n    if os.fork() == 0:\n"
            "        b = bytearray(400 << 20)\n        for j in range(0, len(b), 4096):\n            b[j] = 1\n"
            "        os.write(w, b'k')\n        import time\n        time.sleep(1000)\n    os.close(w)\n"
            "    pipes.append(r)\nprint(sum(1 for r in pipes if os.read(r, 1) == b'k'))\nraise ValueError('done')")
    with Launcher(MEM, spare_sessions=0) as L:
        s = L.new_session()
        if s.contain.memory_peak_bytes() is None:
            return None
        s.execute(code)
        out = {"session_memory_mb": s.profile.limits.session_memory_mb, "attempted_mb": 3 * 400,
               "peak_mb": s.contain.memory_peak_bytes() >> 20, "oom_kills": s.contain.oom_kills(),
               "session_still_answers": s.execute("print(1)")["ok"]}
        L.close_session(s)
        return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--profile", default=FAST, help="profile of the per-call part (default: sessions_fast)")
    a = ap.parse_args()
    res = {"hierarchy": cgroups.hierarchy().describe()}
    with Launcher(a.profile, spare_sessions=0) as L:
        res.update(run_modes(L, a.n))
    res["stray_path"] = stray_path(max(20, a.n // 10))
    res["memory_bound"] = memory_bound()
    if a.json:
        print(json.dumps(res))
        return
    print(f"containment per call, N={a.n} ok + {a.n} failed execute()s, microseconds:")
    for k in ("with_cgroups", "without_cgroups"):
        v = res[k]
        print(f"  {k:16s} execute ok p50 {v['execute_ok_p50_us']:>6}  failed p50 {v['execute_failed_p50_us']:>6}  "
              f"containment hooks per call p50 {v['hooks_per_call_p50_us']:>6}  p99 {v['hooks_per_call_p99_us']:>6}")
    sp = res["stray_path"]
    print(f"  a stray per failed call: sweep p50 {sp['sweeps_with_a_stray_p50_us']} us, p99 {sp['p99_us']} us "
          f"(cgroup {sp['cgroup']}, {sp['strays_killed_by_cgroup']} strays killed by the cgroup sweep)")
    m = res["memory_bound"]
    if m:
        print(f"session memory: peak {m['peak_mb']} MB with a {m['session_memory_mb']} MB bound "
              f"(3 children tried to hold {m['attempted_mb']} MB; {m['oom_kills']} OOM kill(s); "
              f"session still answers: {m['session_still_answers']})")
    else:
        print("session memory: no cgroup memory bound on this host")


if __name__ == "__main__":
    main()

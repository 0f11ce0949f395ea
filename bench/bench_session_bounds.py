#!/usr/bin/env python3
"""Session-wide bounds kept by the launcher's watchdog where no cgroup controller is writable (issue 11).

    python bench/bench_session_bounds.py            # N = 300 calls per mode
    python bench/bench_session_bounds.py --n 100 --json

1. Memory bound (:func:`memory_bound`): the highest session total vs ``session_memory_mb``,
   watchdog vs the kernel's bound where this host has one, and how long the call ran.
2. Cost on the execute path (:func:`p50_pair`): p50 of a trivial call, watched / unwatched.
3. CPU share (:func:`cpu_share`): CPU time per second of wall time under ``session_cpus`` 1.0.
4. The watchdog thread's own CPU (:func:`watchdog_cpu`): idle sessions, and snapshots over the bound.

Nothing is asserted: the figures are printed (``--json`` for a machine-readable line).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from launcher.contain import watchdog  # noqa: E402
from launcher.core import Launcher  # noqa: E402
from tests.helpers.contain import no_cgroups  # noqa: E402

FAST = str(REPO / "tests" / "profiles" / "sessions_fast.toml")
MEM = str(REPO / "tests" / "profiles" / "contain_memory.toml")

FORKS = ("import os\npipes = []\nfor i in range(3):\n    r, w = os.pipe()\n    if os.fork() == 0:\n"
         "        b = bytearray(400 << 20)\n        for j in range(0, len(b), 4096):\n            b[j] = 1\n"
         "        os.write(w, b'k')\n        import time\n        time.sleep(1000)\n    os.close(w)\n"
         "    pipes.append(r)\nprint(sum(1 for r in pipes if os.read(r, 1) == b'k'))\nimport time\ntime.sleep(3)\n")
SPIN = ("import os, time, resource\nkids = []\nt0 = time.time()\nfor i in range(2):\n    pid = os.fork()\n"
        "    if pid == 0:\n        t = time.time()\n        while time.time() - t < 3:\n            pass\n"
        "        os._exit(0)\n    kids.append(pid)\nfor k in kids:\n    os.waitpid(k, 0)\n"
        "ru = resource.getrusage(resource.RUSAGE_CHILDREN)\nprint(ru.ru_utime + ru.ru_stime, time.time() - t0)")


def unbounded_session(L):
    """A session as an unprivileged launcher without delegation makes it (no cgroup at all)."""
    with no_cgroups():
        return L.new_session()


def unwatch(s) -> None:
    watchdog.WATCHDOG.remove(s.watch)
    s.watch.memory = s.watch.cpu = None
    s.watch.active = False


def memory_bound(runs: int = 5) -> dict:
    """A call forks 3 children that each touch 400 MB and wait, under a 768 MB ``session_memory_mb``
    (``contain_memory.toml``, 1024 MB ``RLIMIT_AS`` per process), ``runs`` times. Watchdog (the
    launcher made to see no cgroup, as an unprivileged launcher without delegation does) vs the
    kernel's bound where this host has one (v1 ``memory`` as root). Reported: the highest session
    total the watchdog measured (PSS) or the kernel's high-water mark
    (``memory.max_usage_in_bytes``), as a ratio to the bound, and how long the call ran before it
    was killed."""
    out = {}
    with Launcher(MEM, spare_sessions=0) as L:
        for mode in ("watchdog", "kernel"):
            s = unbounded_session(L) if mode == "watchdog" else L.new_session()
            if mode == "kernel" and s.memory_report()["mechanism"] == "watchdog":
                L.close_session(s)
                out["kernel"] = None
                continue
            s.execute("keep = 1")
            ratios, killed_after, errors = [], [], []
            for _ in range(runs):
                t = time.monotonic()
                r = s.execute(FORKS)
                killed_after.append(time.monotonic() - t)
                errors.append((r.get("error") or {}).get("type") if not r["ok"] else "ok")
                rep = s.memory_report()
                ratios.append((rep["peak_bytes"] or 0) / rep["limit_bytes"])
                if mode == "watchdog":
                    s.watch.memory.peak = 0  # per run
            out[mode] = {"mechanism": s.memory_report()["mechanism"], "limit_mb": s.profile.limits.session_memory_mb,
                         "attempted_mb": 1200, "peak_over_bound_max": round(max(ratios), 2),
                         "peak_over_bound_p50": round(statistics.median(ratios), 2),
                         "call_killed_after_s_p50": round(statistics.median(killed_after), 2),
                         "errors": sorted(set(errors)), "session_answers": s.execute("print(keep)")["ok"]}
            L.close_session(s)
    return out


def p50_pair(L, n: int, snapshots: int) -> dict:
    """Watched vs unwatched session, alternately; each call timed with the session's next ready
    (a 50 ms pause before it, as bench/run_all.py row 1 does).

    Two sessions (same host load), one watched by the watchdog (memory + CPU) and one not (its
    watch removed: the baseline), N trivial ``execute("x = 1")`` each; with ``snapshots`` = 4, each
    session holds 4 snapshots of a 200 MB state (the end-of-call check then has 11 processes to
    add up and their upper bound is over the bound). Reported: p50 and the ratio watched / baseline."""
    watched, base = unbounded_session(L), unbounded_session(L)
    unwatch(base)
    for s in (watched, base):
        if snapshots:
            s.execute("big = bytearray(200 << 20)\nfor j in range(0, len(big), 4096):\n    big[j] = 1")
            for i in range(snapshots):
                s.save_snapshot(f"s{i}")
        for _ in range(20):
            s.execute("x = 1")
    t_w, t_b = [], []
    for _ in range(n):
        for s, sink in ((watched, t_w), (base, t_b)):
            time.sleep(0.05)  # the pause of row 1 of run_all.py: the head forks its next meanwhile
            t = time.perf_counter()
            r = s.execute("x = 1")
            sink.append((time.perf_counter() - t) * 1e6)
            assert r["ok"], r
    res = {"watched_p50_us": round(statistics.median(t_w)), "baseline_p50_us": round(statistics.median(t_b)),
           "ratio": round(statistics.median(t_w) / statistics.median(t_b), 3),
           "delta_us": round(statistics.median(t_w) - statistics.median(t_b))}
    res["exact_reads"] = watched.memory_report()["exact_reads"]
    L.close_session(watched)
    L.close_session(base)
    return res


def cpu_share() -> dict:
    """A call forks 2 children that spin for 3 s of wall time, ``session_cpus`` 1.0: the CPU time
    the children got (``RUSAGE_CHILDREN``) per second of wall time, watchdog vs none."""
    out = {}
    with Launcher(MEM, spare_sessions=0) as L:
        for mode in ("watchdog", "none"):
            s = unbounded_session(L)
            if mode == "none":
                unwatch(s)
            r = s.execute(SPIN)
            cpu, wall = (float(x) for x in r["stdout"].split())
            out[mode] = {"children_cpu_s": round(cpu, 2), "wall_s": round(wall, 2), "cpus_used": round(cpu / wall, 2),
                         "throttled_periods": s.cpu_report()["throttled"] if mode == "watchdog" else 0}
            L.close_session(s)
    return out


def _thread_cpu_s() -> float:
    for t in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{t}/comm") as f:
                if not f.read().startswith("session-watch"):
                    continue
            with open(f"/proc/self/task/{t}/stat") as f:
                rest = f.read().rsplit(")", 1)[1].split()
            return (int(rest[11]) + int(rest[12])) / os.sysconf("SC_CLK_TCK")
        except OSError:
            continue
    return 0.0


def _name_watchdog_thread() -> None:
    """Give the watchdog's native thread a name /proc shows (Python's thread name is not the comm)."""
    orig = watchdog._Watchdog._run

    def run(self):
        try:
            import ctypes
            ctypes.CDLL(None).prctl(15, b"session-watch", 0, 0, 0)
        except OSError:
            pass
        orig(self)
    watchdog._Watchdog._run = run


def watchdog_cpu(seconds: float = 10.0) -> dict:
    """The watchdog thread's utime + stime over ``seconds`` with 4 idle sessions, and with one
    session that holds 4 snapshots over its upper bound (exact reads, full refresh)."""
    _name_watchdog_thread()
    out = {}
    with Launcher(FAST, spare_sessions=0) as L:
        ss = [unbounded_session(L) for _ in range(4)]
        for s in ss:
            s.execute("x = 1")
        c0 = _thread_cpu_s()
        time.sleep(seconds)  # the bench measures what the thread costs over this wall time
        out["idle_4_sessions_core_share"] = round((_thread_cpu_s() - c0) / seconds, 4)
        for s in ss:
            L.close_session(s)
    with Launcher(MEM, spare_sessions=0) as L:
        s = unbounded_session(L)
        s.execute("big = bytearray(200 << 20)\nfor j in range(0, len(big), 4096):\n    big[j] = 1")
        for i in range(4):
            s.save_snapshot(f"s{i}")
        s.execute("x = 1")
        c0 = _thread_cpu_s()
        time.sleep(seconds)
        out["4_snapshots_over_upper_bound_core_share"] = round((_thread_cpu_s() - c0) / seconds, 4)
        out["4_snapshots_exact_reads"] = s.memory_report()["exact_reads"]
        out["4_snapshots_total_mb"] = s.memory_report()["last_bytes"] >> 20
        L.close_session(s)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    res = {"memory_bound": memory_bound()}
    with Launcher(FAST, spare_sessions=0) as L:  # the default jail and bounds (4096 MB): far from it
        res["execute_cost"] = p50_pair(L, a.n, 0)
    with Launcher(MEM, spare_sessions=0) as L:  # 768 MB: 4 snapshots of 200 MB put it at about half
        res["execute_cost_4_snapshots"] = p50_pair(L, max(50, a.n // 3), 4)
    res["cpu_share"] = cpu_share()
    res["watchdog_thread"] = watchdog_cpu()
    if a.json:
        print(json.dumps(res))
        return
    for mode, m in res["memory_bound"].items():
        if m is None:
            print(f"memory bound ({mode}): not available on this host")
            continue
        print(f"memory bound ({m['mechanism']}): 3 x 400 MB under {m['limit_mb']} MB: peak/bound p50 "
              f"{m['peak_over_bound_p50']} max {m['peak_over_bound_max']}, call killed after "
              f"{m['call_killed_after_s_p50']} s p50, errors {m['errors']}, session answers {m['session_answers']}")
    for k in ("execute_cost", "execute_cost_4_snapshots"):
        v = res[k]
        print(f"{k}: watched p50 {v['watched_p50_us']} us vs baseline {v['baseline_p50_us']} us "
              f"(x{v['ratio']}, {v['delta_us']:+} us; exact reads {v['exact_reads']})")
    for mode, v in res["cpu_share"].items():
        print(f"cpu share ({mode}): 2 spinning children got {v['cpus_used']} CPUs ({v['children_cpu_s']} s in "
              f"{v['wall_s']} s; throttled periods {v['throttled_periods']})")
    w = res["watchdog_thread"]
    print(f"watchdog thread: {w['idle_4_sessions_core_share'] * 100:.2f}% of a core with 4 idle sessions; "
          f"{w['4_snapshots_over_upper_bound_core_share'] * 100:.2f}% with 4 snapshots over the upper bound "
          f"({w['4_snapshots_total_mb']} MB, {w['4_snapshots_exact_reads']} exact reads)")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""build123d-launcher benchmarks (issue 4): every figure next to a baseline measured in the same run.

    python bench/run_all.py            # print the results (markdown)
    python bench/run_all.py --write    # ...and rewrite bench/RESULTS.md's "## Benchmarks" (keeps the other sections)
    python bench/run_all.py --quick    # fewer repetitions (a smoke run)

Measured (goals from the issue in brackets; each ``bench_*`` function says how):
1. execute overhead for ``x = 1`` vs in-process ``exec`` [<= +1 ms p50] (:func:`bench_execute`);
2. new session / reset to first result vs ``python -c 'import build123d'`` [>= 40x faster]
   (:func:`bench_sessions`);
3. time until usable after a timeout kill [<= 50 ms] (:func:`bench_timeout`);
4. snapshot save + restore, 1 vs 1000 solids [<= 20 ms, ratio <= 1.5] (:func:`bench_snapshots`);
5. PSS per idle session [<= 30 MB], 0.5 s after a call and once gone cold (:func:`bench_pss`).
Nothing here asserts; the goals are shown next to the figures.
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(HERE))
from peer import pct  # noqa: E402 - one percentile for every bench
os.environ["BUILD123D_LAUNCHER_PROFILES"] = os.pathsep.join(
    [str(REPO / "tests" / "profiles")] + [p for p in os.environ.get("BUILD123D_LAUNCHER_PROFILES", "").split(os.pathsep) if p])

PROFILE = str(REPO / "tests" / "profiles" / "bench.toml")
TIMEOUT_PROFILE = str(REPO / "tests" / "profiles" / "bench_timeout.toml")


def ms(x):
    return f"{x:.2f} ms" if x < 100 else f"{x:.0f} ms"


def goal(ok: bool) -> str:
    return "met" if ok else "**not met**"


def wait_next(session, timeout=5.0):
    """Until the head has forked its next (the state between calls)."""
    from launcher.contain.procs import children_of
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        p = session.pids()
        if p["next"] or children_of(p["head"]):
            return
        time.sleep(0.005)


# ------------------------------------------------------------------ 1. execute overhead
def bench_execute(L, n: int) -> dict:
    """p50/p90 over ``n`` calls, two ways: *next ready* (50 ms pause before each call, so the
    pre-forked ``next`` is waiting; only the call is timed) and *back-to-back* (each call also waits
    for the head to fork the next one)."""
    code = "x = 1"
    ns: dict = {}
    base = []
    for _ in range(max(n, 1000)):
        t = time.perf_counter()
        exec(compile(code, "<execute>", "exec"), ns)
        base.append((time.perf_counter() - t) * 1000)
    s = L.new_session()
    for _ in range(5):
        s.execute(code)
    ready, b2b = [], []
    for _ in range(n):
        time.sleep(0.05)
        t = time.perf_counter()
        r = s.execute(code)
        ready.append((time.perf_counter() - t) * 1000)
        assert r["ok"], r
    for _ in range(n):
        t = time.perf_counter()
        r = s.execute(code)
        b2b.append((time.perf_counter() - t) * 1000)
        assert r["ok"], r
    inner = [r for r in [s.execute(code).get("duration_ms") for _ in range(20)] if isinstance(r, (int, float))]
    # where the time goes: SIGKILL -> exit of an idle jailed process (the teardown of the old head that
    # every successful call replaces; the launcher does not wait for it, but it competes for the CPU)
    import select
    import signal
    from launcher.contain.procs import children_of
    exit_ms = []
    for _ in range(20):
        wait_next(s)
        time.sleep(0.02)
        kids = children_of(s.pids()["head"])
        if not kids:
            continue
        fd = os.pidfd_open(kids[0])
        t = time.perf_counter()
        signal.pidfd_send_signal(fd, signal.SIGKILL)
        select.select([fd], [], [], 5)
        exit_ms.append((time.perf_counter() - t) * 1000)
        os.close(fd)
        s.execute(code)  # the launcher notices the dead next and takes a new one
    L.close_session(s)
    return {"base": base, "ready": ready, "b2b": b2b, "inner_p50": statistics.median(inner) if inner else None,
            "exit_ms": exit_ms}


# ------------------------------------------------------------------ 2. new session / reset
def bench_sessions(n: int, baseline_n: int) -> dict:
    """With the launcher's spare session (what ``reset`` uses) and without it, against spawning
    ``python -c 'import build123d'`` + the same code."""
    from launcher.core import Launcher
    from launcher.tools.toolset import ToolSet
    code = "x = 1"
    out = {}
    with Launcher(PROFILE, spare_sessions=1) as L:
        ts = ToolSet(L)
        ts.call("execute", {"code": code})
        times = []
        for _ in range(n):
            time.sleep(0.3)  # let the spare be re-made, as between two assistant turns
            t = time.perf_counter()
            ts.call("reset", {})
            r = ts.call("execute", {"code": code})
            times.append((time.perf_counter() - t) * 1000)
            assert r.get("ok"), r
        ts.close()
        out["reset_spare"] = times
    with Launcher(PROFILE, spare_sessions=0) as L:
        times = []
        for _ in range(n):
            t = time.perf_counter()
            s = L.new_session()
            r = s.execute(code)
            times.append((time.perf_counter() - t) * 1000)
            assert r["ok"], r
            L.close_session(s)
        out["new_cold"] = times
    base = []
    for _ in range(baseline_n):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", f"import build123d\n{code}"], check=True, cwd="/",
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        base.append((time.perf_counter() - t) * 1000)
    out["base"] = base
    return out


# ------------------------------------------------------------------ 3. timeout recovery
def bench_timeout(L, n: int) -> dict:
    """``while True: pass`` under a 1 s limit, then the next trivial call is timed."""
    s = L.new_session()
    s.execute("y = 1")
    kill, usable = [], []
    for _ in range(n):
        t = time.perf_counter()
        r = s.execute("while True:\n    pass")
        t1 = time.perf_counter()
        assert r["error"]["type"] == "ExecutionTimeout", r
        r = s.execute("x = 1")
        t2 = time.perf_counter()
        assert r["ok"], r
        kill.append((t1 - t) * 1000)
        usable.append((t2 - t1) * 1000)
    # baseline: the same trivial call with the next already waiting
    base = []
    for _ in range(n):
        time.sleep(0.05)
        t = time.perf_counter()
        s.execute("x = 1")
        base.append((time.perf_counter() - t) * 1000)
    L.close_session(s)
    return {"kill": kill, "usable": usable, "base": base}


# ------------------------------------------------------------------ 4. snapshots
SOLIDS = {1: "from build123d import Box\nparts = [Box(1, 1, 1)]",
          1000: "from build123d import Box, Pos\nparts = [Pos(i, 0, 0) * Box(1, 1, 1) for i in range(1000)]"}


def bench_snapshots(L, n: int) -> dict:
    out = {}
    for k, code in SOLIDS.items():
        s = L.new_session()
        r = s.execute(code)
        assert r["ok"], r
        save, restore, both, first = [], [], [], []
        for i in range(n):
            wait_next(s)
            t = time.perf_counter()
            s.save_snapshot(f"b{i}")
            t1 = time.perf_counter()
            s.restore_snapshot(f"b{i}")
            t2 = time.perf_counter()
            r = s.execute("x = 1")  # restore -> first result: also waits for the restored head's next
            t3 = time.perf_counter()
            assert r["ok"], r
            save.append((t1 - t) * 1000)
            restore.append((t2 - t1) * 1000)
            both.append((t2 - t) * 1000)
            first.append((t3 - t1) * 1000)
            s.delete_snapshot(f"b{i}")
        r = s.execute("print(len(parts))")
        assert r["stdout"] == f"{k}\n", r
        out[k] = {"save": save, "restore": restore, "both": both, "first": first}
        L.close_session(s)
    return out


# ------------------------------------------------------------------ 5. PSS
def smaps_kb(pid: int, field: str) -> int:
    """One field (``Pss``, ``Rss``) of /proc/PID/smaps_rollup in kB; 0 when the process is gone."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def pss_kb(pid: int) -> int:
    return smaps_kb(pid, "Pss")


def rss_kb(pid: int) -> int:
    return smaps_kb(pid, "Rss")


def gone_cold(sessions, timeout: float) -> bool:
    """Until no session's next (a child of its head) has a live child: after ``IDLE_EXIT_S`` idle the
    next leaves with its spare, and the cold next its head forks has none (decision 0026). Called
    once the spares exist (0.1 s after a call). False at ``timeout``."""
    from launcher.contain.procs import children_of, state_of
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        nexts = [c for s in sessions for c in children_of(s.pids()["head"])]  # the launcher may not know them yet
        if not any(state_of(c) not in (None, "Z", "X") for n in nexts for c in children_of(n)):
            return True
        time.sleep(0.2)
    return False


def bench_pss(counts=(1, 4, 16)) -> dict:
    """``/proc/PID/smaps_rollup`` of the zygote and all session processes for N = 1, 4, 16 sessions;
    the marginal PSS per session is the slope between N = 1 and N = 16. Measured 0.5 s after the
    sessions' last call and, for the first and last N, again once they have gone cold
    (``jail.proc.spare.IDLE_EXIT_S``, decision 0026): ``pss_idle_kb``."""
    from launcher.core import Launcher
    from launcher.contain.procs import descendants
    from jail.proc.spare import IDLE_EXIT_S
    out = {}
    with Launcher(PROFILE, spare_sessions=0) as L:
        sessions = []
        for n in counts:
            while len(sessions) < n:
                s = L.new_session()
                r = s.execute("from build123d import Box\nb = Box(10, 10, 10)")
                assert r["ok"], r
                sessions.append(s)
            for s in sessions:
                wait_next(s)
            time.sleep(0.5)
            zyg = L.zygote.pid
            procs = [zyg] + descendants(zyg)
            total = sum(pss_kb(p) for p in procs)
            out[n] = {"procs": len(procs), "pss_kb": total, "zygote_pss_kb": pss_kb(zyg),
                      "zygote_rss_kb": rss_kb(zyg),
                      "per_session_procs": (len(procs) - 1) / n}
            if n in (counts[0], counts[-1]) and gone_cold(sessions, IDLE_EXIT_S + 30):
                procs = [zyg] + descendants(zyg)
                out[n]["pss_idle_kb"] = sum(pss_kb(p) for p in procs)
                out[n]["idle_s"] = IDLE_EXIT_S
        for s in sessions:
            L.close_session(s)
    return out


# ------------------------------------------------------------------ report
def report(res: dict, cmd: str, elapsed: float) -> str:
    e, se, to, sn, pss = res["execute"], res["sessions"], res["timeout"], res["snapshots"], res["pss"]
    lines = []
    A = lines.append
    A(f"Command: `{cmd}`  ")
    A(f"Date: {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}  ")
    A(f"Machine: {platform.node()} — {os.cpu_count()} CPUs, Linux {platform.release()}, "
      f"Python {platform.python_version()}; profiles `bench` (= the default jail) and `bench_timeout` (timeout_s = 1); "
      f"run took {elapsed:.0f} s.")
    A("")
    A("| # | what | launcher | baseline (same run) | ratio / overhead | goal |")
    A("|---|------|----------|---------------------|------------------|------|")
    bp50 = pct(e["base"], 50)
    for key, label in (("ready", "execute `x = 1`, next ready (50 ms pause)"),
                       ("b2b", "execute `x = 1`, back-to-back")):
        p50, p90 = pct(e[key], 50), pct(e[key], 90)
        A(f"| 1 | {label} | p50 {ms(p50)}, p90 {ms(p90)} | in-process `exec`: p50 {bp50 * 1000:.1f} µs, "
          f"p90 {pct(e['base'], 90) * 1000:.1f} µs | +{ms(p50 - bp50)} p50 | ≤ +1 ms p50: "
          f"{goal(p50 - bp50 <= 1.0)} |")
    base_s = pct(se["base"], 50)
    for key, label in (("reset_spare", "reset → first result (spare session ready)"),
                       ("new_cold", "new session → first result (no spare)")):
        p50 = pct(se[key], 50)
        A(f"| 2 | {label} | p50 {ms(p50)}, p90 {ms(pct(se[key], 90))} | `python -c 'import build123d; x = 1'`: "
          f"p50 {ms(base_s)} | {base_s / p50:.0f}× faster | ≥ 40×: {goal(base_s / p50 >= 40)} |")
    up50 = pct(to["usable"], 50)
    A(f"| 3 | usable after a timeout kill (1 s limit) | next call p50 {ms(up50)}, max {ms(max(to['usable']))}; "
      f"the timed-out call returned after p50 {ms(pct(to['kill'], 50))} | trivial call, next ready: "
      f"p50 {ms(pct(to['base'], 50))} | +{ms(up50 - pct(to['base'], 50))} | ≤ 50 ms: {goal(up50 <= 50)} |")
    s1, s1000 = pct(sn[1]["both"], 50), pct(sn[1000]["both"], 50)
    A(f"| 4 | snapshot save + restore, 1000 solids | p50 {ms(s1000)} (save {ms(pct(sn[1000]['save'], 50))}, "
      f"restore {ms(pct(sn[1000]['restore'], 50))}) | 1 solid: p50 {ms(s1)} | ratio {s1000 / s1:.2f} | "
      f"≤ 20 ms and ≤ 1.5: {goal(s1000 <= 20 and s1000 / s1 <= 1.5)} |")
    ns = sorted(pss)
    lo, hi = ns[0], ns[-1]
    marginal = (pss[hi]["pss_kb"] - pss[lo]["pss_kb"]) / (hi - lo) / 1024
    A(f"| 5 | PSS per idle session (marginal, N={lo}→{hi}) | {marginal:.1f} MB | zygote alone: "
      f"RSS {pss[lo]['zygote_rss_kb'] / 1024:.0f} MB | "
      + ", ".join(f"N={n}: {pss[n]['pss_kb'] / 1024:.0f} MB total" for n in ns)
      + f" | ≤ 30 MB: {goal(marginal <= 30)} |")
    if all("pss_idle_kb" in pss[n] for n in (lo, hi)):
        idle = (pss[hi]["pss_idle_kb"] - pss[lo]["pss_idle_kb"]) / (hi - lo) / 1024
        A(f"| 5b | PSS per session left idle (gone cold after {pss[hi]['idle_s']:g} s, decision 0026) | {idle:.1f} MB | "
          f"the same sessions 0.5 s after their call: {marginal:.1f} MB | "
          + ", ".join(f"N={n}: {pss[n]['pss_idle_kb'] / 1024:.0f} MB total" for n in (lo, hi))
          + f" | ≤ 30 MB: {goal(idle <= 30)} |")
    A("")
    A("Details:")
    A("")
    A(f"* execute: the child itself reports p50 {(e['inner_p50'] or float('nan')):.2f} ms for running `x = 1` (runner + "
      "summary); the rest is the launcher↔child round trip and the promote step. Back-to-back calls also "
      "wait for the new head to fork its next.")
    if e.get("exit_ms"):
        A(f"* where the time goes: SIGKILL → exit of an idle jailed process (same mappings as a head) "
          f"takes p50 {ms(pct(e['exit_ms'], 50))} (p90 {ms(pct(e['exit_ms'], 90))}) of CPU-bound kernel teardown. "
          "Every successful call kills the old head and every restore the old head and next; the launcher "
          "waits for none of that teardown (only, for a killed next, until it has entered its exit), and the "
          "session runs SCHED_BATCH so it does not preempt the launcher, but it and the fork of the next "
          "next still compete for the 2 cores: back-to-back calls wait for that fork.")
    A(f"* sessions: spare-session reset {len(se['reset_spare'])} runs, cold new session {len(se['new_cold'])} runs, "
      f"baseline {len(se['base'])} interpreter starts (min {ms(min(se['base']))}).")
    A(f"* snapshots (p50): 1 solid save {ms(pct(sn[1]['save'], 50))} / restore {ms(pct(sn[1]['restore'], 50))}; "
      f"1000 solids save {ms(pct(sn[1000]['save'], 50))} / restore {ms(pct(sn[1000]['restore'], 50))}; "
      f"restore → first result of `x = 1` (the restored head forks its next meanwhile): 1 solid "
      f"{ms(pct(sn[1]['first'], 50))}, 1000 solids {ms(pct(sn[1000]['first'], 50))}; "
      f"{len(sn[1]['both'])} runs each.")
    A("* PSS: sum of `Pss:` from `/proc/PID/smaps_rollup` over the zygote and every session process "
      "(keeper, init, head, next), each session idle after building one Box; "
      + "; ".join(f"N={n}: {pss[n]['procs']} processes, {pss[n]['pss_kb'] / 1024:.1f} MB" for n in ns) + ".")
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="rewrite bench/RESULTS.md with these figures")
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = ap.parse_args()
    q = args.quick
    from launcher.core import Launcher
    t0 = time.monotonic()
    res = {}
    with Launcher(PROFILE, spare_sessions=0) as L:
        print("1/5 execute overhead ...", file=sys.stderr, flush=True)
        res["execute"] = bench_execute(L, 50 if q else 200)
        print("4/5 snapshots ...", file=sys.stderr, flush=True)
        res["snapshots"] = bench_snapshots(L, 5 if q else 20)
    print("3/5 timeout recovery ...", file=sys.stderr, flush=True)
    with Launcher(TIMEOUT_PROFILE, spare_sessions=0) as L:
        res["timeout"] = bench_timeout(L, 3 if q else 8)
    print("2/5 new session / reset ...", file=sys.stderr, flush=True)
    res["sessions"] = bench_sessions(5 if q else 20, 2 if q else 5)
    print("5/5 PSS ...", file=sys.stderr, flush=True)
    res["pss"] = bench_pss()
    cmd = "python bench/run_all.py" + (" --quick" if q else "") + (" --write" if args.write else "")
    text = report(res, cmd, time.monotonic() - t0)
    print(text)
    if args.write:
        path = HERE / "RESULTS.md"
        old = path.read_text() if path.exists() else ""
        # every other section (the feature benchmarks, "## Soak") is kept as it is
        m = re.search(r"^## (?!Benchmarks\n).*", old, re.S | re.M)
        soak = m.group(0) if m else ""
        path.write_text("# Benchmark results\n\n"
                        "Ratios against baselines measured in the same run (see bench/run_all.py).\n\n"
                        "## Benchmarks\n\n" + text + ("\n" + soak if soak else ""))
        print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The session side of speed (issue 22, item 5): warm execute, read-only calls, snapshots.

    python bench/bench_session_speed.py            # N = 30 calls per figure
    python bench/bench_session_speed.py --n 10 --json

In-process ``Launcher``/``Session`` on the default profile. Baseline measured in the same run: the
same code ``exec``-ed in this process (build123d imported, no jail, no IPC). Printed, p50 in ms and
as a ratio to that baseline:

1. ``execute back-to-back``: one execute right after another (the second waits for the next the
   first one's head forks: promote -> gc -> fork -> warm -> ready);
2. ``execute after 0.3 s``: the next is forked and waiting (the floor of an execute);
3. ``ask(measure)`` after 0.3 s (served by the next's idle spare), ``execute right after ask`` (does
   a read-only call cost the next call a fork?), ``ask right after execute`` (no spare yet: the next
   forks the serving child on demand);
4. where an execute's milliseconds go on the launcher side (ensure_next, send, wait, promote);
5. ``snapshot save+restore`` of a session holding 1000 solids, and the execute right after it.

Nothing is asserted.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from launcher.core import Launcher  # noqa: E402

CODE = "b = Box(10, 10, 10)\n"
SOLIDS = "parts = [Box(1, 1, 1).moved(Location((i * 2, 0, 0))) for i in range(1000)]\n"


def p50(xs):
    return statistics.median(xs) if xs else float("nan")


def ms(t0):
    return (time.perf_counter() - t0) * 1000


def inproc_exec(n: int) -> float:
    ns: dict = {}
    exec("from build123d import *", ns)
    exec(CODE, ns)
    out = []
    for _ in range(n):
        t = time.perf_counter()
        exec(compile(CODE, "<b>", "exec"), ns)
        out.append(ms(t))
    return p50(out)


@contextmanager
def phases(s, acc: dict):
    """Time the launcher-side phases of each call (monkeypatched on this session's objects only)."""
    chain, calls = s.chain, s.calls
    saved = {}

    def wrap(obj, name, key):
        f = getattr(obj, name)
        saved[(obj, name)] = f

        def timed(*a, **kw):
            t = time.perf_counter()
            try:
                return f(*a, **kw)
            finally:
                acc.setdefault(key, []).append(ms(t))
        setattr(obj, name, timed)

    wrap(chain, "ensure_next", "ensure_next (wait for ready)")
    wrap(chain, "send_next", "send request")
    wrap(calls.cancellation, "wait", "wait for result")
    wrap(chain, "promote", "promote + sweep")
    wrap(chain, "discard_next", "discard/keep next + sweep")
    try:
        yield
    finally:
        for (obj, name) in saved:
            delattr(obj, name)


def run(n: int) -> dict:
    res: dict = {"n": n}
    res["exec_inproc_ms"] = inproc_exec(max(n, 20))
    with Launcher("default", spare_sessions=0) as L:
        s = L.new_session()
        s.execute(CODE)
        s.execute(CODE)
        b2b = []
        acc: dict = {}
        with phases(s, acc):
            for _ in range(n):
                t = time.perf_counter()
                r = s.execute(CODE)
                b2b.append(ms(t))
                assert r["ok"], r
        res["execute_b2b_ms"] = p50(b2b)
        res["phases_b2b_ms"] = {k: round(p50(v), 2) for k, v in acc.items()}
        paused = []
        for _ in range(n):
            time.sleep(0.3)
            t = time.perf_counter()
            s.execute(CODE)
            paused.append(ms(t))
        res["execute_paused_ms"] = p50(paused)
        ask, after = [], []
        for _ in range(n):
            time.sleep(0.3)
            t = time.perf_counter()
            s.ask({"t": "measure", "name": "b"}, "measure")
            ask.append(ms(t))
            t = time.perf_counter()
            r = s.execute(CODE)
            after.append(ms(t))
            assert r["ok"], r
        res["ask_measure_ms"] = p50(ask)
        res["execute_after_ask_ms"] = p50(after)
        fresh = []
        for _ in range(n):  # right after an execute: the new next has had no idle time for a spare
            time.sleep(0.3)
            s.execute(CODE)
            t = time.perf_counter()
            s.ask({"t": "measure", "name": "b"}, "measure")
            fresh.append(ms(t))
        res["ask_right_after_execute_ms"] = p50(fresh)
        L.close_session(s)

        s = L.new_session()
        r = s.execute(SOLIDS)
        assert r["ok"], r
        time.sleep(0.5)
        saves, restores, both, after = [], [], [], []
        for i in range(min(n, 15)):
            time.sleep(0.3)
            t = time.perf_counter()
            s.save_snapshot(f"s{i}")
            saves.append(ms(t))
            t2 = time.perf_counter()
            s.restore_snapshot(f"s{i}")
            restores.append(ms(t2))
            both.append(ms(t))
            t = time.perf_counter()
            r = s.execute("n = len(parts)\n")
            after.append(ms(t))
            assert r["ok"], r
            s.delete_snapshot(f"s{i}")
        res["snapshot_save_ms"] = p50(saves)
        res["snapshot_restore_ms"] = p50(restores)
        res["snapshot_save_restore_ms"] = p50(both)
        res["execute_after_restore_ms"] = p50(after)
        L.close_session(s)
    return res


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=30)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    res = run(a.n)
    if a.json:
        print(json.dumps(res))
        return
    base = res["exec_inproc_ms"]
    print(f"baseline: in-process exec of {CODE.strip()!r}: {base:.2f} ms")
    for k in ("execute_b2b_ms", "execute_paused_ms", "ask_measure_ms", "execute_after_ask_ms",
              "ask_right_after_execute_ms",
              "snapshot_save_ms", "snapshot_restore_ms", "snapshot_save_restore_ms", "execute_after_restore_ms"):
        print(f"  {k:28s} {res[k]:8.2f} ms   x{res[k] / base:6.1f} of in-process exec")
    print("  launcher-side phases of a back-to-back execute (p50 ms):")
    for k, v in res["phases_b2b_ms"].items():
        print(f"    {k:32s} {v:8.2f}")


if __name__ == "__main__":
    main()

"""Load: many executes across concurrent sessions; the launcher must not grow.

Normal run: 400 executes across 8 sessions; ``--soak``: 10,000 across 16.
Each session counts its own successful calls (``n += 1``); one call in ten
raises on purpose (the session must stay unchanged) and one in ten prints.
Checked: every session ends with exactly its number of successes, and the
launcher's fds, threads, direct children and RSS come back within a small
bound of where they were after warm-up. Throughput and p50/p99 latency are
printed (copy them to bench/RESULTS.md, "Soak"); nothing asserts on time.
"""
from __future__ import annotations

import statistics
import threading
import time


from tests.helpers.faults import profile_path
from tests.helpers.proc import children, fd_count, rss_kb, task_count


def _pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q / 100 * (len(xs) - 1))))]


def test_load_many_executes(soak):
    from launcher.core import Launcher
    from launcher.tools.toolset import ToolSet

    total, nsess = (10_000, 16) if soak else (400, 8)
    per = total // nsess
    # faults_max64: a 10 s limit, so a trivial call on a loaded 2-core machine is not timed out
    with Launcher(profile_path("faults_max64")) as L:
        tools = [ToolSet(L) for _ in range(nsess)]
        for ts in tools:  # warm-up: sessions exist, first calls made
            assert ts.call("execute", {"code": "n = 0"})["ok"]
        time.sleep(0.3)
        # the same shape as the finals below: a call after an idle spell, whose next had forked its
        # spare (killed by the call, its pidfd held until the session's next call reaps it)
        for ts in tools:
            assert ts.call("execute", {"code": "n = 0"})["ok"]
        time.sleep(0.3)
        fds0, thr0, kids0, rss0 = fd_count(), task_count(), len(children()), rss_kb()
        lat: list[float] = []
        errors: list[str] = []
        succ = [0] * nsess
        lock = threading.Lock()

        def worker(i):
            ts = tools[i]
            mine = []
            for k in range(per):
                if k % 10 == 3:
                    code = "n += 1\nraise ValueError('on purpose')"
                elif k % 10 == 7:
                    code = "n += 1\nprint(n)"
                else:
                    code = "n += 1"
                t = time.perf_counter()
                r = ts.call("execute", {"code": code})
                mine.append((time.perf_counter() - t) * 1000)
                if k % 10 == 3:
                    if r.get("ok") is not False or r["error"]["type"] != "ValueError":
                        errors.append(f"s{i} call {k}: {r}")
                elif r.get("ok"):
                    succ[i] += 1
                    if k % 10 == 7 and r["stdout"] != f"{succ[i]}\n":
                        errors.append(f"s{i} call {k}: printed {r['stdout']!r}, expected {succ[i]}")
                else:
                    errors.append(f"s{i} call {k}: {r}")
            with lock:
                lat.extend(mine)

        t0 = time.perf_counter()
        threads = [threading.Thread(target=worker, args=(i,)) for i in range(nsess)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.perf_counter() - t0
        finals = [ts.call("execute", {"code": "print(n)"}) for ts in tools]
        time.sleep(0.3)
        fds1, thr1, kids1, rss1 = fd_count(), task_count(), len(children()), rss_kb()
        print(f"\nSOAK {total} executes across {nsess} sessions: {total / wall:.0f} executes/s, "
              f"p50 {statistics.median(lat):.1f} ms, p99 {_pct(lat, 99):.1f} ms, max {max(lat):.1f} ms, "
              f"wall {wall:.1f} s")
        print(f"launcher: fds {fds0}->{fds1}, threads {thr0}->{thr1}, children {kids0}->{kids1}, "
              f"RSS {rss0 / 1024:.1f}->{rss1 / 1024:.1f} MB")
        assert not errors, f"{len(errors)} bad results, e.g. {errors[:5]}"
        for i, r in enumerate(finals):
            assert r.get("stdout") == f"{succ[i]}\n", (i, r, succ[i])
        assert fds1 <= fds0 + 4, f"launcher fds grew {fds0} -> {fds1}"
        assert thr1 <= thr0 + 2, f"launcher threads grew {thr0} -> {thr1}"
        assert kids1 <= kids0, f"launcher children grew {kids0} -> {kids1}"
        assert rss1 <= rss0 + 40 * 1024, f"launcher RSS grew {rss0} -> {rss1} kB"
        for ts in tools:
            ts.close()


def test_one_session_survives_600_calls():
    from launcher.core import Launcher
    with Launcher(profile_path("faults_max64"), spare_sessions=0) as L:
        s = L.new_session()
        assert s.execute("n = 0")["ok"]
        for i in range(1, 601):
            r = s.execute("n += 1")
            assert r["ok"], f"call {i} failed: {r['error']}"
        assert s.execute("print(n)")["stdout"] == "600\n"

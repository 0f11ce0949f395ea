#!/usr/bin/env python3
"""Export latency of a typical part, this tree against a baseline tree in the same run (no goals asserted).

    .venv/bin/python bench/bench_exports.py [--baseline DIR]

Times the ``export`` tool end to end (session serialises, the file is checked, the launcher
writes it) for a filleted bracket with a hole, as STEP, STL, 3MF and SVG, median of ``--n`` calls
after one warm-up call each (which also starts the issue-20 verifier session). ``--baseline DIR``:
a checkout of another commit with its own ``.venv`` (e.g. main 4d346b6, where the check ran in the
session's own process); it is run first with the same arguments, then this tree, and the ratios
printed. Only the launcher's public API is used, so both trees run the same script.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
PART = """\
with BuildPart() as bracket:
    Box(40, 20, 10)
    with Locations((10, 0, 5)):
        Hole(4)
    fillet(bracket.edges().filter_by(Axis.Z), radius=2)
part = bracket.part
"""
FORMATS = ("step", "stl", "3mf", "svg")


def measure(n: int) -> dict:
    sys.path.insert(0, os.getcwd())
    from launcher.core import Launcher
    from launcher.tools.toolset import ToolSet
    out = {}
    with tempfile.TemporaryDirectory() as d, Launcher("default", output_dir=d, spare_sessions=0) as L:
        ts = ToolSet(L)
        r = ts.call("execute", {"code": PART})
        assert r.get("ok"), r
        for fmt in FORMATS:
            times = []
            for i in range(n + 1):
                t = time.perf_counter()
                res = ts.call("export", {"object_name": "part", "filename": f"p{i}.{fmt}"})
                dt = time.perf_counter() - t
                assert "error" not in res, res
                if i:
                    times.append(dt)
            out[fmt] = statistics.median(times)
        ts.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=15)
    ap.add_argument("--baseline", default=None, help="a checkout with its own .venv (e.g. main 4d346b6)")
    ap.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # one tree, as JSON
    a = ap.parse_args()
    if a.json:
        print(json.dumps(measure(a.n)))
        return
    base = None
    if a.baseline:
        tree = Path(a.baseline).resolve()
        p = subprocess.run([str(tree / ".venv/bin/python"), str(Path(__file__).resolve()), "--json", "--n", str(a.n)],
                           cwd=str(tree), capture_output=True, text=True, timeout=1800)
        if p.returncode:
            sys.exit(f"baseline failed: {p.stderr[-2000:]}")
        base = json.loads(p.stdout.strip().splitlines()[-1])
    os.chdir(HERE)
    now = measure(a.n)
    print(f"export of a filleted bracket, median of {a.n} calls (ms)")
    print(f"{'format':8}{'baseline':>10}{'this tree':>11}{'ratio':>8}")
    for fmt in FORMATS:
        b = f"{base[fmt] * 1e3:10.1f}" if base else f"{'-':>10}"
        r = f"{now[fmt] / base[fmt]:8.2f}" if base else f"{'-':>8}"
        print(f"{fmt:8}{b}{now[fmt] * 1e3:11.1f}{r}")


if __name__ == "__main__":
    main()

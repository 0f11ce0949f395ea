#!/usr/bin/env python3
"""Render and measure, side by side with build123d-mcp 0.3.91's ``render_view`` (issue 13).

    python bench/bench_render.py            # 20 renders, 20 measures, 5 peer renders
    python bench/bench_render.py --quick    # 5 / 5 / 2
    python bench/bench_render.py --no-peer  # ours only

A real MCP stdio client (the ``mcp`` SDK) spawns each server, runs the plate (80x60x10, four
holes) with ``execute``, then times ``tools/call`` round trips: ours (:func:`ours`: ``render`` in
a disposable jailed process of the default profile, PNG checked by the launcher; ``measure``) and
the peer's ``render_view`` (:func:`peer`, installed by :func:`ensure_peer`; when that fails, ours
only). Nothing is asserted; goals (render <= 0.5 s p50 and >= 20x faster than the peer, measure
<= 50 ms p50) are printed next to the figures.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from peer import OUT, PLATE, REPO, ensure_peer, mcp_session, ours_params, pct, peer_params, timed_call

sys.path.insert(0, str(REPO))


async def _timed_calls(params, setup: list[tuple[str, dict]], calls: list[tuple[str, str, dict, int]], errlog,
                       pause: float = 0.0):
    import anyio
    out: dict[str, list[float]] = {}
    notes: dict[str, str] = {}
    async with mcp_session(params, errlog) as session:
        for name, args in setup:
            await timed_call(session, name, args)
        for label, name, args, n in calls:
            times, seen = [], {}
            for i in range(n + 1):
                if pause:
                    await anyio.sleep(pause)  # think time: the session's next process is ready
                dt = await timed_call(session, name, args, seen)
                if i:  # the first call is a warm-up
                    times.append(dt)
            if "png" in seen:
                notes[label] = seen["png"]
            out[label] = times
    return out, notes


def run(params, setup, calls, errlog, pause=0.0):
    import anyio
    return anyio.run(_timed_calls, params, setup, calls, errlog, pause)


def ours(n_render: int, n_measure: int, errlog):
    """Each call twice: after a 0.3 s pause (an assistant's think time: the session's next process
    is forked and waiting, as in real use) and back to back (each call also waits for that fork)."""
    params = ours_params("default")
    calls = [("render iso 800x600", "render", {"objects": ["part"], "view": "iso", "width": 800, "height": 600},
              n_render),
             ("render sheet 800x600", "render", {"objects": ["part"], "view": "sheet"}, max(2, n_render // 4)),
             ("render section", "render", {"objects": ["part"], "view": "section",
                                           "section": {"axis": "x", "offset": 30}}, max(2, n_render // 4)),
             ("measure", "measure", {"object_name": "part"}, n_measure),
             ("validate", "validate", {"object_name": "part"}, max(2, n_measure // 4))]
    ready, notes = run(params, [("execute", {"code": PLATE})], calls, errlog, pause=0.3)
    b2b, _ = run(params, [("execute", {"code": PLATE})], calls[:1] + calls[3:4], errlog)
    out = dict(ready)
    for k, v in b2b.items():
        out[k + " (back to back)"] = v
        notes[k + " (back to back)"] = notes.get(k, "")
    return out, notes


def cpu_cost(n: int) -> dict[str, list[float]]:
    """CPU seconds of the same render/measure code in this process (no jail, no IPC): what a call
    costs on an idle machine, whatever the load (wall-clock figures above include waiting for a CPU)."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    from build123d import Box, BuildPart, GridLocations, Hole  # noqa: F401
    from jail.cad import measure
    from jail.cad import render
    ns: dict = {}
    exec(compile("from build123d import *\n" + PLATE, "<bench>", "exec"), ns)
    ns = {"part": ns["part"]}
    out: dict[str, list[float]] = {"cpu: render iso 800x600": [], "cpu: measure": []}
    render.render(ns, ["part"])
    measure.measure(ns, "part")
    for _ in range(n):
        c = time.process_time()
        render.render(ns, ["part"], "iso", width=800, height=600)
        out["cpu: render iso 800x600"].append(time.process_time() - c)
        c = time.process_time()
        measure.measure(ns, "part")
        out["cpu: measure"].append(time.process_time() - c)
    return out


FLOOR_SNIPPET = """
import os, sys, time, io, statistics
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
from build123d import *
from jail.cad import render
from jail.cad.render_mesh import mesh_shapes, edge_polylines, ANGULAR, mesh_deflection, shapes_bbox
import numpy as np
ns = {}
exec(compile("from build123d import *\\n" + PLATE, "<bench>", "exec"), ns)
ns = {"part": ns["part"]}
n = int(sys.argv[1])
render.render(ns, ["part"])
r, fl = [], []
for _ in range(n):
    c = time.process_time()
    png, meta = render.render(ns, ["part"], "iso", width=800, height=600)
    r.append(time.process_time() - c)
    w = ns["part"].wrapped
    lo, hi = shapes_bbox([w])
    diag = float(np.linalg.norm(hi - lo))
    from PIL import Image
    img = Image.open(io.BytesIO(png)); img.load()
    c = time.process_time()
    mesh_shapes([w], mesh_deflection(meta["mm_per_px"], diag), ANGULAR)
    edge_polylines([w], mesh_deflection(meta["mm_per_px"], diag))
    img.save(io.BytesIO(), format="PNG", compress_level=6)
    fl.append(time.process_time() - c)
print(statistics.median(r) * 1000, statistics.median(fl) * 1000)
"""


def render_cpu_at(rev: str | None, n: int) -> tuple[float, float]:
    """CPU ms (median) of a render iso 800x600 of the plate and of its floor (mesh + PNG encode),
    with the renderer of git revision ``rev`` (its ``jail`` package unpacked in a temporary
    directory) or of this tree (None), in a fresh process."""
    root = str(REPO)
    if rev is not None:
        root = tempfile.mkdtemp(prefix="bench-render-rev-")
        arc = subprocess.run(["git", "-C", str(REPO), "archive", rev, "jail"], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", root], input=arc.stdout, check=True)
    code = f"PLATE = {PLATE!r}\n" + FLOOR_SNIPPET
    env = dict(os.environ, PYTHONPATH=root)
    out = subprocess.run([sys.executable, "-c", code, str(n)], capture_output=True, text=True, env=env, cwd=root,
                         check=True)
    a, b = out.stdout.split()
    return float(a), float(b)


def peer(exe: Path, n: int, errlog):
    """The peer's ``render_view`` (direction iso, quality standard), with HOME and cwd in a
    temporary directory."""
    params = peer_params(exe)
    return run(params, [("execute", {"code": "from build123d import *\n" + PLATE})],
               [("peer render_view iso", "render_view", {"direction": "iso"}, n)], errlog)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-peer", action="store_true")
    ap.add_argument("--cpu-only", action="store_true", help="only the in-process CPU figures and the A/B")
    ap.add_argument("--previous", default="4d346b6", help="git revision of the previous renderer (A/B)")
    a = ap.parse_args(argv)
    n_render, n_measure, n_peer = (5, 5, 2) if a.quick else (20, 20, 5)
    OUT.mkdir(parents=True, exist_ok=True)
    errlog = open(OUT / "bench-render-stderr.log", "w")
    print(f"# render / measure bench ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"{os.cpu_count()} CPUs)\n")
    now_r, now_f = render_cpu_at(None, max(5, n_render))
    prev_r, prev_f = render_cpu_at(a.previous, max(5, n_render))
    print(f"render iso 800x600 CPU: {now_r:.1f} ms, floor (mesh + PNG encode) {now_f:.1f} ms: "
          f"{now_r / now_f:.1f}x the floor (goal <= 3x); previous renderer ({a.previous}) {prev_r:.1f} ms "
          f"({prev_r / prev_f:.1f}x its floor {prev_f:.1f} ms): now {now_r / prev_r:.2f}x of it\n")
    if a.cpu_only:
        return 0
    res, notes = ours(n_render, n_measure, errlog)
    rows = [(k, v) for k, v in res.items()] + list(cpu_cost(n_render).items())
    peer_p50 = None
    peer_note = "skipped (--no-peer)"
    if not a.no_peer:
        exe, peer_note = ensure_peer()
        if exe is not None:
            try:
                pres, pnotes = peer(exe, n_peer, errlog)
                rows += list(pres.items())
                notes.update(pnotes)
                peer_p50 = statistics.median(pres["peer render_view iso"])
            except Exception as e:  # noqa: BLE001 - the peer's failure is reported, ours still is
                peer_note = f"the peer server failed: {type(e).__name__}: {str(e)[:300]}"
    print("| call | n | p50 ms | p90 ms | note |\n|---|---|---|---|---|")
    for k, v in rows:
        print(f"| {k} | {len(v)} | {statistics.median(v) * 1000:.1f} | {pct(v, 90) * 1000:.1f} | {notes.get(k, '')} |")
    ours_p50 = statistics.median(res["render iso 800x600"])
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f} (other work on this machine slows every figure)")
    print(f"render iso 800x600 p50: {ours_p50 * 1000:.0f} ms (goal <= 500 ms)")
    print(f"measure p50: {statistics.median(res['measure']) * 1000:.1f} ms (goal <= 50 ms)")
    if peer_p50 is not None:
        print(f"build123d-mcp 0.3.91 render_view p50: {peer_p50 * 1000:.0f} ms -> ours is "
              f"{peer_p50 / ours_p50:.0f}x faster (goal >= 20x)")
    else:
        print(f"build123d-mcp 0.3.91: not measured: {peer_note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

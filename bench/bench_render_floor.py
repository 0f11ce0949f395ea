#!/usr/bin/env python3
"""Render time against its own floor (issue 22, item 5): mesh + PNG encode, measured directly.

    python bench/bench_render_floor.py            # 15 rounds
    python bench/bench_render_floor.py --rounds 5
    python bench/bench_render_floor.py --profile  # + cProfile of the full render (top 25, own time)

In-process (no jail, no MCP): for the bench plate (80x60x10, four holes) and a three-part assembly
(a Compound of three labelled children), iso view, 800x600. Each round removes the shapes'
triangulations first (``BRepTools.Clean``: what a disposable next meets, forked from a head that
never meshed), then times

* floor: ``BRepMesh_IncrementalMesh`` of each shape at the deflection the render uses, plus the PNG
  encode of the render's own output image with the render's own settings (``render.PNG_SAVE``);
* render: ``jail.cad.render.render`` (select, mesh, shade, annotate, encode);
* render, mesh kept: the same with the triangulation left from the round before (an unchanged
  model whose mesh survived: what item 4 of the issue asks about).

Times are this process's CPU time (``time.process_time``: the machine is shared, and every step is
single-threaded), medians in ms, and the ratio render / floor (goal: <= 3). Nothing is asserted.
"""
from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("OMP_NUM_THREADS", "1")

sys.path.insert(0, str(Path(__file__).resolve().parent))
from peer import PLATE  # noqa: E402 - the benches' plate, one definition

ASSEMBLY = """\
with BuildPart() as base:
    Box(80, 60, 10)
    with GridLocations(60, 40, 2, 2):
        Hole(radius=4)
base.part.label = "base"
post = Pos(0, 0, 25) * Cylinder(8, 40)
post.label = "post"
cap = Pos(0, 0, 48) * fillet(Box(30, 30, 6).edges().filter_by(Axis.Z), 3)
cap.label = "cap"
asm = Compound(children=[base.part, post, cap])
"""

W, H = 800, 600


def _namespace(code: str) -> dict:
    from jail.cad import runner
    ns = runner.new_namespace(["build123d"], [], python_layers=False)
    exec(compile(code, "<bench>", "exec"), ns)  # noqa: S102 - the bench's own model
    return ns


def _clean(shapes) -> None:
    from OCP.BRepTools import BRepTools
    for s in shapes:
        BRepTools.Clean_s(s)


def _deflection(shapes) -> float:
    """The linear deflection the iso render uses for these shapes (render.py's own steps)."""
    import numpy as np

    from jail.cad.render_mesh import box_corners, mesh_deflection, shapes_bbox
    from jail.cad.render_view import VIEWS, camera, fit
    lo, hi = shapes_bbox(shapes)
    r, u, _ = camera(*VIEWS["iso"])
    _, mm = fit(box_corners(lo, hi), r, u, W, H)
    return mesh_deflection(mm, float(np.linalg.norm(hi - lo)) or 1.0)


def _ms(t0: float) -> float:
    return (time.process_time() - t0) * 1000


def case(name: str, code: str, rounds: int, profile: bool) -> dict:
    from OCP.BRepMesh import BRepMesh_IncrementalMesh
    from PIL import Image

    from jail.cad.render import PNG_SAVE, render
    from jail.cad.render_mesh import ANGULAR
    from jail.cad.render_select import select_parts
    ns = _namespace(code)
    shapes = [s for _, s in select_parts(ns, None)]
    defl = _deflection(shapes)
    png, _ = render(ns, width=W, height=H)  # warm: imports, fonts, numpy paths
    img = Image.open(io.BytesIO(png)).convert("RGB")
    floor, full, kept, mesh_ms, enc_ms = [], [], [], [], []
    for _ in range(rounds):
        _clean(shapes)
        t0 = time.process_time()
        for s in shapes:
            BRepMesh_IncrementalMesh(s, defl, False, ANGULAR, False)
        m = _ms(t0)
        t0 = time.process_time()
        buf = io.BytesIO()
        img.save(buf, **PNG_SAVE)
        e = _ms(t0)
        mesh_ms.append(m)
        enc_ms.append(e)
        floor.append(m + e)
        _clean(shapes)
        t0 = time.process_time()
        render(ns, width=W, height=H)
        full.append(_ms(t0))
        t0 = time.process_time()
        render(ns, width=W, height=H)  # the triangulation from the render just before is still there
        kept.append(_ms(t0))
    if profile:
        import cProfile
        import pstats
        pr = cProfile.Profile()
        for _ in range(3):
            _clean(shapes)
            pr.enable()
            render(ns, width=W, height=H)
            pr.disable()
        print(f"--- profile: {name}, 3 renders, by own time")
        pstats.Stats(pr).sort_stats("tottime").print_stats(25)
    med = statistics.median
    return {"name": name, "mesh": med(mesh_ms), "encode": med(enc_ms), "floor": med(floor), "render": med(full),
            "kept": med(kept), "parts": len(shapes), "bytes": len(png)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--profile", action="store_true")
    a = ap.parse_args()
    from jail.cad import render  # noqa: F401 - import cost out of the timings
    print(f"render vs its floor, iso {W}x{H}, {a.rounds} rounds, median CPU ms; load {os.getloadavg()[0]:.2f}")
    print(f"{'model':<10} {'parts':>5} {'mesh':>7} {'encode':>7} {'floor':>7} {'render':>7} {'ratio':>6}"
          f" {'kept':>7} {'ratio':>6} {'PNG B':>7}")
    for name, code in (("plate", PLATE), ("assembly", ASSEMBLY)):
        r = case(name, code, a.rounds, a.profile)
        print(f"{r['name']:<10} {r['parts']:>5} {r['mesh']:>7.1f} {r['encode']:>7.1f} {r['floor']:>7.1f} "
              f"{r['render']:>7.1f} {r['render'] / r['floor']:>5.2f}x {r['kept']:>7.1f} "
              f"{r['kept'] / r['floor']:>5.2f}x {r['bytes']:>7}")
    print("goal: render <= 3x floor (floor = BRepMesh of the shapes + PNG encode of the same image)")


if __name__ == "__main__":
    main()

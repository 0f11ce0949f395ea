#!/usr/bin/env python3
"""import_file cost per format, through real jailed sessions (issue 15).

    python bench/bench_import.py            # 7 rounds per format
    python bench/bench_import.py --rounds 3

A realistic part (a 120 x 80 x 15 bracket with filleted edges, 6 holes and a slot) is exported by
the launcher as STEP, BREP, STL, 3MF, SVG and DXF; each file is then imported with ``import_file``
into one session of the default profile (``ToolSet`` in-process: the launcher reads the file and
the jailed next parses it; the wall time includes the fork of the next, the transfer and the
promotion). Printed: file size, the object summary's faces, and p50/min of the wall time in ms.
Also, outside the jail, the time to build the STL's triangles into a solid with shared edges (what
jail/cad/readers.py does) vs with ``BRepBuilderAPI_Sewing`` (the first version).

Nothing is asserted: the figures are printed.
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

PART = """\
with BuildPart() as bp:
    Box(120, 80, 15)
    fillet(bp.edges().filter_by(Axis.Z), radius=8)
    with GridLocations(90, 50, 3, 2):
        Hole(radius=4)
    with BuildSketch():
        SlotCenterToCenter(30, 10)
    extrude(amount=15, mode=Mode.SUBTRACT, both=True)
    fillet(bp.edges().group_by(Axis.Z)[-1], radius=1.5)
part = bp.part
top = part.faces().sort_by(Axis.Z)[-1]
"""
FORMATS = ("step", "brep", "stl", "3mf", "svg", "dxf")


def sewing(tris):
    from OCP.BRepBuilderAPI import BRepBuilderAPI_MakeFace, BRepBuilderAPI_MakePolygon, BRepBuilderAPI_Sewing
    from OCP.gp import gp_Pnt
    sew = BRepBuilderAPI_Sewing(1e-6)
    for a, b, c in tris:
        poly = BRepBuilderAPI_MakePolygon(gp_Pnt(*a), gp_Pnt(*b), gp_Pnt(*c), True)
        sew.Add(BRepBuilderAPI_MakeFace(poly.Wire(), True).Face())
    sew.Perform()
    return sew.SewedShape()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    from launcher.core import Launcher
    from launcher.tools.toolset import ToolSet
    tmp = Path(tempfile.mkdtemp(prefix="bench-import-"))
    indir, outdir = tmp / "in", tmp / "out"
    indir.mkdir()
    try:
        with Launcher("default", output_dir=outdir, input_dir=indir) as L:
            ts = ToolSet(L)
            r = ts.call("execute", {"code": PART})
            assert r["ok"], r
            for fmt in FORMATS:
                obj = "top" if fmt in ("svg", "dxf") else "part"
                r = ts.call("export", {"object_name": obj, "filename": f"part.{fmt}"})
                assert "error" not in r, r
                shutil.copy(outdir / f"part.{fmt}", indir / f"part.{fmt}")
            ts2 = ToolSet(L)
            print(f"{'format':7} {'bytes':>8} {'faces':>6} {'p50 ms':>8} {'min ms':>8}")
            for fmt in FORMATS:
                times = []
                faces = "-"
                for _ in range(args.rounds):
                    r = ts2.call("import_file", {"filename": f"part.{fmt}", "name": "imported"})
                    assert r.get("ok"), r
                    times.append(r["wall_ms"])
                    c = (r["objects"][0].get("counts") or {}) if r["objects"] else {}
                    faces = c.get("faces", faces)
                size = (indir / f"part.{fmt}").stat().st_size
                print(f"{fmt:7} {size:8d} {faces!s:>6} {statistics.median(times):8.1f} {min(times):8.1f}")
            ts.close()
            ts2.close()
        from jail.cad import readers
        tris = readers._stl_triangles((indir / "part.stl").read_bytes())
        t = time.perf_counter()
        readers.mesh_to_shape(tris)
        shared = (time.perf_counter() - t) * 1000
        t = time.perf_counter()
        sewing(tris)
        sewn = (time.perf_counter() - t) * 1000
        print(f"\nSTL mesh of {len(tris)} triangles to a solid, outside the jail: shared edges {shared:.0f} ms, "
              f"sewing {sewn:.0f} ms ({sewn / shared:.1f}x)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()

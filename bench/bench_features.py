#!/usr/bin/env python3
"""``features`` against ``measure`` on the same part in the same run (issue 22).

    python bench/bench_features.py           # 20 calls of each
    python bench/bench_features.py --quick   # 5 of each

A real MCP stdio client (the ``mcp`` SDK) spawns ``build123d-launcher mcp --embedded`` on the
default profile, builds the test plate of tests/unit/test_features.py (seven holes: through,
blind, countersunk, counterbored; rounded corners) and times ``tools/call`` round trips of
``features`` and ``measure`` on it, interleaved, after a 0.3 s pause each (the next process is
forked and waiting, as in real use). Then the same two computations in this process (CPU time,
no jail, no IPC), on a plate of 600 through holes, on 625 hexagonal holes and on a block of 8 x 8
crossing channels with a rebate round it (the channel and step finder's own cost) and on a machine
table (T-slots crossed by V grooves and dovetails: the slanted and T-slot finders'). Printed: p50/p90 in
ms and the ratio features/measure. Last, ``features`` on a tube sheet as it runs (ends read from the
faces, probes cast as rays) against every end probed by the solid classifier (the baseline, stop
40's), and the ratio. Nothing is asserted.
"""
from __future__ import annotations

import argparse
import inspect
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))
from peer import mcp_session, ours_params, pct, timed_call  # noqa: E402 - the benches' shared client and percentile


def plate_code() -> str:
    from tests.unit import test_features as unit
    return inspect.getsource(unit.plate) + "\npart = plate()\n"


async def _mcp(n: int) -> dict[str, list[float]]:
    import anyio
    tmp = tempfile.mkdtemp(prefix="bench-features-")
    params = ours_params("default")
    out: dict[str, list[float]] = {"features": [], "measure": []}
    with open(os.path.join(tmp, "server-stderr.log"), "w") as errlog:
        async with mcp_session(params, errlog) as s:
            await timed_call(s, "execute", {"code": plate_code()})
            for name in ("features", "measure"):  # first calls (warm-up) not counted
                await timed_call(s, name, {"object_name": "part"})
            for _ in range(n):
                for name in ("features", "measure"):
                    await anyio.sleep(0.3)
                    out[name].append(await timed_call(s, name, {"object_name": "part"}) * 1000)
    return out


PERFORATED = """with BuildPart() as p:
    Box(200, 150, 5)
    with Locations(Plane.XY.offset(2.5)):
        with GridLocations(6, 6, 30, 20):
            Hole(1.5)
part = p.part
"""


# build123d's examples/fast_grid_holes.py: 625 hexagonal holes in one face, 3 756 faces, the plate's
# top and bottom each next to 3 750 walls (the chamfer search once paired those up: 16 s)
HEX_GRID = """part = extrude(Face(Rectangle(500, 600).wire(),
                    HexLocations(10, 25, 25) * RegularPolygon(9, 6, major_radius=True).wire()), 1)
"""


# two plates joined by 225 tubes, each tube's joints filleted (912 faces; build123d's
# heat_exchanger is the same kind of part): the material probes dominate
TUBE_SHEET = """with BuildPart() as p:
    with Locations((0, 0, 20), (0, 0, -20)):
        Box(130, 130, 4)
    with GridLocations(8, 8, 15, 15):
        Cylinder(2.5, 44)
    with GridLocations(8, 8, 15, 15):
        Cylinder(2, 44, mode=Mode.SUBTRACT)
    fillet([e for e in p.edges().filter_by(GeomType.CIRCLE)
            if abs(abs(e.center().Z) - 18) < 1e-6 and e.radius > 2.4], 0.6)
part = p.part
"""


# a block cut by 8 channels each way and rebated along its four edges: 16 channels, 4 steps, 81 lands
CHANNELS = """part = Box(200, 200, 20)
for i in range(8):
    part -= Pos(-84 + 24 * i, 0, 10) * Box(8, 200, 12)
    part -= Pos(0, -84 + 24 * i, 10) * Box(200, 8, 12)
for turn in (0, 90, 180, 270):
    part -= Rot(0, 0, turn) * Pos(97, 0, 5) * Box(6, 200.02, 10)
"""


# a machine table: 6 T-slots along X, 6 V grooves and 2 dovetails along Y across them (stop 45's finders)
TABLE = """part = Box(400, 300, 60)
for i in range(6):
    y = -125 + 50 * i
    part -= Pos(0, y, 25.01) * Box(400, 14, 10.02)
    part -= Pos(0, y, 14) * Box(400, 24, 12)
for i in range(6):
    part -= Pos(-150 + 45 * i, 0, 30) * Rot(90, 0, 0) * extrude(Polygon((-6, 0), (6, 0), (0, -6), align=None), 150,
                                                              both=True)
for x in (165, 185):
    part -= Pos(x, 0, 30) * Rot(90, 0, 0) * extrude(Polygon((-4, 0), (4, 0), (6, -6), (-6, -6), align=None), 150,
                                                  both=True)
"""


def probes(n: int, code: str) -> None:
    """``features`` on ``code``'s part three ways, alternating, CPU time: as it runs (hole and pocket
    ends read from the faces across them where they say, other probes cast as rays), with every end
    probed by ray, and with every end probed by OCCT's solid classifier (the baseline: stop 40's)."""
    from jail.cad import features, features_find, features_material
    ns: dict = {}
    exec(compile("from build123d import *\n" + code, "<bench>", "exec"), ns)
    ns = {"part": ns["part"]}
    ray, said = features_material.Material._ray, features_find.end_open
    modes = {"faces and rays": (ray, said), "rays": (ray, lambda *a: None),
             "classifier": (lambda self, si, p: None, lambda *a: None)}
    out: dict[str, list[float]] = {m: [] for m in modes}
    for _ in range(n):
        for mode, (r, e) in modes.items():
            features_material.Material._ray, features_find.end_open = r, e
            c = time.process_time()
            features.features(ns, "part")
            out[mode].append((time.process_time() - c) * 1000)
    features_material.Material._ray, features_find.end_open = ray, said
    p50 = {m: statistics.median(v) for m, v in out.items()}
    k = p50["classifier"]
    print(f"CPU in process, tube sheet ({len(ns['part'].faces())} faces): features p50 "
          + ", ".join(f"{v:.0f} ms {m} ({v / k:.2f}x)" for m, v in p50.items()))


def cpu(n: int, code: str | None = None) -> dict[str, list[float]]:
    """The two computations in this process on ``part`` as ``code`` builds it (default: the test
    plate; ``PERFORATED``: 600 through holes, where the per-hole costs show)."""
    from jail.cad import features, measure
    ns: dict = {}
    exec(compile("from build123d import *\n" + (code or plate_code()), "<bench>", "exec"), ns)
    ns = {"part": ns["part"]}
    out: dict[str, list[float]] = {"features": [], "measure": []}
    features.features(ns, "part")
    measure.measure(ns, "part")
    for _ in range(n):
        for name, fn in (("features", features.features), ("measure", measure.measure)):
            c = time.process_time()
            fn(ns, "part")
            out[name].append((time.process_time() - c) * 1000)
    return out


def report(title: str, d: dict[str, list[float]]) -> None:
    f50, m50 = statistics.median(d["features"]), statistics.median(d["measure"])
    print(f"{title}: features p50 {f50:.1f} ms (p90 {pct(d['features'], 90):.1f}), "
          f"measure p50 {m50:.1f} ms (p90 {pct(d['measure'], 90):.1f}); ratio features/measure {f50 / m50:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    n = 5 if a.quick else 20
    import anyio
    print(f"load {os.getloadavg()[0]:.2f}, {n} calls each")
    report("MCP round trip (default profile, jailed disposable next)", anyio.run(_mcp, n))
    report("CPU in process (no jail, no IPC)", cpu(n))
    report("CPU in process, 600-hole plate", cpu(2 if a.quick else 3, PERFORATED))
    report("CPU in process, 625 hexagonal holes", cpu(2 if a.quick else 3, HEX_GRID))
    report("CPU in process, 8 x 8 crossing channels and a rebate round them", cpu(2 if a.quick else 3, CHANNELS))
    report("CPU in process, a machine table: 6 T-slots, 6 V grooves, 2 dovetails", cpu(2 if a.quick else 3, TABLE))
    probes(2 if a.quick else 3, TUBE_SHEET)


if __name__ == "__main__":
    main()

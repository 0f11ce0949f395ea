"""Random machined parts for fuzzing the ``features`` recognisers (tests/faults/test_faults_features_fuzz.py).

:func:`part` builds, from a seed (algebra mode: a builder's sketch made inside a helper function
would not reach the caller's part), an 80x60x20 block (z from -10 to 10) cut from the top by one
to five of: holes (through or blind), pockets (sharp or rounded, turned), slots, ring grooves,
arc slots, bosses, spherical cuts, cross cylinders, cones, tori; then up to two fillets or
chamfers on a few of the top edges or of all. With ``edges``, one or two straight cuts with square
walls come first (from a random stream of their own, so the parts of earlier seeds stay as they
were): channels across the block, square-ended slots from a side, rebates along an edge, stopped
or not. With ``profiled``, a cut of another profile comes first (its own stream too): a V groove, a
dovetail, a channel with draft or a T-slot, across the block or stopped inside it. An operation OCCT
refuses (a fillet too big) is left out. The same seed gives the same part.
"""
from __future__ import annotations

import random

import math

from build123d import (Align, Axis, Box, Circle, Cone, Cylinder, Edge, Location, Plane, Polygon, Pos, Rectangle,
                       RectangleRounded, Rot, SlotArc, SlotCenterToCenter, Sphere, Torus, chamfer, extrude, fillet)

KINDS = ("hole", "pocket", "slot", "boss", "sphere", "ring", "arc", "cyl", "cone", "torus")
TOP = (Align.CENTER, Align.CENTER, Align.MAX)  # hanging from the top face
BASE = (Align.CENTER, Align.CENTER, Align.MIN)  # standing on it


def _sketch(rng: random.Random, kind: str):
    """A face on z = 0 for a pocket, slot, ring groove or arc slot."""
    if kind == "arc":
        a0 = rng.uniform(0, 360)
        return SlotArc(arc=Edge.make_circle(rng.uniform(10, 25), start_angle=a0, end_angle=a0 + rng.uniform(20, 250)),
                       height=rng.uniform(2, 6))
    if kind == "slot":
        return SlotCenterToCenter(rng.uniform(4, 20), rng.uniform(2, 8), rotation=rng.uniform(0, 180))
    if kind == "ring":
        r = rng.uniform(4, 12)
        return Circle(r) - Circle(r - rng.uniform(1, 3))
    if rng.random() < 0.5:
        return RectangleRounded(rng.uniform(8, 30), rng.uniform(8, 20), rng.uniform(0.5, 3.5))
    return Rectangle(rng.uniform(8, 30), rng.uniform(8, 20), rotation=rng.uniform(0, 90))


def _tool(rng: random.Random, kind: str):
    """``(shape, cut)``: one operation's shape, and whether it is cut from the block (else added)."""
    x, y = rng.uniform(-30, 30), rng.uniform(-20, 20)
    if kind == "hole":
        depth = rng.choice([20.0, rng.uniform(2, 18)])
        return Pos(x, y, 10) * Cylinder(rng.uniform(1, 6) / 2, depth, align=TOP), True
    if kind in ("pocket", "slot", "ring", "arc"):
        face = _sketch(rng, kind)
        depth = rng.uniform(1, 8) if kind == "ring" else rng.uniform(2, 20)
        return Pos(0, 0, 10) * extrude(face if kind == "arc" else Pos(x, y) * face, amount=-depth), True
    if kind == "boss":
        return Pos(x, y, 10) * Cylinder(rng.uniform(2, 8), rng.uniform(2, 10), align=BASE), False
    if kind == "sphere":
        return Pos(x, y, rng.uniform(-10, 12)) * Sphere(rng.uniform(1, 6)), True
    if kind == "cyl":
        turn = (rng.choice([0, 90]), rng.choice([0, 90]), 0)
        return Location((x, y, rng.uniform(-10, 10)), turn) * Cylinder(rng.uniform(1, 6), rng.uniform(5, 90)), True
    if kind == "cone":
        return Pos(x, y, 10) * Cone(rng.uniform(2, 6), rng.uniform(0, 2), rng.uniform(2, 10), align=TOP), True
    return Pos(x, y, rng.uniform(0, 10)) * Torus(rng.uniform(5, 10), rng.uniform(0.5, 2)), True


def _straight_cut(rng: random.Random):
    """A box cut from the top: a channel across the block, a square-ended slot from its -Y side,
    or a rebate along its +X edge (stopped short of the -Y side or not); along X or Y."""
    kind = rng.choice(("channel", "slot", "rebate"))
    w, d = rng.uniform(2, 15), rng.uniform(1, 12)
    if kind == "channel":
        cut = Pos(rng.uniform(-30, 30), 0, 10) * Box(w, 70, 2 * d)
    elif kind == "slot":
        length = rng.uniform(5, 40)
        cut = Pos(rng.uniform(-30, 30), -30 + length / 2, 10) * Box(w, length, 2 * d)
    else:
        stop = rng.choice([0.0, rng.uniform(5, 30)])
        cut = Pos(40 - w / 2, stop / 2, 10) * Box(w, 60.02 - stop, 2 * d)
    return Rot(0, 0, 90) * cut if rng.random() < 0.3 and kind != "rebate" else cut


def _profiled_cut(rng: random.Random):
    """A prism cut from the top along Y (from the -Y side across the block, or stopped inside it):
    a V groove, a dovetail, a channel with draft or a T-slot. Its walls run on above the top
    (z = 10), so the cut makes the mouth."""
    kind = rng.choice(("v", "dovetail", "drafted", "tee"))
    d = rng.uniform(1.5, 9)
    z0, over = 10 - d, 12 - (10 - d)  # the bottom; from it to above the top
    if kind == "v":
        t = math.tan(math.radians(rng.uniform(25, 65)))
        pts = [(0, z0), (over * t, 12), (-over * t, 12)]
    elif kind == "tee":
        mouth, cavity, lip = rng.uniform(1, 6), rng.uniform(7, 12), rng.uniform(0.5, d - 0.5)
        pts = [(-cavity, z0), (cavity, z0), (cavity, 10 - lip), (mouth, 10 - lip), (mouth, 12), (-mouth, 12),
               (-mouth, 10 - lip), (-cavity, 10 - lip)]
    else:
        floor = rng.uniform(3, 20) / 2
        lean = rng.uniform(2, 25) if kind == "drafted" else -rng.uniform(15, 45)
        top = floor + over * math.tan(math.radians(lean))
        if top <= 0.5:
            top, floor = 0.5, 0.5 - over * math.tan(math.radians(lean))
        pts = [(-floor, z0), (floor, z0), (top, 12), (-top, 12)]
    y1 = rng.choice([31.0, rng.uniform(-20, 20)])  # across, or stopped at y1
    return Pos(rng.uniform(-25, 25), 0, 0) * extrude(Plane.XZ.offset(-y1) * Polygon(*pts, align=None), amount=y1 + 31)


def part(seed: int, edges: bool = False, profiled: bool = False):
    """The random part of ``seed`` (a build123d Part; it may have no solid left); ``edges``: with
    straight cuts (channels, slots, rebates) too; ``profiled``: with a V, a dovetail, a drafted channel
    or a T-slot."""
    rng = random.Random(seed)
    block = Box(80, 60, 20)
    if profiled:
        block = block - _profiled_cut(random.Random(seed + 2 * 10 ** 6))
    if edges:
        more = random.Random(seed + 10 ** 6)
        for _ in range(more.randint(1, 2)):
            block = block - _straight_cut(more)
    for _ in range(rng.randint(1, 5)):
        try:
            shape, cut = _tool(rng, rng.choice(KINDS))
            block = block - shape if cut else block + shape
        except Exception:  # noqa: BLE001 - OCCT refused this one (a degenerate cut): leave it out
            pass
    for _ in range(rng.randint(0, 2)):
        try:
            edges = block.edges().group_by(Axis.Z)[-1] if rng.random() < 0.5 else block.edges()
            picked = rng.sample(list(edges), rng.randint(1, min(4, len(edges))))
            block = (fillet if rng.random() < 0.5 else chamfer)(picked, rng.uniform(0.2, 1.5))
        except Exception:  # noqa: BLE001 - too big a fillet for these edges: leave it out
            pass
    return block

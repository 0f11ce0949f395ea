"""``features``: roundings along curved edges (B-spline faces of one radius across) are fillets
(jail/cad/features_rounds.py), in process."""
from __future__ import annotations

import json

from build123d import (Axis, Box, Circle, GeomType, Plane, Pos, Rot, Spline, extrude, fillet, loft, make_face,
                       sweep)

from jail.cad import features

CAM = ((-20, 0), (0, 15), (20, 0), (0, -12))


def run(part) -> dict:
    return json.loads(json.dumps(features.features({"p": part}, "p"), allow_nan=False))


def _fillets(d: dict) -> list[tuple]:
    return [(round(g["radius"], 4), g["convex"], g["count"]) for g in d["fillets"]]


def cam(top: float = 1.5, bottom: float = 0.75):
    """A cam extruded 8 from a closed spline, its top edge rounded ``top`` and its bottom ``bottom``."""
    part = extrude(make_face(Spline(*CAM, periodic=True)), amount=8)
    part = fillet(part.edges().group_by(Axis.Z)[-1], top)
    return fillet(part.edges().group_by(Axis.Z)[0], bottom)


def test_a_spline_part_s_rounded_edges_are_fillets():
    """The cam's rounded top and bottom (B-spline faces all the way round: no cylinder, no torus)
    read as two convex fillets of their radii; before, they read as nothing. Turned, alike."""
    want = [(0.75, True, 1), (1.5, True, 1)]
    assert _fillets(run(cam())) == want
    assert _fillets(run(Pos(100, -40, 20) * Rot(10, 20, 30) * cam())) == want


def test_a_spline_pocket_s_rounded_floor_is_a_concave_fillet():
    """A spline pocket's floor rounded 1.2: a concave fillet besides the freeform pocket."""
    pocket = Box(80, 60, 20) - Pos(0, 0, 10) * extrude(make_face(Spline(*CAM, periodic=True)), amount=-6)
    floor = pocket.edges().filter_by(GeomType.LINE, reverse=True).filter_by(lambda e: abs(e.center().Z - 4) < 1e-6)
    d = run(fillet(floor, 1.2))
    assert _fillets(d) == [(1.2, False, 1)]
    assert [p["shape"] for p in d["pockets"]] == ["freeform"]


def test_pipes_channels_spline_walls_and_lofts_are_no_fillets():
    """One radius across is not enough: a swept pipe goes all the way round, a swept half-pipe
    channel turns 180 degrees (a groove), a spline profile's wall is straight across (curvature 0)
    and a loft's curvature varies."""
    path = Spline((-30, 0, 0), (0, 8, 0), (30, 0, 0))
    channel = Box(60, 40, 10) - Pos(0, 0, 5) * sweep(Plane.YZ * Circle(2), path)
    pipe = sweep(Circle(2), Spline((0, 0, 0), (10, 5, 3), (20, 0, 8)))
    plain = extrude(make_face(Spline(*CAM, periodic=True)), amount=8)
    lofted = loft([make_face(Spline(*CAM, periodic=True)),
                   Pos(0, 0, 10) * make_face(Spline((-12, 0), (0, 18), (12, 0), (0, -8), periodic=True))])
    for part in (channel, pipe, plain, lofted):
        assert run(part)["fillets"] == [], part


def test_roundings_of_one_radius_group_with_the_torus_ones():
    """A cam rounded 1.5 on top and a boss rounded 1.5 (a torus) on it: one group of two."""
    from build123d import Cylinder
    part = cam(1.5, 0.75) + Pos(0, 0, 12) * Cylinder(4, 8)
    part = fillet(part.edges().filter_by(GeomType.CIRCLE).group_by(Axis.Z)[-1], 1.5)
    assert (1.5, True, 2) in _fillets(run(part))

"""``features``: roundings along curved edges (B-spline faces of one radius across) are fillets
(jail/cad/features_rounds.py), in process."""
from __future__ import annotations

import json
import math

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


def toothed_disc(root_fillet: float = 0.5):
    """A disc r=10, 6 thick, with four teeth 4 wide standing out to r=14 and their roots rounded
    ``root_fillet``: the disc's arcs between the teeth are its root lands (as a gear's)."""
    from build123d import Cylinder, PolarLocations
    part = Cylinder(10, 6)
    for loc in PolarLocations(12, 4):
        part += loc * Box(4.5, 4, 6)
    roots = [e for e in part.edges().filter_by(Axis.Z) if abs(math.hypot(e.center().X, e.center().Y) - 10) < 0.1]
    return fillet(roots, root_fillet)


def test_a_fillet_rolls_onto_the_faces_it_rounds():
    """Only a round that rolls onto two faces is a fillet (features_faces.rails). A hex
    nut's corners turned off by a cylinder, a toothed disc's root lands (the smaller root fillets
    blend into them, as a gear's) and a D-shaped plate's arc are not: before, they read as convex
    fillets (a spur gear: "20 x r=17.5" and "20 x r=22", its root and tip). Turned, alike."""
    from build123d import Cylinder, RegularPolygon
    nut = extrude(RegularPolygon(7.5, 6), amount=6) & Cylinder(7.2, 20)
    assert len(nut.faces().filter_by(GeomType.CYLINDER)) == 6  # the corners are turned
    assert run(nut)["fillets"] == []
    disc = toothed_disc()
    want = [(0.5, False, 8)]  # the root fillets only, not the four lands r=10 between them
    assert _fillets(run(disc)) == want
    assert _fillets(run(Pos(30, 20, -5) * Rot(15, 25, 35) * disc)) == want
    d_plate = extrude(make_face(Circle(10).edges()[0]), amount=4) & Box(40, 16, 20)  # an arc cut by two flats
    assert run(d_plate)["fillets"] == []


def test_a_bent_rod_cut_flat_is_no_fillet():
    """A rod (a circle swept along a line, a bend and a line) cut flat top and bottom, as the
    pegboard hook of build123d's examples: its straight pieces run smoothly into the bend only
    across their ends (a cross-section, not a rail), and meet the flats at an angle. Before, the
    straight pieces read as convex fillets r=2.5."""
    from build123d import JernArc, Line, Plane, Wire, split
    from build123d import Keep
    l1 = Line((0, 0), (20, 0))
    l2 = JernArc(start=l1 @ 1, tangent=l1 % 1, radius=6, arc_size=120)
    l3 = Line(l2 @ 1, l2 @ 1 + (l2 % 1) * 15)
    rod = sweep(Plane.YZ * Circle(2.5), path=Wire([l1, l2, l3]))
    rod = split(rod, bisect_by=Plane.XY.offset(-2.2), keep=Keep.TOP)
    rod = split(rod, bisect_by=Plane.XY.offset(2.2), keep=Keep.BOTTOM)
    assert rod.faces().filter_by(GeomType.CYLINDER) and rod.faces().filter_by(GeomType.TORUS)
    assert run(rod)["fillets"] == []


def test_an_ogee_s_convex_round_meets_a_smaller_concave_one_and_is_a_fillet():
    """An ogee step (an S in profile): a concave round r=2 off the lower level runs smoothly into a
    convex round r=3 onto the upper one. The convex round rolls onto a plane on one side and the
    smaller concave round on the other: both are fillets (a land is a round *all* of whose smooth
    neighbours are smaller roundings)."""
    from build123d import Line, ThreePointArc, Wire
    s2 = math.sqrt(0.5)
    edges = [Line((0, 0), (40, 0)), Line((40, 0), (40, 10)), Line((40, 10), (22, 10)),
             ThreePointArc((22, 10), (22 - 2 * s2, 12 - 2 * s2), (20, 12)),
             ThreePointArc((20, 12), (17 + 3 * s2, 12 + 3 * s2), (17, 15)),
             Line((17, 15), (0, 15)), Line((0, 15), (0, 0))]
    step = extrude(make_face(Wire(edges)), amount=20)
    want = [(2.0, False, 1), (3.0, True, 1)]
    assert _fillets(run(step)) == want
    assert _fillets(run(Pos(-7, 3, 50) * Rot(40, 0, 70) * step)) == want

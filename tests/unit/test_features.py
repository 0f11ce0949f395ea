"""jail/cad/features*.py in-process (our code, not user code) and launcher/replies/features.py.

The test plate: four through holes on a bolt circle, a blind hole, a countersunk and a
counterbored hole, rounded vertical corners. Every hole's centre within 0.05 mm, diameter,
depth/through, countersink and counterbore right; the corners are convex fillets; no boss.
"""
from __future__ import annotations

import json
import math

import pytest
from build123d import (Align, Axis, Box, BuildPart, BuildSketch, Circle, CounterBoreHole, CounterSinkHole, Cylinder,
                       GeomType, GridLocations, Hole, Location, Locations, Mode, Plane, PolarLocations, Pos, Rot,
                       Rectangle, RectangleRounded, RegularPolygon, Select, ShapeList, SlotCenterToCenter, Torus, chamfer,
                       export_step, extrude, fillet, import_step)

from jail.cad import features
from jail.cad.measure import MeasureError
from launcher.replies import features as R
from launcher.replies.cad import ReplyRefused
from launcher.tools import table

TOL = 0.05
BOLT = [(30 * math.cos(math.radians(a)), 30 * math.sin(math.radians(a))) for a in (45, 135, 225, 315)]


def plate():
    """A 100x80x10 plate (z from -5 to 5), rounded vertical corners r=5."""
    with BuildPart() as p:
        Box(100, 80, 10)
        fillet(p.edges().filter_by(Axis.Z), radius=5)
        with Locations(Plane.XY.offset(5)):
            with PolarLocations(30, 4, start_angle=45):
                Hole(3.3)
            with Locations((-35, 25)):
                Hole(2.5, depth=6)
            with Locations((35, 25)):
                CounterSinkHole(3.3, 6.0, counter_sink_angle=90)
            with Locations((-35, -25)):
                CounterBoreHole(3.3, 5.5, 4.0)
    return p.part


def boss_part():
    return Box(60, 40, 8) + Pos(10, 5, 4) * Cylinder(6, 12, align=(Align.CENTER, Align.CENTER, Align.MIN))


def run(part, **kw):
    d = features.features({"p": part}, "p", **kw)
    return json.loads(json.dumps(d, allow_nan=False))


def near(a, b, tol=TOL):
    return all(abs(x - y) <= tol for x, y in zip(a, b))


def hole_at(d, xy):
    hs = [h for h in d["holes"] if near(h["center"][:2], xy)]
    assert len(hs) == 1, (xy, d["holes"])
    return hs[0]


def check_plate(d):
    assert len(d["holes"]) == 7, d["holes"]
    for xy in BOLT:
        h = hole_at(d, xy)
        assert near(h["center"], (*xy, 5.0)) and near(h["axis"], (0, 0, -1), 1e-6)
        assert h["diameter"] == pytest.approx(6.6, abs=1e-4) and h["through"] and h["depth"] is None
        assert h["countersink"] is None and h["counterbore"] is None
    blind = hole_at(d, (-35, 25))
    assert blind["through"] is False and blind["depth"] == pytest.approx(6, abs=1e-4)
    assert blind["diameter"] == pytest.approx(5, abs=1e-4) and near(blind["center"], (-35, 25, 5))
    cs = hole_at(d, (35, 25))
    assert cs["through"] and cs["countersink"]["diameter"] == pytest.approx(12, abs=1e-3)
    assert cs["countersink"]["angle"] == pytest.approx(90, abs=0.01) and cs["counterbore"] is None
    assert cs["diameter"] == pytest.approx(6.6, abs=1e-4)
    cb = hole_at(d, (-35, -25))
    assert cb["through"] and cb["counterbore"] == {"diameter": pytest.approx(11, abs=1e-4),
                                                   "depth": pytest.approx(4, abs=1e-4)}
    assert cb["countersink"] is None
    assert [h["bores"] for h in d["holes"]] == [[]] * 7
    assert d["bosses"] == []
    assert [(g["radius"], g["convex"], g["count"]) for g in d["fillets"]] == [(5.0, True, 4)]
    circles = [p for p in d["patterns"] if p["type"] == "bolt_circle"]
    assert len(circles) == 1 and circles[0]["count"] == 4 and circles[0]["radius"] == pytest.approx(30, abs=1e-4)
    assert near(circles[0]["center"], (0, 0, 5))
    members = [d["holes"][i]["center"][:2] for i in circles[0]["members"]]
    assert all(any(near(m, xy) for m in members) for xy in BOLT)


def test_the_plate():
    check_plate(run(plate()))


def test_imported_step_plate(tmp_path):
    path = tmp_path / "plate.step"
    export_step(plate(), str(path))
    check_plate(run(import_step(str(path))))


def test_rounded_corners_alone_are_fillets_not_holes_or_bosses():
    part = fillet(Box(40, 30, 6).edges().filter_by(Axis.Z), 4)
    d = run(part)
    assert d["holes"] == [] and d["bosses"] == []
    assert [(g["radius"], g["convex"], g["count"]) for g in d["fillets"]] == [(4.0, True, 4)]


def test_a_real_boss_and_a_free_cylinder():
    d = run(boss_part())
    assert len(d["bosses"]) == 1 and d["holes"] == []
    b = d["bosses"][0]
    assert near(b["center"], (10, 5, 4)) and near(b["axis"], (0, 0, 1), 1e-6)
    assert b["diameter"] == pytest.approx(12) and b["height"] == pytest.approx(12)
    assert run(Cylinder(5, 20))["bosses"] == []   # a whole part is not a boss on itself


def test_boss_with_foot_fillet_and_top_chamfer():
    part = Box(40, 40, 5) + Pos(0, 0, 2.5) * Cylinder(8, 10, align=(Align.CENTER, Align.CENTER, Align.MIN))
    part = chamfer(part.edges().sort_by(Axis.Z)[-1], 1)
    part = fillet(part.edges().filter_by(GeomType.CIRCLE).filter_by_position(Axis.Z, 2.4, 2.6), 1.5)
    d = run(part)
    assert len(d["bosses"]) == 1 and d["bosses"][0]["height"] == pytest.approx(10, abs=1e-4)
    assert near(d["bosses"][0]["center"], (0, 0, 2.5))
    assert [(g["radius"], g["convex"]) for g in d["fillets"]] == [(1.5, False)]
    assert [(g["size"], g["size2"]) for g in d["chamfers"]] == [(pytest.approx(1.0), None)]


def test_slot_chamfers_and_linear_array():
    with BuildPart() as s:
        Box(80, 40, 10)
        chamfer(s.edges().filter_by(Axis.X).group_by(Axis.Z)[-1], length=2)
        with BuildSketch(Plane.XY.offset(5)):
            SlotCenterToCenter(20, 6)
        extrude(amount=-10, mode=Mode.SUBTRACT)
        with Locations(Plane.XY.offset(5)):
            with Locations((-20, 12), (0, 12), (20, 12)):
                Hole(1.5)
    d = run(s.part)
    assert [(x["length"], x["width"], x["depth"], x["through"]) for x in d["slots"]] == [(26.0, 6.0, None, True)]
    assert near(d["slots"][0]["direction"], (1, 0, 0), 1e-6) and near(d["slots"][0]["center"], (0, 0, 5))
    assert near(d["slots"][0]["axis"], (0, 0, -1), 1e-6)
    assert [(g["size"], g["count"]) for g in d["chamfers"]] == [(pytest.approx(2.0), 2)]
    lin = [p for p in d["patterns"] if p["type"] == "linear"]
    assert len(lin) == 1 and lin[0]["count"] == 3 and lin[0]["pitch"] == pytest.approx(20)


def _drafted_slots(taper: float, depth: float, rows=1):
    """SlotOverall(40, 10) cuts ``depth`` deep into an 80x60x20 block's top (z = 10) with ``taper``
    (build123d's: positive narrows deeper in); ``rows`` of them 20 apart along Y."""
    from build123d import SlotOverall
    part = Box(80, 60, 20)
    for i in range(rows):
        part -= Pos(0, 20 * (i - (rows - 1) / 2), 10) * extrude(SlotOverall(40, 10), amount=-depth, taper=taper)
    return part


@pytest.mark.parametrize("taper,depth,through", [(5, 8, False), (3, 20, True), (-4, 8, False), (1, 8, False)])
def test_a_drafted_slot_is_a_slot_with_its_draft(taper, depth, through, tmp_path):
    """A round-ended slot with drafted walls (a moulded part's; its ends are half cones) read as
    nothing. It is a slot with ``draft`` (positive when it narrows deeper in, negative an undercut),
    its length and width the mouth's, the same from a STEP file; three in a row are a pattern."""
    part = _drafted_slots(taper, depth)
    export_step(part, str(tmp_path / "s.step"))
    for d in (run(part), run(import_step(str(tmp_path / "s.step")))):
        (sl,) = d["slots"]
        assert (sl["length"], sl["width"], sl["draft"], sl["through"], sl["depth"]) == (
            pytest.approx(40), pytest.approx(10), pytest.approx(taper), through,
            None if through else pytest.approx(depth)), sl
        assert near(sl["center"], (0, 0, 10)) and sl["axis"] == [0, 0, -1] and sl["ends"] == ["round", "round"], sl
        assert d["holes"] == d["pockets"] == d["chamfers"] == [], d
    text = table.render_text("features", {"ok": True, "features": R.features_reply(run(part), "p")})
    want = f"dovetail {90 + taper:g}°" if taper < 0 else f"draft {taper:g}°"
    assert f"slots: 1 x length 40 width 10 {want} " in text, text
    rows = run(_drafted_slots(2, 5, rows=3))
    assert [s["draft"] for s in rows["slots"]] == [pytest.approx(2)] * 3
    assert [(p["type"], p["count"]) for p in rows["patterns"]] == [("linear", 3)], rows["patterns"]


def slotted(depth, entry_chamfer):
    with BuildPart() as s:
        Box(50, 30, 10)
        with BuildSketch(Plane.XY.offset(5)):
            SlotCenterToCenter(20, 6)
        extrude(amount=-depth, mode=Mode.SUBTRACT)
        if entry_chamfer:
            chamfer(s.edges(Select.LAST).group_by(Axis.Z)[-1], entry_chamfer)
    return s.part


@pytest.mark.parametrize("depth,entry_chamfer,want", [
    (10, 0, (None, True)), (10, 1, (None, True)), (4, 0, (4, False)), (4, 1, (4, False)),
])
def test_slot_depth_through_and_entry_with_a_chamfered_edge(depth, entry_chamfer, want):
    """A slot is through when the material is absent beyond both ends; a blind one's depth runs
    from its entry (the top of a chamfer round its edge, not the straight wall's) to its floor."""
    d = run(slotted(depth, entry_chamfer))
    assert len(d["slots"]) == 1, d["slots"]
    sl = d["slots"][0]
    assert (sl["depth"], sl["through"]) == (pytest.approx(want[0], abs=1e-4) if want[0] else None, want[1])
    assert near(sl["center"], (0, 0, 5)) and near(sl["axis"], (0, 0, -1), 1e-6)
    assert (sl["length"], sl["width"]) == (pytest.approx(26), pytest.approx(6))


@pytest.mark.parametrize("y", [0.0, 3.0])
def test_a_keyway_opens_where_its_centre_line_meets_the_shaft(y):
    """A slot cut 4 mm down from z = 10 into a round shaft of radius 10: it opens where its centre
    line meets the shaft (z = 10 on the top line; sqrt(100 - 9) off it), not at the highest point
    of its curved edge, and its depth runs from there to the floor at z = 6."""
    with BuildPart() as sp:
        Cylinder(10, 80, rotation=(0, 90, 0))
        with BuildSketch(Plane.XY.offset(10)):
            with Locations((20, y)):
                SlotCenterToCenter(20, 6)
        extrude(amount=-4, mode=Mode.SUBTRACT)
    d = run(sp.part)
    top = math.sqrt(100 - y * y)
    assert len(d["slots"]) == 1, d["slots"]
    sl = d["slots"][0]
    assert near(sl["center"], (20, y, top), 1e-4) and sl["depth"] == pytest.approx(top - 6, abs=1e-4)
    assert sl["through"] is False and near(sl["axis"], (0, 0, -1), 1e-6)


def tube():
    t = Cylinder(20, 60) - Cylinder(15, 60)
    return t - Pos(0, 0, 10) * Rot(0, 90, 0) * Cylinder(3, 50)


def test_a_cross_hole_enters_where_its_axis_meets_the_wall():
    """A hole through a tube's walls is two holes, each entered from outside (x = -20 and 20,
    axes pointing in), where the axis meets the round surface: not at the far tip of the curved
    edge (x = -14.7), and not from the bore (x = -15) because the hole's axis points along +X."""
    d = run(tube())
    cross = sorted((h for h in d["holes"] if h["diameter"] == pytest.approx(6)), key=lambda h: h["center"][0])
    assert len(cross) == 2, d["holes"]
    assert near(cross[0]["center"], (-20, 0, 10)) and near(cross[1]["center"], (20, 0, 10))
    assert near(cross[0]["axis"], (1, 0, 0), 1e-6) and near(cross[1]["axis"], (-1, 0, 0), 1e-6)
    assert [h["length"] for h in cross] == [pytest.approx(5, abs=TOL)] * 2


def hub(n=6, start=0.0):
    h = Cylinder(20, 16) - Cylinder(8, 16)
    for i in range(n):
        drill = Cylinder(2, 50, align=(Align.CENTER, Align.CENTER, Align.MIN))
        h -= Rot(0, 0, start + i * 360 / n) * Rot(0, 90, 0) * drill
    return h


@pytest.mark.parametrize("start", [0.0, 15.0])
def test_radial_holes_into_a_bore_enter_from_outside(start):
    """Six radial holes from a hub's outside into its bore: each enters on the outer surface
    (radius 20) with its axis pointing at the hub's axis, whatever its direction (the entry used
    to follow the axis' sign: half of them entered from the bore)."""
    radial = [h for h in run(hub(start=start))["holes"] if h["diameter"] == pytest.approx(4)]
    assert len(radial) == 6, radial
    for h in radial:
        c, a = h["center"], h["axis"]
        assert math.hypot(c[0], c[1]) == pytest.approx(20, abs=TOL) and c[2] == pytest.approx(0, abs=TOL), h
        assert near(a, (-c[0] / 20, -c[1] / 20, 0), 1e-6) and h["through"] and h["length"] == pytest.approx(12, abs=TOL)


def test_a_hole_through_a_ball_enters_where_its_axis_meets_the_sphere():
    """The mouth's edge is a circle 0.23 mm below the top of the ball (z = sqrt(400 - 9)); the
    hole enters where its axis meets the sphere, as on the tube's round wall."""
    from build123d import Sphere
    (h,) = run(Sphere(20) - Cylinder(3, 50))["holes"]
    assert near(h["center"], (0, 0, 20), 1e-4) and h["through"] and h["length"] == pytest.approx(40, abs=1e-4)


def test_radial_holes_are_one_pattern_round_the_hub_axis():
    """Six radial holes round a hub are one radial pattern (centre on the hub's axis, radius to
    their entries, 60 degrees apart), and the reply's text says so in one line."""
    d = run(hub(start=15.0))
    (p,) = [p for p in d["patterns"] if p["type"] == "radial"]
    assert p["count"] == 6 and sorted(p["members"]) == [i for i, h in enumerate(d["holes"]) if h["diameter"] == 4]
    assert near(p["center"], (0, 0, 0)) and near(p["axis"], (0, 0, 1), 1e-6)
    assert p["radius"] == pytest.approx(20, abs=TOL) and p["pitch_angle"] == pytest.approx(60)
    assert p["start_angle"] % 60 == pytest.approx(15, abs=1e-3)
    out = R.features_reply(d, "hub")
    R.check(out)
    text = table.render_text("features", {"ok": True, "features": out})
    assert "holes: 6 x through d=4 on a radial pattern r=20 round +Z through (0, 0, 0) at" in text, text
    assert "pattern:" not in text


def test_two_rows_of_radial_holes_and_a_cube_s_holes():
    """Two rows of four radial holes are two patterns (their axes meet at two points); holes on
    a cube's six faces into a ball-shaped cavity all enter from outside, and each is in one
    pattern at most: four round one axis, the two others on their own."""
    part = Cylinder(15, 40) - Cylinder(10, 40)
    for z in (-10, 10):
        for i in range(4):
            part -= Pos(0, 0, z) * Rot(0, 0, 45 + 90 * i) * Rot(0, 90, 0) * Cylinder(
                2.5, 40, align=(Align.CENTER, Align.CENTER, Align.MIN))
    d = run(part)
    rows = sorted((p for p in d["patterns"] if p["type"] == "radial"), key=lambda p: p["center"][2])
    assert [(p["count"], round(p["center"][2], 6), round(p["radius"], 4)) for p in rows] == [(4, -10, 15), (4, 10, 15)]
    from build123d import Sphere
    cube = Box(30, 30, 30) - Sphere(8)
    for r in [(0, 0, 0), (0, 90, 0), (0, 180, 0), (0, -90, 0), (90, 0, 0), (-90, 0, 0)]:
        cube -= Rot(*r) * Cylinder(3, 20, align=(Align.CENTER, Align.CENTER, Align.MIN))
    d = run(cube)
    assert len(d["holes"]) == 6 and all(max(map(abs, h["center"])) == pytest.approx(15, abs=TOL) for h in d["holes"])
    (p,) = d["patterns"]
    assert p["type"] == "radial" and p["count"] == 4


def tilted():
    with BuildPart() as p:
        Box(60, 40, 10)
        with Locations(Location((0, 0, 5), (30, 0, 0))):
            CounterBoreHole(3, 5, 3)
        with Locations(Location((20, 0, 5), (-20, 0, 0))):
            Hole(2, depth=6)
        with Locations(Location((-20, 0, 5), (0, 40, 0))):
            CounterSinkHole(2, 4)
    return p.part


def test_tilted_holes_enter_on_the_face_with_their_depths_from_there():
    """Holes drilled at an angle: the entry centre is on the top face where each was placed, and
    the counterbore's and the blind hole's depths run from there (not from the highest point of
    the tilted entry edge, which lies above the face)."""
    d = run(tilted())
    cb, blind, cs = hole_at(d, (0, 0)), hole_at(d, (20, 0)), hole_at(d, (-20, 0))
    c30, s30 = math.cos(math.radians(30)), math.sin(math.radians(30))
    assert near(cb["center"], (0, 0, 5)) and near(cb["axis"], (0, s30, -c30), 1e-6)
    assert cb["through"] and cb["counterbore"]["depth"] == pytest.approx(3, abs=TOL)
    assert cb["length"] == pytest.approx(10 / c30, abs=TOL)
    assert near(blind["center"], (20, 0, 5)) and blind["depth"] == pytest.approx(6, abs=TOL)
    assert not blind["through"] and blind["length"] == pytest.approx(6, abs=TOL)
    assert near(cs["center"], (-20, 0, 5)) and cs["countersink"]["diameter"] == pytest.approx(8, abs=TOL)


@pytest.mark.parametrize("nx,ny,want", [
    (4, 2, [("grid", 8)]),
    (3, 3, [("grid", 9)]),
    (2, 2, [("bolt_circle", 4), ("grid", 4)]),   # the whole group is both: both are said
])
def test_a_grid_is_not_also_reported_as_the_circles_of_its_squares(nx, ny, want):
    with BuildPart() as p:
        Box(60, 40, 10)
        with Locations(Plane.XY.offset(5)):
            with GridLocations(12, 12, nx, ny):
                Hole(2)
    pats = run(p.part)["patterns"]
    assert sorted((x["type"], x["count"]) for x in pats) == want, pats


@pytest.mark.parametrize("make,want", [
    # a closed loop of edges: each strip is a trapezoid, its ends mitred where two chamfers meet
    (lambda b: chamfer(b.edges().group_by(Axis.Z)[0], length=1), [(1.0, None, 4)]),
    (lambda b: chamfer(b.edges().group_by(Axis.Z)[0], length=2, length2=1), [(2.0, 1.0, 4)]),
    (lambda b: chamfer(b.edges().group_by(Axis.Z)[-1], length=2, angle=30), [(2.0, 2 * math.tan(math.radians(30)), 4)]),
    (lambda b: chamfer(b.edges(), length=1), [(1.0, None, 12)]),
    # a small hole through one strip: its vertices inside the strip
    (lambda b: chamfer(b.edges().group_by(Axis.Z)[-1], length=3) - Pos(13.5, 0, 4.5) * Cylinder(0.5, 5),
     [(3.0, None, 4)]),
])
def test_chamfer_size_on_mitred_and_cut_strips(make, want):
    """A chamfer's size is the strip's width across it, not its area over its longest edge (which
    gave 0.9 for a 1 mm chamfer round a 10 mm box's bottom)."""
    d = run(make(Box(30, 30, 10)))
    got = [(g["size"], g["size2"], g["count"]) for g in d["chamfers"]]
    assert len(got) == len(want), got
    for (s1, s2, n), (w1, w2, wn) in zip(got, want):
        assert s1 == pytest.approx(w1, abs=1e-6) and n == wn, got
        assert (s2 is None) == (w2 is None) and (w2 is None or s2 == pytest.approx(w2, abs=1e-6)), got


def test_drafted_flat_walls_are_no_chamfers_but_a_four_to_one_chamfer_is():
    """The flat walls of a drafted (4 degrees) cast flange, between its hull's round ends, read as
    "chamfers: 2 x 9 x 0.63" (build123d's cast_bearing_unit example): legs more than 5:1 apart are
    no chamfer; a chamfer of 2 x 0.5 is one."""
    from build123d import BuildSketch, GridLocations, Plane, draft, make_hull
    with BuildPart() as unit:
        with BuildSketch():
            housing = Circle(28.5)
            with GridLocations(76.5, 0, 2, 1):
                Circle(11)
            make_hull()
        extrude(amount=11)
        extrude(housing, amount=26)
        draft(unit.faces().filter_by(Axis.Z, reverse=True), Plane.XY, 4)
    assert run(unit.part)["chamfers"] == []
    d = run(chamfer(Box(30, 30, 10).edges().group_by(Axis.Z)[-1], length=2, length2=0.5))
    assert [(g["size"], g["size2"], g["count"]) for g in d["chamfers"]] == [(pytest.approx(2), pytest.approx(0.5), 4)]


def _circle_edge(part, r: float, z: float):
    from build123d import GeomType
    return part.edges().filter_by(GeomType.CIRCLE).filter_by(
        lambda e: abs(e.radius - r) < 1e-6 and abs(e.center().Z - z) < 1e-6)


def _stepped(from_top: bool = True, blind: bool = False):
    """An 80x80x30 block (z from -15 to 15): a d=40 counterbore 10 deep, from the top or the bottom,
    over a d=20 hole, through or (from the top) 10 deeper."""
    z = 15 if from_top else -15
    p = Box(80, 80, 30) - Pos(0, 0, z) * Cylinder(20, 20)
    return p - (Cylinder(10, 10) if blind else Cylinder(10, 30))


@pytest.mark.parametrize("name,make,through,entry,fillets", [
    ("round in the floor's corner", lambda: fillet(_circle_edge(_stepped(), 20, 5), 2), True, 15, [(2.0, False)]),
    ("from the bottom", lambda: fillet(_circle_edge(_stepped(False), 20, -5), 2), True, -15, [(2.0, False)]),
    ("blind", lambda: fillet(_circle_edge(_stepped(blind=True), 20, 5), 2), False, 15, [(2.0, False)]),
    ("round on the narrow bore's mouth", lambda: fillet(_circle_edge(_stepped(), 10, 5), 1), True, 15, [(1.0, True)]),
    ("both rounds", lambda: fillet(_circle_edge(fillet(_circle_edge(_stepped(), 20, 5), 2), 10, 5), 1), True, 15,
     [(1.0, True), (2.0, False)]),
    ("chamfer in the floor's corner", lambda: chamfer(_circle_edge(_stepped(), 20, 5), 2), True, 15, []),
])
def test_a_counterbore_with_rounded_corners_is_one_hole(name, make, through, entry, fillets):
    """A counterbore whose floor's corner is rounded (a turned part's usual corner radius, as in
    Too Tall Toby's ppp0107), or the narrow bore's mouth: one hole with its counterbore 10 deep.
    Before, the round cut the hole in two: "through d=40" and "through d=20", or d=40 entered at
    the round's far end."""
    d = run(make())
    assert len(d["holes"]) == 1, (name, d["holes"])
    h = d["holes"][0]
    assert h["through"] is through and h["diameter"] == pytest.approx(20) and (through or h["depth"] == pytest.approx(20))
    assert h["counterbore"] == {"diameter": pytest.approx(40), "depth": pytest.approx(10)}, (name, h)
    assert h["bores"] == [], (name, h)
    assert near(h["center"], (0, 0, entry)) and h["axis"] == [0, 0, -1 if entry > 0 else 1], (name, h)
    assert [(g["radius"], g["convex"]) for g in d["fillets"]] == [(pytest.approx(r), c) for r, c in fillets], name


def _bore(x: float, r: float, h: float, top: bool = True):
    """A cylinder cut ``h`` deep into a 30-high block (z from -15 to 15) from its top or bottom."""
    return Pos(x, 0, 15 if top else -15) * Cylinder(r, h, align=(Align.CENTER, Align.CENTER,
                                                                  Align.MAX if top else Align.MIN))


def _three_steps(corner=None):
    """d=30 6 deep, d=20 to 20 deep, d=10 through, from the top; ``corner``: round (fillet) or
    chamfer the d=20 bore's floor corner by 1."""
    p = Box(60, 60, 30) - _bore(0, 15, 6) - _bore(0, 10, 20) - _bore(0, 5, 30)
    if corner:
        p = corner(_circle_edge(p, 10, -5), 1)
    return p


@pytest.mark.parametrize("name,make,want", [
    ("three steps", _three_steps, (10, 30, 6, [(20, 6, 20)])),
    ("a round in the middle step's corner", lambda: _three_steps(fillet), (10, 30, 6, [(20, 6, 20)])),
    ("a chamfer in the middle step's corner", lambda: _three_steps(chamfer), (10, 30, 6, [(20, 6, 20)])),
    ("counterbored from both sides", lambda: Box(60, 60, 30) - _bore(0, 20, 10) - _bore(0, 15, 30)
     - _bore(0, 20, 10, top=False), (30, 40, 10, [(40, 20, 30)])),
    ("four bores, both sides", lambda: Box(60, 60, 30) - _bore(0, 12, 4) - _bore(0, 8, 10) - _bore(0, 4, 30)
     - _bore(0, 6, 5, top=False), (8, 24, 4, [(16, 4, 10), (12, 25, 30)])),
    ("blind, two steps", lambda: Box(60, 60, 30) - _bore(0, 9, 4) - _bore(0, 6, 10) - _bore(0, 4, 20),
     (8, 18, 4, [(12, 4, 10)])),
    ("a groove in the bore", lambda: Box(60, 60, 30) - _bore(0, 5, 30) - Pos(0, 0, 3) * Cylinder(6, 2),
     (10, None, None, [])),
])
def test_a_stepped_bore_lists_every_bore(name, make, want, tmp_path):
    """A bore stepped three times read as its narrowest bore and its counterbore: the middle step
    (d=20 here, a bearing's seat) was nowhere. Every wider bore that reaches the entry, or a through
    hole's far end, past nothing narrower is in ``bores`` (from the entry, past a floor round or
    chamfer); a groove in the bore is none. The same from a STEP file, and in the text."""
    diameter, cb_d, cb_depth, bores = want
    part = make()
    export_step(part, str(tmp_path / "s.step"))
    for d in (run(part), run(import_step(str(tmp_path / "s.step")))):
        assert len(d["holes"]) == 1, (name, d["holes"])
        h = d["holes"][0]
        assert h["diameter"] == pytest.approx(diameter) and near(h["center"], (0, 0, 15)), (name, h)
        assert h["counterbore"] == (None if cb_d is None else {"diameter": pytest.approx(cb_d),
                                                                "depth": pytest.approx(cb_depth)}), (name, h)
        assert h["bores"] == [{"diameter": pytest.approx(bd), "start": pytest.approx(a), "end": pytest.approx(b)}
                              for bd, a, b in bores], (name, h)
    text = table.render_text("features", {"ok": True, "features": R.features_reply(run(part), "p")})
    for bd, a, b in bores:
        assert f", bore d={bd:g} at depth {a:g} to {b:g}" in text, text


def test_a_chamfer_in_a_wider_bore_s_floor_corner_is_listed_as_a_round_there_is():
    """A round in a counterbore's or a stepped bore's floor corner is listed as a fillet and passed
    in the bore's depth; a chamfer there was passed and listed nowhere. It is now a chamfer too. A
    chamfer round a blind hole's own floor stays part of its depth only (no field, no chamfer)."""
    for part, size, cb, bores in ((_three_steps(chamfer), 1, (30, 6), [(20, 6, 20)]),
                                  (chamfer(_circle_edge(_stepped(), 20, 5), 2), 2, (40, 10), []),
                                  (chamfer(_circle_edge(_stepped(blind=True), 20, 5), 2), 2, (40, 10), [])):
        d = run(part)
        (h,) = d["holes"]
        assert h["counterbore"] == {"diameter": pytest.approx(cb[0]), "depth": pytest.approx(cb[1])}, h
        assert [(b["diameter"], b["start"], b["end"]) for b in h["bores"]] == [
            tuple(pytest.approx(x) for x in b) for b in bores], h
        assert [(g["size"], g["size2"], g["count"]) for g in d["chamfers"]] == [(pytest.approx(size), None, 1)], d
    from build123d import GeomType
    blind = Box(40, 40, 20) - Pos(0, 0, 10) * Cylinder(5, 24)
    blind = chamfer(blind.edges().filter_by(GeomType.CIRCLE).filter_by(lambda e: e.center().Z < 0), 1)
    d = run(blind)
    (h,) = d["holes"]
    assert h["through"] is False and h["depth"] == pytest.approx(12) and d["chamfers"] == [], d


def test_a_stepped_bore_s_bores_are_rebuilt_and_checked():
    """The launcher keeps at most BORES_CAP bores and refuses one that is not a list of
    {diameter, start, end} numbers, or starts past its end, naming where."""
    d = run(_three_steps())
    h = d["holes"][0]
    assert R.features_reply(d, "p")["holes"][0]["bores"] == h["bores"]
    many = json.loads(json.dumps(d))
    many["holes"][0]["bores"] = h["bores"] * (R.BORES_CAP + 5)
    assert len(R.features_reply(many, "p")["holes"][0]["bores"]) == R.BORES_CAP
    for bad, where in ((None, r"holes\[0\]\.bores"), ("d=20", r"holes\[0\]\.bores"), ([7], r"holes\[0\]\.bores\[0\]"),
                       ([{"diameter": 20, "start": 9, "end": 6}], r"holes\[0\]\.bores\[0\]\.start"),
                       ([{"diameter": 20, "start": 6}], r"holes\[0\]\.bores\[0\]\.end"),
                       ([{"diameter": float("inf"), "start": 6, "end": 9}], r"holes\[0\]\.bores\[0\]\.diameter"),
                       ([{"diameter": -1, "start": 6, "end": 9}], r"holes\[0\]\.bores\[0\]\.diameter")):
        broken = json.loads(json.dumps(d))
        broken["holes"][0]["bores"] = bad
        with pytest.raises(ReplyRefused, match=where):
            R.features_reply(broken, "p")
    extra = json.loads(json.dumps(d))
    extra["holes"][0]["bores"][0]["note"] = "\x1b[2J"
    assert R.features_reply(extra, "p")["holes"][0]["bores"] == h["bores"]


def test_no_area_is_computed_for_a_face_nothing_compares(monkeypatch):
    """A face's area is computed when first read, and only planes' and cylinders' are ever read: a
    B-spline face's cost ~5 ms (build123d's tea cup took 160 ms, 150 of them areas; now 8 ms)."""
    from build123d import Plane, Spline, make_face, revolve
    from build123d import Polyline as PL
    from jail.cad import features_faces

    class Counting:  # BRepGProp as features_faces sees it, counting what it measures
        def __init__(self, real):
            self.real, self.kinds = real, []

        def SurfaceProperties_s(self, face, g):  # noqa: N802 - OCP's name
            from OCP.BRepAdaptor import BRepAdaptor_Surface
            self.kinds.append(str(BRepAdaptor_Surface(face).GetType()))
            return self.real.SurfaceProperties_s(face, g)

    s = Spline((30, 10), (60, 90), tangents=((1, 0.5), (0.7, 1)))
    s += PL(s @ 1, (0, 90), (0, 10), s @ 0)
    cup = revolve(Plane.XZ * make_face(s), Axis.Z) + Box(80, 80, 10)
    counting = Counting(features_faces.BRepGProp)
    monkeypatch.setattr(features_faces, "BRepGProp", counting)
    d = run(cup)
    assert len(cup.faces()) >= 6 and d["holes"] == [] and d["chamfers"] == []
    assert not [k for k in counting.kinds if "Plane" not in k and "Cylinder" not in k], counting.kinds


def test_a_ball_ended_blind_hole_is_blind_and_a_hole_into_a_spherical_cavity_through():
    """A ball-end mill's floor (a concave hemisphere on the axis) closes a blind hole: its depth runs
    to the pole. Before, the probe beyond the wall's end was in the cap's air and it read "through".
    A sphere that bulges wider than the hole beyond its end is a cavity it opens into: through."""
    from build123d import Sphere
    ball = Box(60, 40, 20) - Pos(0, 0, 5) * Cylinder(4, 10) - Sphere(4)
    (h,) = run(ball)["holes"]
    assert h["through"] is False and h["depth"] == pytest.approx(14) and h["diameter"] == pytest.approx(8), h
    assert near(h["center"], (0, 0, 10)) and h["axis"] == [0, 0, -1]
    cavity = Box(30, 30, 30) - Sphere(8) - Cylinder(3, 20, align=(Align.CENTER, Align.CENTER, Align.MIN))
    (h,) = run(cavity)["holes"]
    assert h["through"] is True and near(h["center"], (0, 0, 15)), h


def _chamfered(r: float, size: float, ends=(10,), counterbore=None):
    """A d=2r hole through a 20-high block (z from -10 to 10), its mouth chamfered by ``size`` at
    each z of ``ends``; ``counterbore`` (radius, depth): the hole counterbored from the top, the
    counterbore's mouth chamfered instead."""
    from build123d import GeomType
    b = Box(60, 40, 20) - Cylinder(r, 20)
    if counterbore:
        b -= Pos(0, 0, 10) * Cylinder(counterbore[0], 2 * counterbore[1])
    rc = counterbore[0] if counterbore else r
    return chamfer(b.edges().filter_by(GeomType.CIRCLE).filter_by(
        lambda e: abs(e.radius - rc) < 1e-6 and any(abs(e.center().Z - z) < 1e-6 for z in ends)), size)


@pytest.mark.parametrize("name,make,countersink,counterbore,chamfers", [
    ("1 mm on a d=10 hole, both ends", lambda: _chamfered(5, 1, (10, -10)), None, None, [(1, 2)]),
    ("0.5 mm on a d=6 hole's exit", lambda: _chamfered(3, 0.5, (-10,)), None, None, [(0.5, 1)]),
    ("a d=12 seat on a d=6 hole (2x)", lambda: _chamfered(3, 3), (12, 90), None, []),
    ("1 mm on a d=4 hole (1.5x)", lambda: _chamfered(2, 1), (6, 90), None, []),
    ("a counterbore's mouth", lambda: _chamfered(5, 1, counterbore=(8, 5)), None, (16, 5), [(1, 1)]),
])
def test_an_entry_chamfer_is_a_chamfer_and_a_countersink_a_countersink(name, make, countersink, counterbore,
                                                                        chamfers):
    """A cone widening to a hole's mouth is its countersink when at least 1.5x as wide as the bore
    it leads into (a flat head's seat); a narrower one is an edge broken round the mouth: a
    chamfer, listed with the chamfers, as a through hole's exit cone is. Before, a 1 mm chamfer on
    a d=10 hole read "countersink d=12 90°", and a counterbore's chamfered mouth a countersink."""
    d = run(make())
    (h,) = d["holes"]
    # entered from its wider end, as ever: a hole chamfered at one end only, from that end
    assert h["through"] and near(h["center"], (0, 0, -10 if name.endswith("exit") else 10)), (name, h)
    assert h["countersink"] == (None if countersink is None else {
        "diameter": pytest.approx(countersink[0]), "angle": pytest.approx(countersink[1])}), (name, h)
    assert h["counterbore"] == (None if counterbore is None else {
        "diameter": pytest.approx(counterbore[0]), "depth": pytest.approx(counterbore[1])}), (name, h)
    assert [(g["size"], g["size2"], g["count"]) for g in d["chamfers"]] == [
        (pytest.approx(size), None, n) for size, n in chamfers], (name, d["chamfers"])
    plain = run(Box(60, 40, 20) - Cylinder(5, 20))  # no chamfer: none said
    assert plain["chamfers"] == [] and plain["holes"][0]["countersink"] is None


def faceted(part, deflection: float = 0.5):
    """``part`` as an STL made solid: one flat triangle per facet of its mesh, sewn."""
    from build123d import Face, Shell, Solid, Wire
    vs, ts = part.tessellate(deflection, 0.5)
    return Solid(Shell([Face(Wire.make_polygon([vs[i] for i in t], close=True)) for t in ts]))


def test_a_mesh_made_solid_says_so_and_its_facets_are_never_chamfers(monkeypatch):
    """A solid of flat triangles (an STL made solid) reports ``faceted``, and says in its text that its
    holes are facets; a facet is never a chamfer (build123d's low-poly benchy example read as nine
    chamfers such as 0.61 x 0.001: two nearly coplanar facets)."""
    from jail.cad import features_find
    mesh = faceted(plate())
    d = run(mesh)
    assert d["faceted"]["triangles"] == d["faceted"]["faces"] >= features.FACETED_MIN and not d["holes"], d
    text = table.render_text("features", {"ok": True, "features": R.features_reply(d, "m")})
    assert f"faceted: {d['faceted']['faces']} of {d['faceted']['faces']} faces are flat triangles" in text
    box = chamfer(Box(30, 30, 10).edges(), length=1)  # 8 corner triangles among 26 faces: no mesh
    b = run(box)
    assert b["faceted"] is None and [(g["size"], g["count"]) for g in b["chamfers"]] == [(pytest.approx(1.0), 12)]
    # whatever the facets' shapes: a face that looks like a chamfer strip is not one when it is a facet
    monkeypatch.setattr(features_find, "_chamfer_legs", lambda fi, infos: (0.6, 0.001))
    assert run(mesh)["chamfers"] == []


def test_objects_without_a_solid_are_refused_with_what_to_do():
    from build123d import Circle
    sk = Circle(10) - Circle(3)
    for value in (sk, sk.faces()[0], Circle(5).wires()[0]):
        with pytest.raises(MeasureError, match="'s' has no solid: features finds holes.*extrude or revolve"):
            features.features({"s": value}, "s")


@pytest.mark.parametrize("kinds,line", [(None, "no holes, bosses, fillets, chamfers, slots, pockets, pads, grooves or steps found"),
                                        (["holes"], "no holes found"),
                                        (["slots", "holes", "patterns"], "no slots or holes found")])
def test_nothing_found_says_what_was_looked_for(kinds, line):
    raw = features.features({"b": Box(10, 10, 10)}, "b", kinds)
    result = {"ok": True, "features": R.features_reply(raw, "b")}
    if kinds:
        result["kinds"] = kinds
    assert table.render_text("features", result) == "b:\n" + line


def test_kinds_and_errors():
    d = run(plate(), kinds=["fillets"])
    assert set(d) == {*features.KINDS, "truncated", "faceted"} and d["holes"] == [] and d["fillets"]
    with pytest.raises(MeasureError, match="kinds"):
        features.features({"p": Box(1, 1, 1)}, "p", ["bogus"])
    with pytest.raises(MeasureError, match="no object named"):
        features.features({"p": Box(1, 1, 1)}, "q")


# ------------------------------------------------------------------ the launcher's side
def test_material_probes_cast_rays_and_agree_with_the_solid_classifier():
    """Probes cast a ray and read its nearest crossing (7x cheaper than OCCT's classifier on a part
    of 1 500 faces). On the plate (exact surfaces) they answer by ray and agree with the classifier
    everywhere, on the axes of its holes and just off its faces included; a point on a face (its
    ray's crossing at the point itself) and every point of a solid with a B-spline face (a loft:
    the intersector approximates it and missed a crossing) are asked of the classifier."""
    import random
    from OCP.BRepClass3d import BRepClass3d_SolidClassifier
    from OCP.TopAbs import TopAbs_IN
    from OCP.gp import gp_Pnt
    from build123d import Circle, Pos as P, loft
    from jail.cad.features_material import Material

    def classifier(shape, p):
        return BRepClass3d_SolidClassifier(shape.solids()[0].wrapped, gp_Pnt(*p), 1e-7).State() == TopAbs_IN
    part = plate()
    rng = random.Random(3)
    pts = [(rng.uniform(-55, 55), rng.uniform(-45, 45), rng.uniform(-7, 7)) for _ in range(150)]
    pts += [(x, y, z) for x, y in BOLT + [(-35, -25), (-35, 25), (35, 25)] for z in (-5.001, -4.999, 4.999, 5.001)]
    for f in part.faces():
        c, n = f.center(), f.normal_at(f.center())
        pts += [(c.X + n.X * s, c.Y + n.Y * s, c.Z + n.Z * s) for s in (1e-3, -1e-3)]
    m = Material(part.wrapped)
    assert [m.inside(p) for p in pts] == [classifier(part, p) for p in pts]
    assert m.rays == len(pts) and m.classified == 0 and 0 < sum(map(m.inside, pts)) < len(pts)
    m.inside((0, 0, 5))  # on the top face
    assert m.classified == 1
    art = loft([Circle(10), P(0, 0, 10) * Circle(6), P(0, 0, 20) * Circle(9)])
    m = Material(art.wrapped)
    assert [m.inside(p) for p in ((0, 0, 10), (0, 0, 25), (7.5, 0, 10))] == [True, False, False]
    assert m.rays == 0 and m.classified == 3


def test_rebuilt_reply_conforms_and_renders():
    raw = run(plate())
    out = R.features_reply(raw, "plate")
    R.check(out)
    tool = table.get("features")
    assert tool.structured({"ok": True, "features": out}) == out
    text = table.render_text("features", {"ok": True, "features": out})
    assert "4 x through d=6.6 -Z on a bolt circle r=30" in text and "countersink d=12 90°" in text
    assert "fillets: 4 x r=5 (convex rounds)" in text and len(text.splitlines()) <= 8


@pytest.mark.parametrize("patch", [
    ("holes", 0, "diameter", float("nan")), ("holes", 0, "center", [1, 2]), ("holes", 0, "through", 1),
    ("holes", 0, "center", [1e300, 0, 0]), ("fillets", 0, "convex", "yes"), ("holes", 0, "countersink", "x"),
    ("patterns", 0, "type", "\x1b[2J"), ("patterns", 0, "members", [99]),
    ("patterns", 0, "radius", -1.0), ("holes", 0, "keyway", "4x2"), ("holes", 0, "keyway", {"width": 4}),
    ("holes", 0, "keyway", {"width": float("inf"), "depth": 1}), ("holes", 0, "partial", "no"),
    ("holes", 0, "partial", None), ("holes", 0, "draft", 91.0), ("holes", 0, "draft", "5"),
    ("holes", 0, "draft", True), ("holes", 0, "draft", -91.0),
])
def test_hostile_fields_refuse_the_reply(patch):
    raw = run(plate())
    kind, i, key, value = patch
    raw[kind][i][key] = value
    with pytest.raises(ReplyRefused, match=rf"{kind}\[{i}\]"):
        R.features_reply(raw, "plate")


def screw_bosses():
    """An enclosure's 3 mm floor (60 x 40, z 0..3) with two screw bosses at x = -20 and 20: d=8 at the
    base, 12 high, drafted 1.5 degrees, each with a core hole d=3 at its top, 10 deep, drafted 1 degree;
    and a through hole d=10 at the top (z=3) drafted 3 degrees at (0, 10)."""
    with BuildPart() as p:
        Box(60, 40, 3, align=(Align.CENTER, Align.CENTER, Align.MIN))
        with BuildSketch(Plane.XY.offset(3)):
            with Locations((-20, 0), (20, 0)):
                Circle(4)
        extrude(amount=12, taper=1.5)
        with BuildSketch(Plane.XY.offset(15)):
            with Locations((-20, 0), (20, 0)):
                Circle(1.5)
        extrude(amount=-10, taper=1, mode=Mode.SUBTRACT)
        with BuildSketch(Plane.XY.offset(3)):
            with Locations((0, 10)):
                Circle(5)
        extrude(amount=-3, taper=3, mode=Mode.SUBTRACT)
    return p.part


@pytest.mark.parametrize("step", [False, True], ids=["built", "imported_step"])
def test_drafted_bosses_and_holes(step, tmp_path):
    """A moulded part's drafted (tapered) walls are cones, not cylinders: its screw bosses and their
    core holes were neither bosses nor holes (nothing found at all). A cone at most 15 degrees off
    its axis, with no cylinder on its axis, is now a drafted boss or hole: ``draft`` in degrees, the
    diameter at the base (a boss) or at the entry (a hole). A 40-degree cone stays a chamfer."""
    part = screw_bosses()
    if step:
        export_step(part, str(tmp_path / "b.step"))
        part = import_step(str(tmp_path / "b.step"))
    d = run(part)
    assert [(b["diameter"], b["height"], b["draft"]) for b in d["bosses"]] == [
        (pytest.approx(8), pytest.approx(12), pytest.approx(1.5))] * 2, d["bosses"]
    assert [b["center"] for b in d["bosses"]] == [pytest.approx([-20, 0, 3]), pytest.approx([20, 0, 3])]
    assert sorted(round(h["draft"], 6) for h in d["holes"]) == [1, 1, 3], d["holes"]
    core = [h for h in d["holes"] if h["draft"] == pytest.approx(1)]
    assert [(h["diameter"], h["depth"], h["through"]) for h in core] == [
        (pytest.approx(3), pytest.approx(10), False)] * 2
    assert sorted(h["center"][0] for h in core) == [pytest.approx(-20), pytest.approx(20)]
    assert all(h["center"][2] == pytest.approx(15) and near(h["axis"], (0, 0, -1), 1e-9) for h in core)
    (thr,) = [h for h in d["holes"] if h["through"]]
    assert (thr["diameter"], thr["draft"], thr["countersink"]) == (pytest.approx(10), pytest.approx(3), None)
    assert near(thr["center"], (0, 10, 3), 1e-6)
    assert d["chamfers"] == [] and d["fillets"] == []
    out = R.features_reply(d, "b")
    R.check(out)
    text = table.render_text("features", {"ok": True, "features": out})
    assert "bosses: 2 x d=8 height 12 draft 1.5° +Z" in text and "holes: 2 x blind depth 10 d=3 draft 1° -Z" in text
    assert "holes: 1 x through d=10 draft 3° -Z at (0, 10, 3)" in text, text
    with BuildPart() as p:  # a 40-degree cone alone: a chamfer-like dimple, no hole
        Box(40, 40, 10)
        with BuildSketch(Plane.XY.offset(5)):
            Circle(5)
        extrude(amount=-3, taper=40, mode=Mode.SUBTRACT)
    d = run(p.part)
    assert d["holes"] == [] and len(d["chamfers"]) == 1


def test_undercut_holes_and_bosses_have_a_negative_draft():
    """A hole that widens deeper in, or a boss that widens towards its top, cannot leave a mould: its
    draft is negative and the text says "(undercut)"."""
    with BuildPart() as p:
        Box(40, 40, 10)
        with BuildSketch(Plane.XY.offset(5)):
            Circle(4)
        extrude(amount=-6, taper=-3, mode=Mode.SUBTRACT)
    (h,) = run(p.part)["holes"]
    assert (h["diameter"], h["depth"], h["draft"]) == (pytest.approx(8), pytest.approx(6), pytest.approx(-3))
    d = run(Box(40, 40, 4) + Pos(0, 0, 2) * extrude(Circle(5), 10, taper=-4))
    (b,) = d["bosses"]
    assert (b["diameter"], b["height"], b["draft"]) == (pytest.approx(10), pytest.approx(10), pytest.approx(-4))
    text = table.render_text("features", {"ok": True, "features": R.features_reply(d, "b")})
    assert "bosses: 1 x d=10 height 10 draft -4° (undercut) +Z at (0, 0, 2)" in text, text


def _drafted_pocket(sketch, depth=8.0, taper=5.0):
    """An 80x60x20 plate (top at z=10) with ``sketch`` cut ``depth`` down from its top, tapered."""
    with BuildPart() as p:
        Box(80, 60, 20)
        with BuildSketch(Plane.XY.offset(10)):
            sketch()
        extrude(amount=-depth, mode=Mode.SUBTRACT, taper=taper)
    return p.part


def _l_sketch():
    with Locations((-10, -10)):
        Rectangle(40, 20)
    Rectangle(20, 40)


@pytest.mark.parametrize("sketch,depth,taper,want", [
    (lambda: Rectangle(30, 20), 8, 5, ("rectangle", 4, 20, 30, None, 5,
                                       "rectangle 30 x 20 along +X draft 5° depth 8")),
    (lambda: RectangleRounded(30, 20, 4), 8, 5, ("rectangle", 4, 20, 30, 4, 5, "r=4 draft 5° depth 8")),
    (lambda: RegularPolygon(8, 6), 8, 5, ("regular", 6, 8 * 3 ** 0.5, 16, None, 5,
                                          "hex 13.8564 across flats draft 5°")),
    (_l_sketch, 8, 5, ("L", 6, 40, 40, None, 5,
                       "L-shaped 40 x 40 draft 5° depth 8 -Z at (-6.667, -3.333, 10)")),
    (lambda: Rectangle(30, 20), 20, 5, ("rectangle", 4, 20, 30, None, 5, "draft 5° through -Z at (0, 0, 10)")),
    (lambda: Rectangle(30, 20), 8, -3, ("rectangle", 4, 20, 30, None, -3, "draft -3° (undercut) depth 8")),
], ids=["rectangle", "rounded", "hex", "L", "window", "undercut"])
def test_drafted_pockets(sketch, depth, taper, want):
    """A tapered cut's walls lean off its axis (build123d makes a polygon's walls B-spline planes, their
    corners B-spline lines; a rounded rectangle's corners cones): it was no pocket at all. It is now
    a pocket with ``draft`` (negative: an undercut), its sizes and corner radius the entry's."""
    d = run(_drafted_pocket(sketch, depth, taper))
    (p,) = d["pockets"]
    shape, sides, w, length, r, draft, line = want
    assert (p["shape"], p["sides"], p["width"], p["length"], p["draft"], p["through"]) == (
        shape, sides, pytest.approx(w), pytest.approx(length), pytest.approx(draft), depth == 20), p
    assert p["corner_radius"] == (None if r is None else pytest.approx(r)) and p["center"][2] == pytest.approx(10)
    assert p["depth"] == (None if depth == 20 else pytest.approx(depth))
    assert d["fillets"] == [] and d["chamfers"] == [] and d["holes"] == []
    text = table.render_text("features", {"ok": True, "features": R.features_reply(d, "p")})
    assert line in text, text


def test_a_hollow_tapered_cap_s_rim_is_not_a_chamfer():
    """build123d's key cap: a square tapered 15 degrees, hollowed by a scaled copy. Once its B-spline
    walls read as planes, its bottom rim (a plane whose normal lies between two opposite inner walls')
    read "chamfers: 1 x 32.1505"; a chamfer is cut into the corner of the planes it joins, behind both."""
    from build123d import scale
    with BuildPart() as cap:
        with BuildSketch():
            Rectangle(18, 18)
        extrude(amount=10, taper=15)
        scale(by=(0.925, 0.925, 0.85), mode=Mode.SUBTRACT)
    assert sum(fi.kind == "plane" for fi in features.faces_of(cap.part.wrapped)) == 11  # B-spline walls too
    assert run(cap.part)["chamfers"] == []


def test_the_inside_of_a_drafted_box_is_an_undercut_pocket_and_its_outside_no_pocket():
    """A box tapered 1.5 degrees and hollowed with ``offset``: its inside widens downwards (an undercut
    a mould could not release), sized at the opening; the tapered block alone has no pocket."""
    from build123d import offset
    with BuildPart() as b:
        with BuildSketch():
            RectangleRounded(100, 70, 6)
        extrude(amount=30, taper=1.5)
    assert run(b.part)["pockets"] == []
    with BuildPart() as b:
        with BuildSketch():
            RectangleRounded(100, 70, 6)
        extrude(amount=30, taper=1.5)
        offset(amount=-2, openings=b.faces().sort_by(Axis.Z)[-1])
    (p,) = run(b.part)["pockets"]
    top = 100 - 2 * 30 * math.tan(math.radians(1.5)) - 4 / math.cos(math.radians(1.5))  # less two 2 mm walls
    assert (p["width"], p["length"], p["draft"], p["depth"]) == (
        pytest.approx(top - 30, abs=1e-3), pytest.approx(top, abs=1e-3), pytest.approx(-1.5), pytest.approx(28)), p


def flange_slots():
    """A U slot running out of a flange's +X edge, a closed slot, a blind U step at the -X edge
    and a semicircular notch in the -Y edge."""
    with BuildPart() as p:
        Box(80, 40, 6)
        with BuildSketch(Plane.XY.offset(3)):
            with Locations((35, 0)):
                SlotCenterToCenter(20, 8)
            with Locations((-20, 10)):
                SlotCenterToCenter(12, 6, rotation=90)
        extrude(amount=-6, mode=Mode.SUBTRACT)
        with BuildSketch(Plane.XY.offset(3)):
            with Locations((-40, 0)):
                SlotCenterToCenter(16, 10)
        extrude(amount=-4, mode=Mode.SUBTRACT)
    return p.part - Pos(10, -20, 0) * Cylinder(4, 6)


def test_slots_open_at_one_end_are_slots_not_fillets():
    """A U slot at an edge, a blind step and a notch were 'fillets: r=4 (concave)': each is now a
    slot open at that end, its length from the edge to the round end, centred on that length,
    ``direction`` pointing out; the closed slot stays closed; nothing is left as a fillet."""
    d = run(flange_slots())
    assert d["fillets"] == [], d["fillets"]
    got = {tuple(round(x, 4) for x in s["center"]): s for s in d["slots"]}
    want = {  # centre: (length, width, depth, through, open_end, direction)
        (30.5, 0, 3): (19, 8, None, True, True, (1, 0, 0)),
        (-20, 10, 3): (18, 6, None, True, False, (0, 1, 0)),
        (-33.5, 0, 3): (13, 10, 4, False, True, (-1, 0, 0)),
        (10, -18, 3): (4, 8, None, True, True, (0, -1, 0)),
    }
    assert set(got) == set(want), d["slots"]
    for c, (length, width, depth, through, open_end, direction) in want.items():
        s = got[c]
        assert (s["length"], s["width"], s["depth"], s["through"], s["open_end"]) == (
            pytest.approx(length), pytest.approx(width), depth if depth is None else pytest.approx(depth),
            through, open_end), s
        assert near(s["direction"], direction, 1e-6) and near(s["axis"], (0, 0, -1), 1e-6)
    text = table.render_text("features", {"ok": True, "features": R.features_reply(d, "f")})
    assert "slots: 1 x length 19 width 8 open-ended through -Z opening +X at (30.5, 0, 3)" in text, text
    assert "slots: 1 x length 13 width 10 open-ended depth 4 -Z opening -X at (-33.5, 0, 3)" in text


def rail(n=5):
    """A strip with a row of ``n`` through slots, 25 apart (a DIN rail's)."""
    with BuildPart() as p:
        Box(35, 25 * n, 1.5)
        with BuildSketch(Plane.XY.offset(0.75)):
            with GridLocations(0, 25, 1, n):
                SlotCenterToCenter(8.8, 6.2, rotation=90)
        extrude(amount=-1.5, mode=Mode.SUBTRACT)
    return p.part


def test_a_row_of_slots_is_one_line_and_a_linear_pattern():
    """Slots are grouped like holes: one line per kind with the pattern they make (a DIN rail's
    39 slots were 39 lines)."""
    d = run(rail())
    (p,) = d["patterns"]
    assert (p["type"], p["of"], p["count"], p["pitch"]) == ("linear", "slots", 5, pytest.approx(25))
    out = R.features_reply(d, "rail")
    R.check(out)
    text = table.render_text("features", {"ok": True, "features": out})
    assert text.splitlines()[1:] == ["slots: 5 x length 15 width 6.2 through -Z on a linear pitch 25 along (0, 1, 0) "
                                     "at (0, -50, 0.75), (0, -25, 0.75), (0, 0, 0.75), (0, 25, 0.75), (0, 50, 0.75)"]
    d["patterns"][0]["members"] = [0, 5]
    with pytest.raises(ReplyRefused, match=r"patterns\[0\].members\[1\]"):
        R.features_reply(d, "rail")


def test_two_rows_of_holes_make_no_bolt_circles_but_a_flange_s_circle_stays():
    """Two rows of eleven holes (a connector's): every four holes two pitches apart lie on a circle,
    equally spaced; none is a bolt circle, as other holes of the rows lie on its sides. Four bolt
    holes of a flange with two more of their size elsewhere still are one."""
    with BuildPart() as p:
        Box(70, 30, 3)
        with Locations(Plane.XY.offset(1.5)):
            with GridLocations(5, 20, 11, 2):
                Hole(1)
    assert [x["type"] for x in run(p.part)["patterns"]] == ["grid"]
    with BuildPart() as p:
        Box(70, 30, 3)
        with Locations(Plane.XY.offset(1.5)):
            with GridLocations(5, 20, 11, 2):
                Hole(1)
            with Locations((3.5, 0), (-3.5, 4)):
                Hole(1)
    d = run(p.part)
    assert not [x for x in d["patterns"] if x["type"] == "bolt_circle"], d["patterns"]
    flange = Cylinder(40, 8)
    for x, y in [(25, 0), (0, 25), (-25, 0), (0, -25), (10, 33), (-30, -20)]:
        flange -= Pos(x, y, 0) * Cylinder(3, 8)
    circles = [x for x in run(flange)["patterns"] if x["type"] == "bolt_circle"]
    assert [(c["count"], round(c["radius"], 6)) for c in circles] == [(4, 25)]


@pytest.mark.parametrize("leave_out,want", [
    (None, ("bolt_circle", 6, 60.0, None)),
    (2, ("arc", 5, 60.0, -180.0)),         # a bolt circle with a hole left out: an arc from after the gap
    (None, None),                           # (below: a polar array over a third of a turn)
])
def test_arcs_of_holes_and_a_bolt_circle_with_a_hole_left_out(leave_out, want):
    """A polar array over part of a turn, or a bolt circle with one hole left out, was no pattern;
    each is now an arc: count, pitch, start angle at the member after the gap, members in order
    round the circle. Three holes on a circle are never an arc (any isosceles triangle is)."""
    part = Cylinder(50, 8)
    if want is None:
        with BuildPart() as p:
            Cylinder(50, 8)
            with Locations(Plane.XY.offset(4)):
                with PolarLocations(30, 5, start_angle=10, angular_range=120, endpoint=True):
                    Hole(3)
            with Locations((0, -15, 4), (8, -25, 4), (-8, -25, 4)):
                Hole(3)
        d = run(p.part)
        (arc,) = d["patterns"]
        assert (arc["type"], arc["count"], arc["radius"]) == ("arc", 5, pytest.approx(30))
        assert (arc["pitch_angle"], arc["start_angle"]) == (pytest.approx(30), pytest.approx(10))
        angles = [math.degrees(math.atan2(d["holes"][i]["center"][1], d["holes"][i]["center"][0]))
                  for i in arc["members"]]
        assert angles == [pytest.approx(a) for a in (10, 40, 70, 100, 130)]
        text = table.render_text("features", {"ok": True, "features": R.features_reply(d, "p")})
        assert "holes: 5 x through d=6 -Z on an arc r=30 at (0, 0, 4), 30° apart from 10° at (29.54" in text, text
        assert "holes: 3 x through d=6 -Z at (-8, -25, 4)" in text, text  # the others: a line of their own
        return
    for i in range(6):
        if i != leave_out:
            a = math.radians(60 * i)
            part -= Pos(35 * math.cos(a), 35 * math.sin(a), 0) * Cylinder(4, 8)
    (p,) = run(part)["patterns"]
    kind, count, pitch, start = want
    assert (p["type"], p["count"], p["pitch_angle"]) == (kind, count, pytest.approx(pitch))
    if start is not None:
        assert p["start_angle"] == pytest.approx(start)


def grooved_shaft():
    """A shaft with a circlip groove (d=18.8, 1.2 wide) and a chamfered end."""
    from build123d import GeomType
    shaft = Cylinder(10, 80) - Pos(0, 0, 30) * (Cylinder(11, 1.2) - Cylinder(9.4, 1.2))
    return chamfer(shaft.edges().filter_by(GeomType.CIRCLE).group_by(Axis.Z)[-1], 1)


def _revolved(*pts):
    from build123d import Polyline, make_face, revolve
    return revolve(make_face(Plane.XZ * Polyline(*pts, close=True)), Axis.Z)


@pytest.mark.parametrize("make,want", [
    (grooved_shaft, [("flat", 18.8, 1.2, 0.6, 30)]),
    (lambda: _revolved((5, -10), (30, -10), (30, -6), (22, 0), (30, 6), (30, 10), (5, 10)),
     [("v", 44, 12, 8, 0)]),                                              # a pulley's V
    (lambda: _revolved((0, -10), (20, -10), (20, -5), (15, -2), (15, 2), (20, 5), (20, 10), (0, 10)),
     [("flat", 30, 4, 5, 0)]),                                            # angled walls, flat bottom
    (lambda: _revolved((0, -10), (15, -10), (15, -4), (20, 0), (15, 4), (15, 10), (0, 10)), []),  # a ridge
    (lambda: Cylinder(10, 40, align=(Align.CENTER, Align.CENTER, Align.MIN))
     + Pos(0, 0, 40) * Cylinder(7, 30, align=(Align.CENTER, Align.CENTER, Align.MIN)), []),  # a step
    (lambda: Pos(0, 0, 20) * Box(40, 40, 4) + Pos(0, 0, -20) * Box(40, 40, 4)
     + Pos(10, 0, 0) * Cylinder(2, 40) + Pos(-10, 0, 0) * Cylinder(2, 40), []),  # tubes between two plates
    (lambda: Cylinder(20, 40) - Cylinder(10, 40) - Pos(0, 0, 5) * (Cylinder(12, 2) - Cylinder(10, 2)),
     [("flat", 24, 2, 2, 5)]),                                            # an O-ring's groove in a bore
    (lambda: Box(40, 40, 10) - Pos(0, 0, 5) * Cylinder(6, 8) - Cylinder(3, 10), []),  # a counterbore
], ids=["circlip", "pulley_v", "trapezoid", "ridge", "step", "tube_sheet", "bore", "counterbore"])
def test_grooves_round_a_shaft(make, want):
    """A circlip's groove was not listed; a pulley's V was not listed either (its flanks had only
    stopped reading as chamfers); nor an O-ring's groove in a bore (the bore stays a hole). Grooves:
    profile, bottom diameter, width, depth, centre on the axis, internal; a counterbore is not one; a ridge, a shaft step and tubes between two plates (build123d's heat_exchanger, while
    this was written, read its tubes as grooves 284 wide) are not grooves, and angled walls are not chamfers."""
    d = run(make())
    got = [(g["profile"], g["diameter"], g["width"], g["depth"], g["center"][2]) for g in d["grooves"]]
    assert [g["internal"] for g in d["grooves"]] == [g[1] == 24 for g in want]  # the bore's is internal
    if any(g[1] == 24 for g in want):
        assert [(h["diameter"], h["through"]) for h in d["holes"]] == [(pytest.approx(20), True)]
    assert got == [(p, pytest.approx(dia), pytest.approx(w), pytest.approx(dep), pytest.approx(z, abs=1e-6))
                   for p, dia, w, dep, z in want]
    assert all(near(g["axis"], (0, 0, 1), 1e-9) for g in d["grooves"])
    assert [c["size"] for c in d["chamfers"]] == ([pytest.approx(1)] if make is grooved_shaft else [])
    out = R.features_reply(d, "s")
    R.check(out)
    text = table.render_text("features", {"ok": True, "features": out})
    if make is grooved_shaft:
        assert "groove: flat d=18.8 width 1.2 depth 0.6 round +Z at (0, 0, 30)" in text, text
    for key, value in (("profile", "\x1b[2J"), ("depth", -1.0), ("diameter", float("nan")), ("axis", [0, 1]),
                       ("internal", "no")):
        if not d["grooves"]:
            break
        bad = json.loads(json.dumps(d))
        bad["grooves"][0][key] = value if key != "diameter" else 1e300
        with pytest.raises(ReplyRefused, match=rf"grooves\[0\].{key}"):
            R.features_reply(bad, "s")


def _hub(keyway=True):
    """A hub (d=50, 20 long) with a d=16 bore and a 4 wide keyway whose floor is 10.5 from the axis."""
    hub = Cylinder(25, 20) - Cylinder(8, 20)
    return hub - Pos(0, 7.5, 0) * Box(4, 3, 20, align=(Align.CENTER, Align.MIN, Align.CENTER)) if keyway else hub


@pytest.mark.parametrize("step", [False, True], ids=["built", "imported_step"])
def test_a_bore_with_a_keyway_is_a_hole_with_its_keyway(step, tmp_path):
    """A hub's bore with a keyway read as "fillets: 1 x r=8 (concave)": its wall is not a full turn.
    A wall whose gap is a keyway (two parallel walls along the axis and a floor) is a hole."""
    part = _hub()
    if step:
        export_step(part, str(tmp_path / "hub.step"))
        part = import_step(str(tmp_path / "hub.step"))
    d = run(part)
    (h,) = d["holes"]
    assert (h["diameter"], h["through"], h["keyway"]) == (pytest.approx(16), True, {
        "width": pytest.approx(4), "depth": pytest.approx(2.5)})
    assert near(h["center"], (0, 0, 10), 1e-6) and d["fillets"] == d["bosses"] == d["chamfers"] == []
    assert [x["keyway"] for x in run(_hub(keyway=False))["holes"]] == [None]
    out = R.features_reply(d, "hub")
    R.check(out)
    text = table.render_text("features", {"ok": True, "features": out})
    assert "holes: 1 x through d=16 keyway width 4 depth 2.5 -Z at (0, 0, 10)" in text, text


@pytest.mark.parametrize("cut,partial,keyway,others", [
    (Pos(18, 0, 0) * Cylinder(4, 5), True, None, []),                                       # breaks out of the side
    (Cylinder(4, 5) + Pos(0, 4, 0) * Box(4, 3, 5) + Pos(0, -4, 0) * Box(4, 3, 5), True, None, []),  # two keyways
    (Cylinder(4, 5) + Pos(0, 5, 0) * Cylinder(2, 5), True, None, [4]),                        # a round notch
    (Cylinder(4, 5) + Pos(0, 4, 0) * Box(4, 3, 5), False, (4, 1.5), []),                       # one keyway
    (Cylinder(4, 5), False, None, []),
], ids=["breakout", "two_keyways", "round_notch", "keyway", "round"])
def test_a_wall_with_another_gap_is_a_partial_hole(cut, partial, keyway, others):
    """A hole drilled across the part's edge read "fillets: 1 x r=4 (concave)": a fillet never turns
    more than half a turn. A wall over more than half a turn whose gap is not one keyway (a hole
    breaking out of the side, a bore with two keyways, a round notch in its wall) is a hole with
    ``partial``; one keyway is a ``keyway``, and a full wall neither. (The notch is a partial hole
    of its own: its wall goes more than half round too.)"""
    d = run(Box(40, 40, 5) - cut)
    (h,) = [h for h in d["holes"] if h["diameter"] == pytest.approx(8)]
    assert [x["diameter"] for x in d["holes"] if x is not h] == [pytest.approx(x) for x in others]
    assert (h["diameter"], h["through"], h["partial"]) == (pytest.approx(8), True, partial)
    assert h["keyway"] == (None if keyway is None else {"width": pytest.approx(keyway[0]),
                                                        "depth": pytest.approx(keyway[1])})
    assert d["fillets"] == []
    text = table.render_text("features", {"ok": True, "features": R.features_reply(d, "p")})
    assert ("d=8 partial (open on one side)" in text) is partial, text


def _boss_on_plate():
    return (Box(60, 60, 5, align=(Align.CENTER, Align.CENTER, Align.MAX))
            + Cylinder(8, 20, align=(Align.CENTER, Align.CENTER, Align.MIN)))


@pytest.mark.parametrize("make,groove,bosses,holes", [
    (lambda: Cylinder(10, 50) - Pos(0, 0, 10) * Torus(10, 1.5),
     ("round", 17, 3, 1.5, 10, False), [], []),                            # a round belt's groove
    (lambda: Cylinder(10, 40) - (Cylinder(10.5, 3) - Cylinder(8.5, 3)) - Torus(8.5, 1.5),
     ("round", 14, 3, 3, 0, False), [], []),                               # U: walls and a round bottom
    (lambda: Cylinder(20, 30) - Cylinder(10, 30) - Torus(10, 1.5),
     ("round", 23, 3, 1.5, 0, True), [], [20]),                            # in a bore: one hole
    (lambda: _boss_on_plate() - Pos(0, 0, 15) * Torus(8, 1),
     ("round", 14, 2, 1, 15, False), [(16, 20)], []),                      # on a boss: one boss
    (lambda: _boss_on_plate() - Pos(0, 0, 15) * (Cylinder(9, 1.2) - Cylinder(7.4, 1.2)),
     ("flat", 14.8, 1.2, 0.6, 15, False), [(16, 20)], []),
    (lambda: _revolved((10, -15), (20, -15), (20, 15), (10, 15), (10, 3), (13, 0), (10, -3)),
     ("v", 26, 6, 3, 0, True), [], [20]),                                  # a V in a bore: one hole
], ids=["shaft", "u", "bore", "boss_round", "boss_flat", "bore_v"])
def test_round_bottomed_grooves_and_grooved_shafts_bosses_and_bores(make, groove, bosses, holes):
    """A round-bottomed groove (a concave torus) read as a concave fillet, and cut its shaft in two
    "bosses" either side (a bore in two holes, a boss to the part above it). A flat groove on a boss
    was not listed (its bottom was the boss'), nor a V in a bore (its flanks were the hole's). Now:
    one groove, and the shaft, bore or boss whole."""
    d = run(make())
    (g,) = d["grooves"]
    profile, dia, width, depth, z, internal = groove
    assert (g["profile"], g["diameter"], g["width"], g["depth"], g["center"][2], g["internal"]) == (
        profile, pytest.approx(dia), pytest.approx(width), pytest.approx(depth), pytest.approx(z, abs=1e-6), internal)
    assert [(b["diameter"], b["height"]) for b in d["bosses"]] == [(pytest.approx(a), pytest.approx(h))
                                                                   for a, h in bosses]
    assert [(h["diameter"], h["through"]) for h in d["holes"]] == [(pytest.approx(x), True) for x in holes]
    assert d["fillets"] == [] and d["chamfers"] == []
    out = R.features_reply(d, "s")
    R.check(out)
    text = table.render_text("features", {"ok": True, "features": out})
    assert f"groove: {'round-bottomed' if profile == 'round' else profile} d={dia:g} width {width:g}" in text, text


def test_a_pockets_half_round_end_is_not_an_open_slot():
    """A D-shaped pocket (round at one end, square at the other): the half cylinder's walls end on
    material, so it is not a slot running out of the part. It is a pocket with one curved wall
    (its round end was a fillet before curved walls were read)."""
    with BuildPart() as p:
        Box(60, 40, 10)
        with BuildSketch(Plane.XY.offset(5)):
            with Locations((-10, 0)):
                Circle(5)
                Rectangle(20, 10, align=(Align.MIN, Align.CENTER))
        extrude(amount=-4, mode=Mode.SUBTRACT)
    d = run(p.part)
    assert d["slots"] == d["fillets"] == [], d
    (pk,) = d["pockets"]
    assert (pk["sides"], pk["curved"], pk["shape"], pk["length"], pk["width"], pk["depth"]) == (
        4, 1, "other", pytest.approx(25), pytest.approx(10), pytest.approx(4))
    assert near(pk["center"], (-2.5, 0, 5), 1e-6)


@pytest.mark.parametrize("depth,text", [(10, "slots: 1 x length 26 width 6 through -Z at (0, 0, 5)"),
                                        (4, "slots: 1 x length 26 width 6 depth 4 -Z at (0, 0, 5)")])
def test_slot_reply_text_and_hostile_slot_fields(depth, text):
    out = R.features_reply(run(slotted(depth, 1)), "s")
    R.check(out)
    assert text in table.render_text("features", {"ok": True, "features": out})
    for key, value in (("through", 1), ("depth", -1.0), ("depth", "4"), ("open_end", "yes"), ("open_end", None)):
        raw = run(slotted(depth, 1))
        raw["slots"][0][key] = value
        with pytest.raises(ReplyRefused, match=rf"slots\[0\].{key}"):
            R.features_reply(raw, "s")


def test_bosses_are_one_line_with_their_pattern():
    """Four corner bosses with screw holes: one line for the bosses, naming their grid, as holes
    get (it was a line per boss and a separate pattern line)."""
    from build123d import Align
    mn = (Align.CENTER, Align.CENTER, Align.MIN)
    with BuildPart() as p:
        Box(80, 60, 2, align=mn)
        with Locations((0, 0, 2)):
            with GridLocations(64, 44, 2, 2):
                Cylinder(4, 20, align=mn)
        with Locations((0, 0, 22)):
            with GridLocations(64, 44, 2, 2):
                Hole(1.25, depth=12)
    out = R.features_reply(run(p.part), "tray")
    text = table.render_text("features", {"ok": True, "features": out})
    assert "bosses: 4 x d=8 height 20 +Z on a 2x2 grid pitch 64 x 44 at (-32, -22, 2), " in text, text
    assert "holes: 4 x blind depth 12 d=2.5 -Z on a 2x2 grid pitch 64 x 44 at (-32, -22, 22), " in text, text
    assert "pattern" not in text and len(text.splitlines()) == 3, text


def test_hostile_lists_are_capped_and_unknown_keys_dropped():
    raw = run(plate())
    raw["holes"] = raw["holes"][:1] * 5000
    raw["holes"][0] = dict(raw["holes"][0], evil="\u202e")
    raw["patterns"] = []
    raw["extra"] = "\x1b]0;x\x07"
    out = R.features_reply(raw, "plate\x1b[2J")
    assert len(out["holes"]) == R.FEATURES_LIST_CAP and out["truncated"] == {"holes": 5000}
    assert "evil" not in out["holes"][0] and "extra" not in out and "\x1b" not in out["name"]
    R.check(out)


def test_output_schema_is_listed_only_for_features():
    from launcher.mcp.server import list_tools
    with_schema = {t.name: t.output_schema for t in list_tools() if t.output_schema}
    assert list(with_schema) == ["features"]
    assert set(with_schema["features"]["required"]) >= set(features.KINDS)


@pytest.mark.parametrize("make", [lambda: tilted(), lambda: tube(), lambda: slotted(4, 1), lambda: hub(start=15.0),
                                  lambda: flange_slots(), grooved_shaft],
                         ids=["tilted", "tube", "slot", "hub", "open_slots", "groove"])
def test_imported_step_gives_the_same_features(make, tmp_path):
    """Tilted holes, a tube's cross holes, a chamfered blind slot, a hub's radial holes and slots
    open at one end read back from STEP: the same answer, number for number, as the part they were written from."""
    part = make()
    path = tmp_path / "part.step"
    export_step(part, str(path))
    assert run(import_step(str(path))) == run(part)


def test_a_tapered_cup_and_a_point_are_not_chamfers():
    """A cup revolved with a tapered wall read 'chamfers: 1 x 7.44813' (build123d's tea_cup
    example); a taper whose slant is longer than its radius is not a chamfer, nor is a cone point,
    while a 1 mm chamfer on a pin's end is."""
    from build123d import Cone
    cup = Cone(30, 40, 60) - Pos(0, 0, 3) * Cone(27, 37, 60)
    assert run(cup)["chamfers"] == []
    point = Cylinder(4, 20) + Pos(0, 0, 10) * Cone(4, 0, 8, align=(Align.CENTER, Align.CENTER, Align.MIN))
    assert run(point)["chamfers"] == []
    pin = Cylinder(4, 20)
    pin = chamfer(pin.edges().group_by(Axis.Z)[-1], 1)
    assert [(c["size"], c["count"]) for c in run(pin)["chamfers"]] == [(pytest.approx(1), 1)]


def test_the_walls_of_polygonal_holes_are_not_chamfers():
    """A plate with hexagonal holes (build123d's fast_grid_holes example, smaller): each wall's
    normal lies between its neighbours', but they meet at concave corners, so none is a chamfer
    (84 of 3 750 were, where float noise made one wall's area smaller than its neighbour's)."""
    from build123d import Face, HexLocations, RegularPolygon
    grid = extrude(Face(Rectangle(120, 120).wire(),
                        HexLocations(10, 5, 5) * RegularPolygon(9, 6, major_radius=True).wire()), 1)
    assert run(grid)["chamfers"] == []


def test_a_pulleys_v_groove_is_not_two_chamfers_but_a_shaft_chamfer_is():
    """A V-groove's two flanks are concave cones meeting each other: they were listed as
    "chamfers: 2 x 4 x 3". A chamfer on the rim stays a chamfer."""
    from build123d import BuildLine, Polyline, make_face, revolve
    with BuildPart() as pul:
        with BuildSketch(Plane.XZ):
            with BuildLine():
                Polyline((4, 0), (30, 0), (30, 3), (26, 6), (30, 9), (30, 12), (4, 12), close=True)
            make_face()
        revolve(axis=Axis.Z)
    assert run(pul.part)["chamfers"] == []
    rimmed = chamfer(pul.part.edges().filter_by(GeomType.CIRCLE).sort_by(Axis.Z)[-1], 1)
    d = run(rimmed)
    assert [(g["size"], g["size2"], g["count"]) for g in d["chamfers"]] == [(pytest.approx(1.0), None, 1)], d


@pytest.mark.parametrize("turn", [(0, 0, 0), (30, 20, 0)], ids=["flat", "tilted"])
def test_rows_and_grids_turned_in_their_plane_are_found(turn):
    """Holes in a row at 45 degrees to the part's axes, and a 3x2 grid turned by 30 degrees: found
    along their own directions (the part's axes were the only ones tried), also on a tilted part."""
    from build123d import Rot
    with BuildPart() as p:
        Box(120, 80, 6)
        with Locations(Plane.XY.offset(3)):
            with Locations(Location((-30, 0, 0), (0, 0, 45))):
                with GridLocations(10, 10, 4, 1):
                    Hole(1)
            with Locations(Location((30, 0, 0), (0, 0, 30))):
                with GridLocations(12, 8, 3, 2):
                    Hole(2)
    d = run(Rot(*turn) * p.part)
    got = sorted((x["type"], x["count"], round(x["pitch"], 4) if x["type"] == "linear" else
                  tuple(sorted(round(q, 4) for q in x["pitch"]))) for x in d["patterns"])
    assert got == [("grid", 6, (8.0, 12.0)), ("linear", 4, 10.0)], d["patterns"]


# ------------------------------------------------------------------ pockets
def pocket_plate():
    """A 120x80x10 plate (z from -5 to 5): a 20x30 window at (-35, 0), a 30x16 pocket with r=3
    corners at (0, 15), a hex nut trap 5.5 across flats with a d=3.4 hole through its floor at (30,
    -20), an 8x8 square pocket at (0, -20); the pockets 4 deep."""
    from build123d import RectangleRounded, RegularPolygon
    with BuildPart() as p:
        Box(120, 80, 10)
        with Locations((-35, 0)):
            Box(20, 30, 10, mode=Mode.SUBTRACT)
        with BuildSketch(Plane.XY.offset(5)):
            with Locations((0, 15)):
                RectangleRounded(30, 16, 3)
            with Locations((30, -20)):
                RegularPolygon(5.5 / 3 ** 0.5, 6)
            with Locations((0, -20)):
                Rectangle(8, 8)
        extrude(amount=-4, mode=Mode.SUBTRACT)
        with Locations((30, -20)):
            Hole(1.7)
    return p.part


POCKETS = {  # centre (x, y): width, length, direction, sides, shape, corner radius, depth (None: through)
    (-35, 0): (20, 30, (0, 1, 0), 4, "rectangle", None, None),
    (0, 15): (16, 30, (1, 0, 0), 4, "rectangle", 3, 4),
    (30, -20): (5.5, 11 / 3 ** 0.5, (1, 0, 0), 6, "regular", None, 4),
    (0, -20): (8, 8, (1, 0, 0), 4, "rectangle", None, 4),
}


@pytest.mark.parametrize("step", [False, True], ids=["built", "imported_step"])
def test_pockets_windows_and_a_nut_trap(step, tmp_path):
    """Straight walls all round a void were not listed at all (a window, a hex nut trap), or only
    as "fillets: 4 x r=3 (concave)" (a milled pocket's corners). Each is now a pocket: entry centre,
    axis, width across, length, sides, shape, corner radius, depth or through; the nut trap's floor
    has the bolt's hole through it and is still a floor (4 deep), and the hole stays a hole."""
    part = pocket_plate()
    if step:
        export_step(part, str(tmp_path / "p.step"))
        part = import_step(str(tmp_path / "p.step"))
    d = run(part)
    assert len(d["pockets"]) == len(POCKETS) and d["fillets"] == [] and d["chamfers"] == []
    for (x, y), (w, l, direction, sides, shape, r, depth) in POCKETS.items():
        (p,) = [p for p in d["pockets"] if near(p["center"][:2], (x, y), 1e-6)]
        assert near(p["center"], (x, y, 5), 1e-6) and near(p["axis"], (0, 0, -1), 1e-9), p
        assert (p["width"], p["length"], p["sides"], p["shape"], p["corner_radius"], p["depth"], p["through"]) == (
            pytest.approx(w), pytest.approx(l), sides, shape, None if r is None else pytest.approx(r),
            None if depth is None else pytest.approx(depth), depth is None), p
        assert near(p["direction"], direction, 1e-9)
    (h,) = d["holes"]
    assert (h["diameter"], h["through"]) == (pytest.approx(3.4), True) and near(h["center"], (30, -20, 1), 1e-6)
    out = R.features_reply(d, "plate")
    R.check(out)
    text = table.render_text("features", {"ok": True, "features": out})
    for line in ("pockets: 1 x hex 5.5 across flats depth 4 -Z at (30, -20, 5)",
                 "pockets: 1 x rectangle 30 x 20 along +Y through -Z at (-35, 0, 5)",
                 "pockets: 1 x rectangle 30 x 16 along +X r=3 depth 4 -Z at (0, 15, 5)",
                 "pockets: 1 x square 8 depth 4 -Z at (0, -20, 5)"):
        assert line in text, text


def test_a_grid_of_windows_a_hex_socket_and_a_box_s_inside():
    from build123d import RegularPolygon
    plate = Box(100, 60, 4)
    for x in (-30, 0, 30):
        for y in (-15, 15):
            plate -= Pos(x, y, 0) * Box(10, 6, 4)
    d = run(plate)
    assert len(d["pockets"]) == 6 and all(p["through"] and p["shape"] == "rectangle" for p in d["pockets"])
    (g,) = d["patterns"]
    assert (g["type"], g["of"], g["counts"], g["pitch"]) == ("grid", "pockets", [3, 2], [30, 30])
    text = table.render_text("features", {"ok": True, "features": R.features_reply(d, "p")})
    assert "pockets: 6 x rectangle 10 x 6 along +X through -Z on a 3x2 grid pitch 30 x 30" in text, text
    with BuildPart() as s:
        Cylinder(5, 5, align=(Align.CENTER, Align.CENTER, Align.MIN))
        with BuildSketch(Plane.XY.offset(5)):
            RegularPolygon(2 / (3 ** 0.5 / 2), 6)
        extrude(amount=-3, mode=Mode.SUBTRACT)
    (p,) = run(s.part)["pockets"]
    assert (p["sides"], p["shape"], p["width"], p["depth"]) == (6, "regular", pytest.approx(4), pytest.approx(3))
    (p,) = run(Box(50, 40, 30) - Pos(0, 0, 2) * Box(46, 36, 28))["pockets"]  # open at the top, floor 2 thick
    assert (p["width"], p["length"], p["depth"]) == (pytest.approx(36), pytest.approx(46), pytest.approx(27))
    assert near(p["center"], (0, 0, 15), 1e-6)


@pytest.mark.parametrize("make", [
    lambda: Box(10, 20, 30),                                                    # a block's sides: convex
    lambda: Box(40, 40, 20) - Box(10, 10, 10),                                   # a closed cavity
    lambda: Box(40, 20, 10) + Pos(-10, 20, 0) * Box(20, 20, 10),                  # an L-shaped part's sides
    lambda: Box(40, 40, 10) + Pos(30, 0, 0) * Box(20, 10, 10),                    # a T-shaped part's sides
    lambda: Box(40, 40, 10) - Pos(0, 0, 2) * Cylinder(5, 6),                      # a round pocket: a hole
], ids=["block", "cavity", "l_part", "t_part", "round"])
def test_not_pockets(make):
    """The outside of a block (convex corners), a closed cavity, the sides of an L- or T-shaped part
    (their walls turn once round, but back: round material, not a void) and a round pocket (a blind
    hole) are not pockets."""
    d = run(make())
    assert d["pockets"] == []


def _l_pocket(r=None, depth=8.0):
    """An 80x60x20 plate (top at z=10) with an L-shaped pocket: x -30..10 by y -20..0 and x -10..10 by
    y -20..20 (centroid (-20/3, -10/3)), ``depth`` deep (20: a window), corners rounded ``r``."""
    from build123d import fillet
    with BuildPart() as p:
        Box(80, 60, 20)
        with BuildSketch(Plane.XY.offset(10)) as sk:
            with Locations((-10, -10)):
                Rectangle(40, 20)
            Rectangle(20, 40)
            if r:
                fillet(sk.vertices(), r)
        extrude(amount=-depth, mode=Mode.SUBTRACT)
    return p.part


@pytest.mark.parametrize("r,depth", [(None, 8.0), (3.0, 8.0), (None, 20.0)], ids=["sharp", "r3", "window"])
def test_l_shaped_pockets(r, depth):
    """An L-shaped pocket (five concave corners and one convex) was not listed at all. It is now a
    pocket of shape L, entered at its outline's centroid, 40 x 40 (its outline's extents), with its
    corner radius (the convex corner's too) and depth, or through; a U-shaped one (two convex
    corners) is "other", entered just inside a wall since its centroid lies in the notch."""
    d = run(_l_pocket(r, depth))
    (p,) = d["pockets"]
    assert (p["shape"], p["sides"], p["width"], p["length"], p["through"]) == (
        "L", 6, pytest.approx(40), pytest.approx(40), depth == 20), p
    assert near(p["center"], (-20 / 3, -10 / 3, 10), 1e-6) and near(p["axis"], (0, 0, -1), 1e-9), p
    assert p["depth"] == (None if depth == 20 else pytest.approx(depth))
    assert p["corner_radius"] == (None if r is None else pytest.approx(r))
    assert d["fillets"] == [] and d["holes"] == [] and d["bosses"] == []
    text = table.render_text("features", {"ok": True, "features": R.features_reply(d, "p")})
    end = "through" if depth == 20 else "depth 8"
    assert f"pockets: 1 x L-shaped 40 x 40{'' if r is None else ' r=3'} {end} -Z at (-6.667, -3.333, 10)" in text, text
    u = Box(80, 60, 20) - Pos(0, 0, 5) * (Box(40, 10, 10) + Pos(-15, 10, 0) * Box(10, 20, 10)
                                          + Pos(15, 10, 0) * Box(10, 20, 10))
    (p,) = run(u)["pockets"]
    assert (p["shape"], p["sides"], p["width"], p["length"], p["depth"]) == (
        "other", 8, pytest.approx(25), pytest.approx(40), pytest.approx(10)), p
    assert -5 < p["center"][1] < 5 and p["center"][2] == pytest.approx(10), p


def test_pocket_and_hole_ends_read_from_the_faces_agree_with_probes(monkeypatch):
    """A hole's or pocket's end is read from the face across it where that face says (a mouth in a
    plane: open; a floor: closed) instead of a point probe (3.4 ms each on a plate of 3 756 faces).
    The answers are the ones the probes give, on every part of this module that has holes or
    pockets, and the faces do answer half the ends."""
    from jail.cad import features_faces, features_find, features_material
    parts = [plate(), pocket_plate(), _hub(), tube(), hub(), boss_part(), tilted(), slotted(4, 1), _l_pocket()]
    said = []
    real_init = features_material.Material.__init__

    def init(self, *a, **kw):
        real_init(self, *a, **kw)
        said.append(self)
    monkeypatch.setattr(features_material.Material, "__init__", init)
    by_faces = [run(p) for p in parts]
    # 31 ends read from faces, 31 probes (bosses, slots, and ends on tilted or curved faces)
    assert sum(m.said for m in said) >= 30 and sum(m.rays + m.classified for m in said) > 0
    monkeypatch.setattr(features_find, "end_open", lambda *a: None)
    assert [run(p) for p in parts] == by_faces
    assert features_faces.end_open is not features_find.end_open


@pytest.mark.parametrize("key,value", [("shape", "\x1b[2Jhex"), ("shape", "l"), ("sides", 1), ("sides", "6"),
                                       ("sides", True), ("corner_radius", -1.0), ("direction", [float("nan"), 0, 0]),
                                       ("width", 1e300), ("through", "yes"), ("depth", "4")])
def test_hostile_pocket_fields_refuse_the_reply(key, value):
    d = run(pocket_plate())
    d["pockets"][0][key] = value
    with pytest.raises(ReplyRefused, match=rf"pockets\[0\].{key}"):
        R.features_reply(d, "plate")
    d = run(pocket_plate())
    d["patterns"] = [{"type": "linear", "of": "pockets", "count": 3, "members": [0, 1, 7], "pitch": 5.0,
                      "direction": [1, 0, 0]}]
    with pytest.raises(ReplyRefused, match=r"patterns\[0\].members\[2\]"):
        R.features_reply(d, "plate")


def _ovals():
    """An 80x60x20 block (z from -10 to 10): ellipses 30 x 16 cut from the top, 5 deep at (-20, 10)
    along X and through at (20, 10) turned 90 degrees (along Y); three 8 x 4, 3 deep, 12 apart along
    X at y = -18; an elliptical boss 10 x 6, 4 high, at (20, -18) is none; a closed elliptical
    cavity inside is none either."""
    from build123d import Ellipse
    part = Box(80, 60, 20)
    part -= Pos(-20, 10, 10) * extrude(Ellipse(15, 8), amount=-5)
    part -= Pos(20, 10, 10) * Rot(0, 0, 90) * extrude(Ellipse(15, 8), amount=-20)
    for x in (-32, -20, -8):
        part -= Pos(x, -18, 10) * extrude(Ellipse(4, 2), amount=-3)
    part += Pos(20, -18, 10) * extrude(Ellipse(5, 3), amount=4)
    return part - Pos(0, -5, -2) * extrude(Ellipse(6, 3), amount=3)


def test_an_ellipse_cut_is_an_oval_pocket_and_a_row_of_them_a_pattern(tmp_path):
    """An elliptical pocket or window read as nothing: an ellipse's wall has no straight edge for the
    pocket finder to walk. A concave wall extruded from an ellipse, all the way round, is a pocket of
    shape "oval" (width and length its diameters, direction its major axis, one side), blind or
    through like a hole; a row of them is a pattern; an elliptical boss and a closed cavity are
    none. The same from a STEP file, and in the text."""
    part = _ovals()
    export_step(part, str(tmp_path / "o.step"))
    for d in (run(part), run(import_step(str(tmp_path / "o.step")))):
        got = sorted((tuple(round(x, 4) for x in p["center"]), p["shape"], p["sides"], p["curved"], p["width"],
                      p["length"], tuple(p["direction"]), p["depth"], p["through"]) for p in d["pockets"])
        assert got == sorted([((-20, 10, 10), "oval", 1, 1, 16, 30, (1, 0, 0), 5, False),
                              ((20, 10, 10), "oval", 1, 1, 16, 30, (0, 1, 0), None, True)]
                             + [((x, -18, 10), "oval", 1, 1, 4, 8, (1, 0, 0), 3, False) for x in (-32, -20, -8)]), got
        assert [(p["of"], p["type"], p["count"]) for p in d["patterns"]] == [("pockets", "linear", 3)], d["patterns"]
        assert d["holes"] == d["slots"] == d["bosses"] == [], d
    text = table.render_text("features", {"ok": True, "features": R.features_reply(run(part), "p")})
    assert "pockets: 1 x oval 30 x 16 along +X depth 5 -Z at (-20, 10, 10)" in text, text
    assert "pockets: 1 x oval 30 x 16 along +Y through -Z at (20, 10, 10)" in text, text
    assert "pockets: 3 x oval 8 x 4 along +X depth 3 -Z on a linear pitch 12" in text, text
    for key, value, where in (("sides", 0, "sides"), ("shape", "ovoid", "shape")):
        bad = run(part)
        bad["pockets"][0][key] = value
        with pytest.raises(ReplyRefused, match=rf"pockets\[0\].{where}"):
            R.features_reply(bad, "p")


def test_an_oval_pocket_reads_past_a_chamfered_mouth_and_a_rounded_floor():
    """An elliptical pocket 6 deep with its mouth chamfered read 5 deep from z = 9, and with its
    floor rounded it read as through (the probe past the walls was still in the pocket): both read
    6 deep from the top (z = 10), as its walls are read past the edge breaks now."""
    from build123d import Ellipse
    part = Box(80, 60, 20) - Pos(0, 0, 10) * extrude(Ellipse(15, 8), amount=-6)
    rims = part.edges().filter_by(GeomType.ELLIPSE).group_by(Axis.Z)
    for cut in (chamfer(rims[-1], 1), fillet(rims[0], 1.5)):
        (p,) = run(cut)["pockets"]
        assert (p["shape"], p["depth"], p["through"], p["center"]) == ("oval", 6, False, [0, 0, 10]), p


def _splines():
    """An 80x60x20 block (z from -10 to 10) with cuts drawn by splines, from the top: a closed
    periodic spline 40.17 x 28.18 (its extents: it bulges past its points), 5 deep at (-10, 5), its
    floor rounded r=1; a window through at (20, -15) of one line 30 long (y = -25) and a spline back
    over (20, 0); a spline boss on the top at (25, 18) and a spline cavity inside are none."""
    from build123d import Line, Spline, make_face
    blob = make_face(Spline((-20, 0), (0, 15), (20, 0), (0, -12), periodic=True))
    part = Box(80, 60, 20) - Pos(-10, 5, 10) * extrude(blob, amount=-5)
    part = fillet(part.edges().filter_by(GeomType.LINE, reverse=True).group_by(Axis.Z)[0], 1)
    window = make_face(Line((-15, -10), (15, -10)) + Spline((15, -10), (0, 15), (-15, -10)))
    part -= Pos(20, -15, 10) * extrude(window, amount=-20)
    part += Pos(25, 18, 10) * extrude(make_face(Spline((-4, 0), (0, 3), (4, 0), (0, -3), periodic=True)), amount=4)
    small = make_face(Spline((-8, 0), (0, 6), (8, 0), (0, -5), periodic=True))
    return part - Pos(-20, -15, -2) * extrude(small, amount=3)


def test_a_spline_cut_is_a_freeform_pocket(tmp_path):
    """A pocket or window drawn with a spline read as nothing: the pocket finder walks planes and
    arcs. Walls all round a void along one direction, one of them a curve's extrusion, are a pocket
    of shape "freeform" (width the narrowest extent, length square to it, sides its walls),
    blind or through like a hole, its depth past a rounded floor; a spline boss and a closed
    cavity are none. The same from a STEP file, and in the text."""
    part = _splines()
    export_step(part, str(tmp_path / "s.step"))
    for d in (run(part), run(import_step(str(tmp_path / "s.step")))):
        got = sorted((p["shape"], p["sides"], p["curved"], p["width"], p["length"], tuple(p["direction"]), p["depth"],
                      p["through"], tuple(p["axis"])) for p in d["pockets"])
        assert got == [("freeform", 1, 1, pytest.approx(28.18, abs=0.01), pytest.approx(40.17, abs=0.01), (1, 0, 0),
                        5, False, (0, 0, -1)),
                       ("freeform", 2, 1, 25, 30, (1, 0, 0), None, True, (0, 0, -1))], got
        blind = next(p for p in d["pockets"] if not p["through"])
        assert near(blind["center"], (-10, 5, 10), 2) and blind["center"][2] == 10, blind
        window = next(p for p in d["pockets"] if p["through"])
        assert near(window["center"], (20, -12.5, 10), 1e-3), window
        assert d["holes"] == d["slots"] == [], d
    text = table.render_text("features", {"ok": True, "features": R.features_reply(run(part), "p")})
    assert "pockets: 1 x freeform 40.1675 x 28.1803 along +X depth 5 -Z at (-10.08, 6.414, 10)" in text, text
    assert "pockets: 1 x freeform 30 x 25 along +X through -Z at (20, -12.5, 10)" in text, text


def test_freeform_pockets_turned_oblique_and_in_a_row():
    """A spline cut along X into a block's side reads along X; an oblong turned 30 degrees reads
    along its length (60 x 16.42), not the part's X; three alike in a row are a linear pattern."""
    from build123d import Spline, extrude, make_face
    blob = make_face(Spline((-20, 0), (0, 15), (20, 0), (0, -12), periodic=True))
    side = Box(20, 80, 60) - Pos(10, 0, 0) * Rot(0, 90, 0) * extrude(blob, amount=-6)
    (p,) = run(side)["pockets"]
    assert (p["shape"], p["depth"], tuple(p["axis"]), tuple(p["direction"])) == ("freeform", 6, (-1, 0, 0), (0, 0, 1))
    oblong = make_face(Spline((-30, 0), (0, 8), (30, 0), (0, -8), (-30, 0)))
    turned = Box(100, 100, 10) - Pos(0, 0, 5) * Rot(0, 0, 30) * extrude(oblong, amount=-4)
    (p,) = run(turned)["pockets"]
    assert (p["length"], p["width"]) == (pytest.approx(60, abs=0.01), pytest.approx(16.4224, abs=1e-3)), p
    assert near(p["direction"], (math.cos(math.radians(30)), math.sin(math.radians(30)), 0), 1e-3), p
    row = Box(120, 60, 10)
    small = make_face(Spline((-10, 0), (0, 8), (10, 0), (0, -6), periodic=True))
    for x in (-35, 0, 35):
        row -= Pos(x, 0, 5) * extrude(small, amount=-3)
    d = run(row)
    assert [p["shape"] for p in d["pockets"]] == ["freeform"] * 3, d["pockets"]
    assert [(p["of"], p["type"], p["count"], p["pitch"]) for p in d["patterns"]] == [("pockets", "linear", 3, 35)]


def test_a_freeform_pocket_round_a_post_has_an_island():
    """A spline pocket 5 deep round a post 6 x 6 standing on its floor: the island is listed, as a
    pocket's; the round post is also a boss."""
    from build123d import Spline, make_face
    blob = make_face(Spline((-30, 0), (0, 15), (30, 0), (0, -12), periodic=True))
    part = Box(80, 60, 10) - Pos(0, 0, 5) * extrude(blob, amount=-5) + Cylinder(3, 10)
    d = run(part)
    (p,) = d["pockets"]
    assert (p["shape"], p["depth"], p["island"]) == ("freeform", 5, {"count": 1, "width": 6, "length": 6}), p
    assert [(b["diameter"], b["height"]) for b in d["bosses"]] == [(6, 5)], d["bosses"]


def test_a_freeform_pocket_in_a_curved_face_reads_its_ends_from_the_faces_there():
    """A spline pocket cut from a block's curved top (a cylinder r=100, its crown at z = 15) down to
    a floor at z = 10: entered where its centre line meets the crown, 5 deep there, and both ends
    read from the faces across them (the crown faces on, the floor back), with no probe: a point
    probe on a part with a spline face asks OCCT's solid classifier (67 ms a probe on build123d's
    maker coin)."""
    from build123d import Spline, make_face
    from jail.cad.features_material import Material
    blob = make_face(Spline((-15, 0), (0, 10), (15, 0), (0, -8), periodic=True))
    body = Box(60, 40, 30) & Pos(0, 0, -85) * Rot(0, 90, 0) * Cylinder(100, 60)
    part = body - Pos(0, 0, 15) * extrude(blob, amount=-5)
    mat = Material(part.wrapped)
    (p,) = features.find(part.wrapped, mat=mat)["pockets"]
    crown = -85 + math.sqrt(100 ** 2 - p["center"][1] ** 2)
    assert p["shape"] == "freeform" and p["depth"] == pytest.approx(crown - 10, abs=1e-6), p
    assert p["center"][2] == pytest.approx(crown, abs=1e-6) and near(p["axis"], (0, 0, -1), 1e-9), p
    assert (mat.rays, mat.classified) == (0, 0)


def test_the_outline_inside_test_survives_a_ray_through_a_vertex_its_samples_miss():
    """build123d's playing-card box lost its spade window: the point off its stem's flat bottom lay
    on the axis through the spade's tip, where the two sides' samples missed each other by a
    rounding, and the one ray of the inside test passed between them (no crossing: outside, so
    material inside, so no pocket). A diamond round (0, 0) with its right vertex split that way:
    inside, as three skew rays say."""
    import numpy as np
    from jail.cad.features_faces import inside_outline
    e = 1e-15
    segs = np.array([(0, -5, 5, -e), (5, e, 0, 5), (0, 5, -5, 0), (-5, 0, 0, -5)], dtype=float)
    assert inside_outline(segs, 0.0, 0.0) and not inside_outline(segs, 6.0, 0.0)
    assert not inside_outline(segs, 0.0, 5.5)


def test_a_freeform_outline_of_many_walls_is_read_once():
    """A pocket drawn with 70 splines (a gear-like rim, one wall each; the pocket finder stops at 64
    walls) is one freeform pocket of 70 sides; the part extruded from the same outline has none."""
    from build123d import Spline, Wire, make_face
    n, pts = 70, []
    for i in range(n + 1):
        a = 2 * math.pi * i / n
        pts.append((30 * math.cos(a), 30 * math.sin(a)))
    mids = [(34 * math.cos(2 * math.pi * (i + 0.5) / n), 34 * math.sin(2 * math.pi * (i + 0.5) / n))
            for i in range(n)]
    outline = make_face(Wire([Spline(pts[i], mids[i], pts[i + 1] if i + 1 < n else pts[0]) for i in range(n)]))
    (p,) = run(Box(90, 90, 10) - Pos(0, 0, 5) * extrude(outline, amount=-4))["pockets"]
    assert (p["shape"], p["sides"], p["curved"], p["depth"]) == ("freeform", n, n, 4), p
    assert run(extrude(outline, amount=10))["pockets"] == []


def test_an_all_nurbs_part_reads_as_its_analytic_self(tmp_path):
    """A STEP file that writes every face as a B-spline (other CAD systems' exports; here OCCT's NURBS
    conversion, then a STEP round trip) read its spline pockets and round holes as nothing: walls
    extruded along one direction are now also B-spline surfaces of degree 1 with two rows of poles
    one step apart, and such a wall drawn round a circle is a hole. The plate below, its spline cuts
    and its holes (d=8 through, d=6 2 deep) read as the analytic part does, turned too."""
    from OCP.BRepBuilderAPI import BRepBuilderAPI_NurbsConvert
    from build123d import Compound
    part = _splines() - Pos(-34, -24, 10) * Cylinder(4, 40) - Pos(34, 24, 10) * Cylinder(3, 4)

    def reading(d):
        return (sorted((p["shape"], round(p["width"], 4), round(p["length"], 4), p["depth"], p["through"])
                       for p in d["pockets"]),
                sorted((h["diameter"], h["depth"], h["through"], tuple(round(x, 4) for x in h["center"]))
                       for h in d["holes"]))

    want = reading(run(part))
    assert len(want[0]) == 2 and [h[:3] for h in want[1]] == [(6, 2, False), (8, None, True)], want
    nurbs = Compound(BRepBuilderAPI_NurbsConvert(part.wrapped, True).Shape())
    export_step(nurbs, str(tmp_path / "n.step"))
    for shape in (nurbs, import_step(str(tmp_path / "n.step"))):
        assert reading(run(shape)) == want
    turned = Pos(100, -50, 30) * Rot(10, 20, 30) * part
    got = reading(run(Compound(BRepBuilderAPI_NurbsConvert(turned.wrapped, True).Shape())))
    assert got[1] == reading(run(turned))[1] and [p[3:] for p in got[0]] == [p[3:] for p in want[0]], got


def test_a_spline_profiled_part_is_no_pocket():
    """The outside of a part extruded from a spline goes round material, not a void: no pocket."""
    from build123d import Spline, extrude, make_face
    cam = extrude(make_face(Spline((-20, 0), (0, 15), (20, 0), (0, -12), periodic=True)), amount=8)
    assert run(cam)["pockets"] == []


def test_a_square_ended_keyway_in_a_shaft_is_a_pocket_entered_at_the_shaft_s_top():
    """A keyway milled square-ended into a shaft (d=20) is a pocket 30 x 6 whose centre and depth
    start where its centre line meets the shaft (y = 10), not at its walls' lower corners (9.54)."""
    shaft = Cylinder(10, 60) - Pos(0, 10, 0) * Box(6, 4, 30, align=(Align.CENTER, Align.MAX, Align.CENTER))
    (p,) = run(shaft)["pockets"]
    assert (p["width"], p["length"], p["depth"], p["shape"]) == (
        pytest.approx(6), pytest.approx(30), pytest.approx(4), "rectangle")
    assert near(p["center"], (0, 10, 0), 1e-6) and near(p["axis"], (0, -1, 0), 1e-9) and near(p["direction"], (0, 0, 1))


def test_bosses_up_and_bosses_down_are_two_patterns():
    """A plate with a 2x3 grid of bosses on its top and the same grid on its bottom (a tube sheet's tube
    ends): one group of twelve, each position twice, was no pattern. Members of a pattern now point the
    same way: two grids, one line each."""
    part = Box(60, 40, 4)
    for x in (-20, 0, 20):
        for y in (-10, 10):
            part += Pos(x, y, 2) * Cylinder(3, 5, align=(Align.CENTER, Align.CENTER, Align.MIN))
            part += Pos(x, y, -2) * Cylinder(3, 5, align=(Align.CENTER, Align.CENTER, Align.MAX))
    d = run(part)
    assert len(d["bosses"]) == 12
    assert sorted((p["type"], p["count"], round(d["bosses"][p["members"][0]]["axis"][2])) for p in d["patterns"]) == [
        ("grid", 6, -1), ("grid", 6, 1)], d["patterns"]
    text = table.render_text("features", {"ok": True, "features": R.features_reply(d, "p")})
    assert "bosses: 6 x d=6 height 5 +Z on a 3x2 grid pitch 20 x 20" in text, text
    assert "bosses: 6 x d=6 height 5 -Z on a 3x2 grid pitch 20 x 20" in text, text


def test_staggered_rows_of_holes_and_of_hexagonal_windows():
    """A honeycomb's centres (build123d's HexLocations: every other row shifted by half a pitch)
    were no pattern: not a grid. They are now staggered rows, for holes and for pockets alike; a
    round bundle (rows of different lengths) is not."""
    from build123d import Face, HexLocations, RegularPolygon
    with BuildPart() as p:
        Box(100, 60, 5)
        with HexLocations(6, 4, 3):
            Hole(2)
    d = run(p.part)
    (g,) = d["patterns"]
    assert (g["type"], g["of"], g["count"], g["counts"]) == ("staggered", "holes", 12, [3, 4])  # 4 rows of 3
    assert g["pitch"] == [pytest.approx(12), pytest.approx(6 * 3 ** 0.5)]
    assert sorted(g["members"]) == list(range(12)) and near(g["directions"][0], (0, 1, 0), 1e-9)
    out = R.features_reply(d, "p")
    R.check(out)
    text = table.render_text("features", {"ok": True, "features": out})
    assert "holes: 12 x through d=4 -Z on a staggered 3x4 grid pitch 12 x 10.3923, rows along +Y at" in text, text
    grid = extrude(Face(Rectangle(120, 120).wire(),
                        HexLocations(10, 5, 5) * RegularPolygon(9, 6, major_radius=True).wire()), 1)
    (g,) = run(grid)["patterns"]
    assert (g["type"], g["of"], g["count"]) == ("staggered", "pockets", 25)
    bundle = Box(100, 100, 4)  # rows of 2, 3, 4, 3 and 2 tubes: a round bundle, not a block
    for row, n in enumerate((2, 3, 4, 3, 2)):
        for i in range(n):
            bundle -= Pos((i - (n - 1) / 2) * 10, (row - 2) * 8.66, 0) * Cylinder(2, 4)
    db = run(bundle)
    (g,) = db["patterns"]
    assert (g["type"], g["count"], g["counts"], g["pitch"]) == ("bundle", 14, [4, 5], [pytest.approx(10),
                                                                                     pytest.approx(8.66)])
    assert sorted(g["members"]) == list(range(14))
    text = table.render_text("features", {"ok": True, "features": R.features_reply(db, "b")})
    assert ("holes: 14 x through d=4 -Z on a staggered bundle of 5 rows (up to 4 a row) pitch 10 x 8.66, rows "
            "along +X at") in text, text
    for gap in ((2, 1), (2, 3)):  # a tube left out inside a row, or a row off the lattice: no bundle
        row, i = gap
        part = Box(100, 100, 4)
        for r, n in enumerate((2, 3, 4, 3, 2)):
            for k in range(n):
                if (r, k) != (row, i):
                    part -= Pos((k - (n - 1) / 2) * 10 + (2.5 if r == 2 and gap == (2, 3) else 0),
                                (r - 2) * 8.66, 0) * Cylinder(2, 4)
        assert "bundle" not in [p["type"] for p in run(part)["patterns"]], gap
    bad = json.loads(json.dumps(d))
    bad["patterns"][0]["counts"] = [4, 3, 1]
    with pytest.raises(ReplyRefused, match=r"patterns\[0\]"):
        R.features_reply(bad, "p")
    bad = json.loads(json.dumps(db))
    bad["patterns"][0]["pitch"] = [10, "8.66"]
    with pytest.raises(ReplyRefused, match=r"patterns\[0\].pitch\[1\]"):
        R.features_reply(bad, "b")


def test_a_pattern_of_more_members_than_the_list_names_only_listed_ones():
    """build123d's fast_grid_holes (625 hexagonal windows, staggered rows along Y) made the whole
    reply refused: its pattern named, among its first 100 members, windows past the 100 listed. A
    pattern now names the listed members only, in its own order; its count stays the whole."""
    from build123d import Face, HexLocations, RegularPolygon
    grid = extrude(Face(Rectangle(500, 600).wire(),
                        HexLocations(10, 25, 25) * RegularPolygon(9, 6, major_radius=True).wire()), 1)
    d = run(grid)
    (g,) = d["patterns"]
    assert (g["type"], g["count"], len(d["pockets"])) == ("staggered", 625, 100)
    assert sorted(g["members"]) == list(range(100))
    out = R.features_reply(d, "grid")
    assert out["truncated"] == {"pockets": 625}


def _made(make, tmp_path, step_of):
    """``make()``, or for ``make == "step"`` the part ``step_of()`` through a STEP file and back."""
    if make != "step":
        return make()
    export_step(step_of(), str(tmp_path / "part.step"))
    return import_step(str(tmp_path / "part.step"))


def _flange(floor_fillet=0.0, rim_chamfer=0.0, bottom=False, rim_round=0.0):
    """A flange (d=100, 12 thick, z from -6 to 6) with a d=30 bore, six d=8 bolt holes on r=40 and
    an O-ring face groove (d=48 to 60, 3 deep) in its top face, or its bottom one."""
    from build123d import GeomType, SortBy
    with BuildPart() as f:
        Cylinder(50, 12)
        Hole(15)
        with PolarLocations(40, 6):
            Hole(4)
        with BuildSketch(Plane.XY.offset(-6 if bottom else 6)):
            Circle(30)
            Circle(24, mode=Mode.SUBTRACT)
        extrude(amount=3 if bottom else -3, mode=Mode.SUBTRACT)
        rings = f.edges(Select.LAST).filter_by(GeomType.CIRCLE).group_by(Axis.Z)
        if floor_fillet:
            fillet(rings[-1 if bottom else 0], floor_fillet)
        if rim_chamfer:
            chamfer(rings[0 if bottom else -1].sort_by(SortBy.RADIUS)[-1], rim_chamfer)
        if rim_round:
            fillet(rings[0 if bottom else -1], rim_round)
    return f.part


@pytest.mark.parametrize("make,want", [
    (_flange, (60, 6, 3, (0, 0, 6), (0, 0, -1))),
    (lambda: _flange(floor_fillet=0.5), (60, 6, 3, (0, 0, 6), (0, 0, -1))),
    (lambda: _flange(rim_chamfer=0.5), (60, 6, 3, (0, 0, 6), (0, 0, -1))),
    (lambda: _flange(floor_fillet=0.5, rim_round=0.5), (60, 6, 3, (0, 0, 6), (0, 0, -1))),
    (lambda: _flange(bottom=True), (60, 6, 3, (0, 0, -6), (0, 0, 1))),
    ("step", (60, 6, 3, (0, 0, 6), (0, 0, -1))),
    (lambda: Cylinder(20, 30) - Pos(0, 0, 5) * Cylinder(18, 20) + Pos(0, 0, 5) * Cylinder(3, 20),
     (36, 15, 20, (0, 0, 15), (0, 0, -1))),                                     # a cup with a post
    (lambda: Box(40, 40, 10) - Cylinder(8, 10) + Cylinder(4, 30), None),        # a pin through a bore
], ids=["flange", "floor_fillets", "rim_chamfer", "rounded_rims", "bottom_face", "imported_step", "cup_post",
        "pin_through"])
def test_a_face_groove_is_a_groove_not_a_blind_hole(make, want, tmp_path):
    """An O-ring groove in a flange's face read "holes: 1 x blind depth 3 d=60": its outer wall is a
    concave full cylinder with material beyond its floor. A ring between a concave wall and a
    convex one on the same axis, empty, from a floor to open air, is a face groove: outer diameter,
    radial width, depth from the face (past a floor fillet or a rim chamfer), centre at the mouth,
    axis into the material. A pin standing through a bore is none (the ring is open at both ends)."""
    d = run(_made(make, tmp_path, lambda: _flange(floor_fillet=0.5)))
    if want is None:
        assert d["grooves"] == [] and [h["diameter"] for h in d["holes"]] == [pytest.approx(16)]
        return
    dia, width, depth, center, axis = want
    (g,) = d["grooves"]
    assert (g["diameter"], g["width"], g["depth"], g["face"], g["internal"], g["profile"]) == (
        pytest.approx(dia), pytest.approx(width), pytest.approx(depth), True, False, "flat")
    assert near(g["center"], center, 1e-6) and near(g["axis"], axis, 1e-9)
    assert all(h["diameter"] < 40 for h in d["holes"]) and d["bosses"] == []
    out = R.features_reply(d, "f")
    R.check(out)
    text = table.render_text("features", {"ok": True, "features": out})
    if make is _flange:
        assert "groove: face d=60 (inner 48) width 6 depth 3 -Z at (0, 0, 6)" in text, text
        assert "holes: 6 x through d=8 -Z on a bolt circle r=40" in text, text
    for key, value in (("face", "yes"), ("face", None), ("axis", [0, 0])):
        bad = json.loads(json.dumps(d))
        bad["grooves"][0][key] = value
        with pytest.raises(ReplyRefused, match=rf"grooves\[0\].{key}"):
            R.features_reply(bad, "f")


def _arc_plate(n=3, sweep=40.0, depth=None):
    """A disc (r=50, 8 thick, z from -4 to 4) with ``n`` arc slots 6 wide on r=30, each ``sweep``
    degrees, turned 360/n apart from 0; through, or ``depth`` deep."""
    from build123d import Edge, SlotArc
    with BuildPart() as p:
        Cylinder(50, 8)
        for i in range(n):
            arc = Edge.make_circle(30, start_angle=i * 360 / n, end_angle=i * 360 / n + sweep)
            with BuildSketch(Plane.XY.offset(4)):
                SlotArc(arc=arc, height=6)
            extrude(amount=-(depth or 8), mode=Mode.SUBTRACT)
    return p.part


@pytest.mark.parametrize("make,sweep,depth,pattern", [
    (lambda: _arc_plate(), 40, None, "bolt_circle"),
    (lambda: _arc_plate(1, 240), 240, None, None),                         # past half a turn
    (lambda: _arc_plate(2, 90, depth=4), 90, 4, None),
    ("step", 40, None, "bolt_circle"),
], ids=["three_on_a_circle", "wide_sweep", "blind", "imported_step"])
def test_arc_slots_are_slots_with_their_arc(make, sweep, depth, pattern, tmp_path):
    """A kidney slot read "fillets: 1 x r=27 (convex rounds)", "fillets: 1 x r=33 (concave)" and a
    slot 36 long (its chord); one swept past half a turn read as a partial hole d=66. Its walls
    between the round ends are coaxial cylinders: the slot carries ``arc`` (centre, centre-line
    radius, sweep), its centre is its middle on that arc, and slots turned round a circle make a
    bolt circle."""
    d = run(_made(make, tmp_path, _arc_plate))
    assert d["holes"] == d["fillets"] == d["bosses"] == [] and d["slots"]
    for s in d["slots"]:
        a = s["arc"]
        assert (s["width"], s["through"], s["depth"], a["radius"], a["sweep"]) == (
            pytest.approx(6), depth is None, None if depth is None else pytest.approx(depth), pytest.approx(30),
            pytest.approx(sweep))
        assert near(a["center"], (0, 0, 4), 1e-6) and near(s["axis"], (0, 0, -1), 1e-9)
        assert math.hypot(*s["center"][:2]) == pytest.approx(30) and s["center"][2] == pytest.approx(4)
    if sweep == 240:
        assert near(d["slots"][0]["center"], (30 * math.cos(math.radians(120)), 30 * math.sin(math.radians(120)), 4))
    assert [p["type"] for p in d["patterns"]] == ([pattern] if pattern else [])
    out = R.features_reply(d, "a")
    R.check(out)
    text = table.render_text("features", {"ok": True, "features": out})
    if pattern:
        assert "slots: 3 x arc r=30 40° width 6 through -Z turned round a bolt circle r=30 at (0, 0, 4)" in text, text
    for key, value in (("sweep", 400.0), ("sweep", "40"), ("radius", float("nan")), ("center", [0, 0])):
        bad = json.loads(json.dumps(d))
        bad["slots"][0]["arc"][key] = value
        with pytest.raises(ReplyRefused, match=rf"slots\[0\].arc.{key}"):
            R.features_reply(bad, "a")
    straight = run(Box(60, 40, 8) - extrude(SlotCenterToCenter(20, 6), 8, both=True))
    assert [s["arc"] for s in straight["slots"]] == [None]


@pytest.mark.parametrize("cut,flat", [
    (Cylinder(4, 5) - Pos(4.5, 0, 0) * Box(3, 10, 5), (1, 7)),                                  # a D
    (Cylinder(4, 5) - Pos(4.5, 0, 0) * Box(3, 10, 5) - Pos(-4.5, 0, 0) * Box(3, 10, 5), (2, 6)),  # a double D
    (Cylinder(4, 5) - Pos(4.5, 0, 0) * Box(3, 10, 5) - Pos(-5, 0, 0) * Box(3, 10, 5), (2, 6.5)),  # unequal flats
    (Cylinder(4, 5) + Pos(0, 5, 0) * extrude(SlotCenterToCenter(6, 3, rotation=90), 5, both=True), None),  # keyhole
], ids=["d", "double_d", "two_flats_off_centre", "keyhole"])
def test_d_and_double_d_holes_carry_their_flats(cut, flat, tmp_path):
    """A D hole read "partial (open on one side)": its wall is not a full turn, but nothing is open.
    A gap closed by one plane meeting the wall along both its edges, facing the axis, is a D
    (``flat``: size across from the flat to the wall opposite); two opposite ones a double D
    (across the flats). A keyhole's slot walls each meet the wall along one edge: still partial."""
    part = Box(40, 40, 5) - cut
    export_step(part, str(tmp_path / "d.step"))
    for p in (part, import_step(str(tmp_path / "d.step"))):
        d = run(p)
        (h,) = [h for h in d["holes"] if h["diameter"] == pytest.approx(8)]
        want = None if flat is None else {"count": flat[0], "across": pytest.approx(flat[1])}
        assert (h["flat"], h["partial"], h["through"], h["keyway"]) == (want, flat is None, True, None)
    text = table.render_text("features", {"ok": True, "features": R.features_reply(d, "p")})
    words = ("d=8 partial (open on one side)" if flat is None else
             f"d=8 flat {flat[1]:g} across -Z" if flat[0] == 1 else f"d=8 double-D {flat[1]:g} across flats -Z")
    assert words in text, text
    for key, value in (("count", 3), ("count", 0), ("count", True), ("across", -1.0), ("across", "7")):
        bad = json.loads(json.dumps(d))
        (i,) = [i for i, h in enumerate(d["holes"]) if h["diameter"] == pytest.approx(8)]
        bad["holes"][i]["flat"] = {"count": 1, "across": 7.0, key: value}
        with pytest.raises(ReplyRefused, match=rf"holes\[{i}\].flat.{key}"):
            R.features_reply(bad, "p")


def _counterbored_slots(blind=None, from_below=False, rows=1, offset=0.0):
    """A block (80x40x10, z from -5 to 5) with ``rows`` slots 26x6, through (or ``blind`` deep from
    the face), under a 30x10 counterbore 4 deep, cut from the top (or the bottom); ``offset``
    moves the narrow slot off the counterbore's centre line."""
    with BuildPart() as p:
        Box(80, 40, 10)
        z, down = (-5, 1) if from_below else (5, -1)
        with BuildSketch(Plane.XY.offset(z)):
            with GridLocations(0, 15, 1, rows):
                SlotCenterToCenter(20, 10)
        extrude(amount=4 * down, mode=Mode.SUBTRACT)
        with BuildSketch(Plane.XY.offset(z)):
            with GridLocations(0, 15, 1, rows):
                with Locations((0, offset)):
                    SlotCenterToCenter(20, 6)
        extrude(amount=(blind or 10) * down, mode=Mode.SUBTRACT)
    return p.part


@pytest.mark.parametrize("kw,want", [
    ({}, (None, (0, 0, 5), (0, 0, -1))),
    ({"blind": 7}, (7, (0, 0, 5), (0, 0, -1))),
    ({"from_below": True}, (None, (0, 0, -5), (0, 0, 1))),
    ({"rows": 2}, (None, (0, -7.5, 5), (0, 0, -1))),
    ("step", (None, (0, 0, 5), (0, 0, -1))),
    ({"offset": 1.5}, None),
], ids=["through", "blind", "from_below", "two_rows", "imported_step", "off_centre"])
def test_a_counterbored_slot_is_one_slot_with_its_counterbore(kw, want, tmp_path):
    """A counterbored slot (for a cap screw's head) read as two slots, both through: the wider one's
    floor opens into the narrower one. A closed slot with a wider, longer one over it on its centre
    line is one slot with ``counterbore`` {width, length, depth}, entered at the counterbore, its
    depth (blind) from there, as a hole's; off the centre line they stay two slots."""
    if kw == "step":
        export_step(_counterbored_slots(), str(tmp_path / "cb.step"))
        d = run(import_step(str(tmp_path / "cb.step")))
    else:
        d = run(_counterbored_slots(**kw))
    if want is None:
        assert sorted(s["width"] for s in d["slots"]) == [pytest.approx(6), pytest.approx(10)]
        assert [s["counterbore"] for s in d["slots"]] == [None, None]
        return
    depth, center, axis = want
    s = d["slots"][0]
    assert len(d["slots"]) == (2 if kw == {"rows": 2} else 1) and d["fillets"] == []
    assert (s["width"], s["length"], s["through"], s["depth"]) == (
        pytest.approx(6), pytest.approx(26), depth is None, None if depth is None else pytest.approx(depth))
    assert s["counterbore"] == {"width": pytest.approx(10), "length": pytest.approx(30), "depth": pytest.approx(4)}
    assert near(s["center"], center, 1e-6) and near(s["axis"], axis, 1e-9)
    out = R.features_reply(d, "b")
    R.check(out)
    text = table.render_text("features", {"ok": True, "features": out})
    kind = "through" if depth is None else f"depth {depth}"
    assert f"length 26 width 6 {kind} counterbore 30 x 10 depth 4 " in text, text
    for key, value in (("width", -1.0), ("depth", "4"), ("length", float("inf"))):
        bad = json.loads(json.dumps(d))
        bad["slots"][0]["counterbore"][key] = value
        with pytest.raises(ReplyRefused, match=rf"slots\[0\].counterbore.{key}"):
            R.features_reply(bad, "b")



def _wheel(spokes=5, corner=0.0, depth=None):
    """A wheel (r=50, 10 thick, z from -5 to 5, a d=16 bore) with ``spokes`` ring-sector windows
    between r=15 and r=40 whose sides run along radii, 16 degrees apart across each spoke; corner
    radii ``corner``; through, or ``depth`` deep."""
    from build123d import BuildLine, CenterArc, Line, make_face
    with BuildPart() as w:
        Cylinder(50, 10)
        Hole(8)
        with BuildSketch(Plane.XY.offset(5)) as sk:
            for i in range(spokes):
                a0, a1 = i * 360 / spokes + 8, (i + 1) * 360 / spokes - 8
                at = [(r * math.cos(math.radians(a)), r * math.sin(math.radians(a))) for r, a in
                      ((15, a0), (40, a0), (40, a1), (15, a1))]
                with BuildLine():
                    Line(at[0], at[1])
                    CenterArc((0, 0), 40, a0, a1 - a0)
                    Line(at[2], at[3])
                    CenterArc((0, 0), 15, a1, a0 - a1)
                make_face()
            if corner:
                fillet(sk.vertices(), corner)
        extrude(amount=-(depth or 10), mode=Mode.SUBTRACT)
    return w.part


def _spoked(spokes=4, width=8.0, corner=2.0):
    """A rim (r=40 to 50) and a hub (r=6 to 15), 10 thick, joined by ``spokes`` straight spokes of
    even ``width`` (their windows' sides stand off the axis); corner radii ``corner``."""
    from build123d import Part
    wheel = Cylinder(50, 10) - Cylinder(40, 10) + Cylinder(15, 10) - Cylinder(6, 10)
    for i in range(spokes):
        wheel += Rot(0, 0, i * 360 / spokes) * Pos(27.5, 0, 0) * Box(34, width, 10)
    if corner:
        edges = [e for e in wheel.edges().filter_by(Axis.Z).filter_by(GeomType.LINE)
                 if min(abs(math.hypot(e.center().X, e.center().Y) - r) for r in (15, 40)) < 0.5]
        wheel = Part(wheel.fillet(corner, edges).wrapped)
    return wheel


@pytest.mark.parametrize("make,count,angle,corner,depth", [
    (lambda: _wheel(), 5, 56, None, None),
    (lambda: _wheel(corner=3), 5, 56, 3, None),
    (lambda: _wheel(corner=3, depth=4), 5, 56, 3, 4),
    (lambda: _spoked(), 4, 90, 2, None),                      # spokes of even width: sides off the axis
    (lambda: _spoked(6, corner=0), 6, 60, None, None),
    ("step", 5, 56, 3, None),
], ids=["wheel", "corner_radii", "blind", "even_spokes", "six_sharp", "imported_step"])
def test_a_wheels_windows_are_sector_pockets_not_fillets(make, count, angle, corner, depth, tmp_path):
    """A wheel's windows between its spokes read "fillets: 5 x r=15 (convex rounds)", "fillets: 5 x
    r=40 (concave)" and no window: their walls are arcs as well as planes. A loop of walls that
    goes once round a void, curved ones too, is a pocket; two straight sides, an arc round their
    axis outside and one inside make a ring sector (``sector``: centre, radii, angle between the
    sides), its centre on the bisector midway between the radii, and the windows a bolt circle."""
    d = run(_made(make, tmp_path, lambda: _wheel(corner=3)))
    assert d["fillets"] == [] and len(d["pockets"]) == count and len(d["holes"]) == 1
    for p in d["pockets"]:
        assert (p["shape"], p["sides"], p["curved"], p["through"], p["depth"], p["corner_radius"]) == (
            "sector", 4, 2, depth is None, None if depth is None else pytest.approx(depth),
            None if corner is None else pytest.approx(corner))
        assert p["sector"] == {"center": [0.0, 0.0, 5.0], "inner_radius": pytest.approx(15),
                               "outer_radius": pytest.approx(40), "angle": pytest.approx(angle)}
        assert math.hypot(*p["center"][:2]) == pytest.approx(27.5) and p["center"][2] == pytest.approx(5)
        assert p["width"] == pytest.approx(25) and near(p["axis"], (0, 0, -1), 1e-9)
    (circle,) = [p for p in d["patterns"] if p["type"] == "bolt_circle"]
    assert (circle["of"], circle["count"], circle["radius"]) == ("pockets", count, pytest.approx(27.5))
    out = R.features_reply(d, "w")
    R.check(out)
    text = table.render_text("features", {"ok": True, "features": out})
    if make == "step":
        assert "pockets: 5 x sector r=15..40 56° corners r=3 through -Z turned round a bolt circle r=27.5 at (0, 0, 5)" in text
    for key, value in (("angle", 361.0), ("inner_radius", -1.0), ("center", [0, 0]), ("outer_radius", "40")):
        bad = json.loads(json.dumps(d))
        bad["pockets"][0]["sector"][key] = value
        with pytest.raises(ReplyRefused, match=rf"pockets\[0\].sector.{key}"):
            R.features_reply(bad, "w")
    bad = json.loads(json.dumps(d))
    bad["pockets"][0]["curved"] = 5  # more curved walls than walls
    with pytest.raises(ReplyRefused, match=r"pockets\[0\].curved"):
        R.features_reply(bad, "w")


def test_two_straight_walls_meeting_off_the_axis_and_an_arc_are_no_sector():
    """A pocket outlined by two straight walls meeting at a corner and an arc back to the start read
    as "sector r=0..14.7 108°": its walls were not checked to run out from the arc's axis. A ring
    sector's sides run near a radius (a spoke of even width's off it by half its width); these
    cross it: shape "other", three sides, one curved, its outline's extents."""
    from build123d import Polyline, ThreePointArc, make_face
    outline = make_face(Polyline((0, 0), (20, 0), (25, 15)) + ThreePointArc((25, 15), (10, 20), (0, 0)))
    d = run(Box(80, 60, 20) - Pos(-10, -10, 10) * extrude(outline, amount=-5))
    (p,) = d["pockets"]
    assert (p["shape"], p["sides"], p["curved"], p["sector"], p["depth"]) == ("other", 3, 1, None, pytest.approx(5)), p
    assert (p["length"], p["width"]) == (pytest.approx(26.1414, abs=1e-3), pytest.approx(20.4395, abs=1e-3)), p


def test_a_spherical_face_next_to_a_pocket_wall_is_no_wall():
    """A ball-end dimple cut into a pocket's wall (a sphere face: no axis) made the pocket finder
    fail with a TypeError once curved walls were read (build123d's joints example)."""
    from build123d import Sphere
    with BuildPart() as p:
        Box(60, 40, 10)
        with BuildSketch(Plane.XY.offset(5)):
            Rectangle(30, 20)
        extrude(amount=-6, mode=Mode.SUBTRACT)
        with Locations((15, 0, 1.5)):
            Sphere(2, mode=Mode.SUBTRACT)
    d = run(p.part)
    (pk,) = d["pockets"]
    assert (pk["shape"], pk["sides"], pk["depth"]) == ("rectangle", 4, pytest.approx(6))


def _lines_by_scan(faces, tol):
    """features_find.lines as it was: each face compared with every line so far, first fit wins."""
    from jail.cad.features_faces import dot, mul, norm, sub
    groups = []
    for fi in faces:
        for origin, axis, members in groups:
            if abs(dot(axis, fi.axis)) < 1 - 1e-9:
                continue
            w = sub(fi.origin, origin)
            if norm(sub(w, mul(axis, dot(w, axis)))) <= tol:
                members.append(fi)
                break
        else:
            groups.append((fi.origin, fi.axis, [fi]))
    return [m for _, _, m in groups]


def test_lines_by_cell_group_faces_as_a_scan_of_every_line_does():
    """``lines`` looks lines up by direction and foot cell (600 holes cost 0.8 s compared one by
    one); on faces scattered round lines at and just past the tolerance, in three directions and
    far from the origin, it makes the same groups in the same order as comparing with every line."""
    import random
    from jail.cad.features_faces import FaceInfo, unit
    from jail.cad.features_find import lines
    rng = random.Random(7)
    tol = 1e-5
    axes = [(0.0, 0.0, 1.0), unit((1.0, 2.0, 0.5)), (1.0, 0.0, 0.0)]
    faces = []
    for i in range(600):
        axis = axes[rng.randrange(3)]
        base = (rng.choice((0.0, 1e4, -37.5)), rng.randrange(20) * 3 * tol, rng.randrange(4) * 1.5)
        jitter = tuple(rng.choice((0.0, 0.4, 0.9, 1.1)) * tol * rng.choice((-1, 1)) for _ in range(3))
        origin = tuple(b + j + a * rng.uniform(-50, 50) for b, j, a in zip(base, jitter, axis))
        faces.append(FaceInfo(i, None, "cylinder", 1.0, origin, origin=origin, axis=axis))
    got = [[f.index for f in g] for g in lines(faces, tol)]
    want = [[f.index for f in g] for g in _lines_by_scan(faces, tol)]
    assert got == want and 20 < len(got) < 600


def _filleted(kind: str, floor: float = 0.0, mouth: float = 0.0, edge=fillet):
    """A 10 (z from -5 to 5) or 20 (pocket: -10 to 10) thick block with one feature cut from the
    top, its floor edges rounded ``floor`` and its mouth's edges ``mouth``: a blind hole d=12 8
    deep, a through hole d=8, a pocket 40x30 r=5 8 deep, a slot 28x8 4 deep; or a boss d=12 10
    high on a block 8 thick (z from -4 to 4) with its top edge rounded ``mouth``. ``edge``:
    ``fillet`` (rounded) or ``chamfer``."""
    with BuildPart() as p:
        if kind == "boss":
            Box(60, 40, 8)
            with Locations((0, 0, 4)):
                Cylinder(6, 10, align=(Align.CENTER, Align.CENTER, Align.MIN))
            fillet(p.edges(Select.LAST).group_by(Axis.Z)[-1], mouth)
            return p.part
        Box(80, 60, 20 if kind == "pocket" else 10)
        top = 10 if kind == "pocket" else 5
        if kind in ("blind", "through"):
            with Locations((0, 0, top)):
                Cylinder(6 if kind == "blind" else 4, 8 if kind == "blind" else 10,
                         align=(Align.CENTER, Align.CENTER, Align.MAX), mode=Mode.SUBTRACT)
        else:
            with BuildSketch(Plane.XY.offset(top)):
                if kind == "pocket":
                    RectangleRounded(40, 30, 5)
                else:
                    SlotCenterToCenter(20, 8)
            extrude(amount=-8 if kind == "pocket" else -4, mode=Mode.SUBTRACT)
        inner = [e for e in p.edges() if abs(e.center().X) < 25 and abs(e.center().Y) < 20 and e.center().Z < top - 1e-6]
        if floor:
            edge(ShapeList(inner).group_by(Axis.Z)[0], floor)
        if mouth:
            edge(p.edges().group_by(Axis.Z)[-1].filter_by(
                lambda e: abs(e.center().X) < 25 and abs(e.center().Y) < 20), mouth)
    return p.part


@pytest.mark.parametrize("kind,floor,mouth,want", [
    ("blind", 1, 0, ("holes", False, 8, (0, 0, 5))),
    ("blind", 1, 0.5, ("holes", False, 8, (0, 0, 5))),
    ("through", 0, 1, ("holes", True, None, (0, 0, 5))),
    ("pocket", 2, 0, ("pockets", False, 8, (0, 0, 10))),
    ("pocket", 2, 1, ("pockets", False, 8, (0, 0, 10))),
    ("slot", 1, 0, ("slots", False, 4, (0, 0, 5))),
    ("slot", 1, 0.5, ("slots", False, 4, (0, 0, 5))),
    ("boss", 0, 1, ("bosses", None, 10, (0, 0, 4))),
], ids=["hole_floor", "hole_floor_and_mouth", "hole_mouth", "pocket_floor", "pocket_floor_and_mouth",
        "slot_floor", "slot_floor_and_mouth", "boss_top"])
def test_rounded_floors_mouths_and_tops_do_not_change_the_reading(kind, floor, mouth, want):
    """A milled pocket, a blind hole or a slot with its floor edges rounded read "through": the probe
    just past its walls' end was in the rounding still. A hole with a rounded mouth was entered a
    radius below the face, and a boss with a rounded top was not found at all (the probe beside its
    wall's end was in the rounding). Ends are now read past such roundings (tori round an axis,
    cylinders along a floor's edges): the depth runs from the face to the floor, as without them."""
    d = run(_filleted(kind, floor, mouth))
    of, through, depth, center = want
    (x,) = d[of]
    if of == "bosses":
        assert x["height"] == pytest.approx(depth) and near(x["center"], center, 1e-6)
    else:
        assert (x["through"], x["depth"]) == (through, None if depth is None else pytest.approx(depth))
        assert near(x["center"], center, 1e-6) and near(x["axis"], (0, 0, -1), 1e-9)
    rounds = sorted((round(g["radius"], 6), g["convex"]) for g in d["fillets"])
    assert rounds == sorted((r, c) for r, c in ((floor, False), (mouth, True)) if r), rounds


def _pocket_with(inside: str, floor_round: float = 0.0):
    """A block (80x60x20, z from -10 to 10) with a 50x40 pocket 8 deep from the top and, on its
    floor: ``ring`` (the pocket a groove 2 wide round a 46x36 r=3 middle, 3 deep instead), ``post``
    (a 20x10 block as high as the top), ``boss`` (a d=10 cylinder 6 high), ``two`` (two 10x10
    posts), ``holes`` (two through holes and a blind one in the floor: no island); floor edges
    rounded ``floor_round``."""
    with BuildPart() as p:
        Box(80, 60, 20)
        with BuildSketch(Plane.XY.offset(10)):
            if inside == "ring":
                RectangleRounded(50, 40, 5)
                RectangleRounded(46, 36, 3, mode=Mode.SUBTRACT)
            else:
                Rectangle(50, 40)
                if inside == "post":
                    Rectangle(20, 10, mode=Mode.SUBTRACT)
                if inside == "two":
                    with Locations((-12, 0), (12, 0)):
                        Rectangle(10, 10, mode=Mode.SUBTRACT)
        extrude(amount=-3 if inside == "ring" else -8, mode=Mode.SUBTRACT)
        if inside == "boss":
            with Locations((0, 0, 2)):
                Cylinder(5, 6, align=(Align.CENTER, Align.CENTER, Align.MIN))
        if inside == "holes":
            with Locations(Plane.XY.offset(2)):
                with Locations((-15, 0), (15, 0)):
                    Hole(2)
                with Locations((0, 10)):
                    Hole(2, depth=4)
        if floor_round:
            fillet(p.edges().filter_by(lambda e: abs(e.center().Z - 2) < 1e-6 and abs(e.center().X) < 26
                                       and abs(e.center().Y) < 21 and e.geom_type == GeomType.LINE), floor_round)
    return p.part


@pytest.mark.parametrize("inside,floor_round,want,text", [
    ("ring", 0, (1, 46, 36), "rectangle 50 x 40 along +X r=5 depth 3 round an island 46 x 36 -Z"),
    ("post", 0, (1, 20, 10), "rectangle 50 x 40 along +X depth 8 round an island 20 x 10 -Z"),
    ("post", 1, (1, 20, 10), "rectangle 50 x 40 along +X depth 8 round an island 20 x 10 -Z"),
    ("boss", 0, (1, 10, 10), "rectangle 50 x 40 along +X depth 8 round an island 10 x 10 -Z"),
    ("two", 0, (2, 10, 10), "rectangle 50 x 40 along +X depth 8 round 2 islands (the largest 10 x 10) -Z"),
    ("holes", 0, None, "rectangle 50 x 40 along +X depth 8 -Z"),
], ids=["rectangular_groove", "post", "post_rounded_floor", "boss", "two_posts", "holes_in_the_floor"])
def test_what_stands_on_a_pockets_floor_is_an_island(inside, floor_round, want, text):
    """A rectangular groove round a lid's edge read "pockets: 1 x rectangle 70 x 50 depth 3", as if
    the whole middle were recessed; a post left standing in a pocket was not mentioned. The faces
    next to the floor along its inner wires that rise on the pocket's side are islands
    (``island``: how many, the largest's size); holes in the floor go down and are none."""
    d = run(_pocket_with(inside, floor_round))
    (pk,) = d["pockets"]
    got = pk["island"]
    assert (got if got is None else (got["count"], got["length"], got["width"])) == (
        want if want is None else (want[0], pytest.approx(want[1]), pytest.approx(want[2])))
    out = R.features_reply(d, "p")
    R.check(out)
    assert text in table.render_text("features", {"ok": True, "features": out})
    if got is not None:
        for key, value in (("count", 0), ("count", "1"), ("width", -2.0), ("length", float("nan"))):
            bad = json.loads(json.dumps(d))
            bad["pockets"][0]["island"][key] = value
            with pytest.raises(ReplyRefused, match=rf"pockets\[0\].island.{key}"):
                R.features_reply(bad, "p")



@pytest.mark.parametrize("kind,floor,mouth,depth", [
    ("pocket", 1, 0, 8), ("pocket", 0, 1, 8), ("pocket", 1, 1, 8), ("blind", 1, 0, 8), ("slot", 0, 0.5, 4),
    ("slot", 1, 0.5, 4),
], ids=["pocket_floor", "pocket_mouth", "pocket_both", "hole_floor", "slot_mouth", "slot_both"])
def test_chamfered_floors_and_mouths_do_not_change_the_reading(kind, floor, mouth, depth):
    """A pocket with its floor edges chamfered read "through" (the probe past its walls was in the
    chamfer); one with its mouth chamfered made the whole reply refused: the chamfer strip's plane,
    extended, met the centre line 16 below the face, and the depth came out -8. A blind hole with a
    chamfered flat floor read 7 deep (the chamfer taken for a drill point), a slot with a chamfered
    floor "through". Chamfer strips (a tilted plane next to one wall) are passed like roundings,
    the mouth is never past the far end, a cone narrowing to a circle at a hole's floor is part of
    its depth, and a slot's ends are read past a narrowing cone round its floor."""
    d = run(_filleted(kind, floor, mouth, edge=chamfer))
    (x,) = d["holes" if kind == "blind" else kind + "s"]
    assert (x["through"], x["depth"]) == (False, pytest.approx(depth))
    assert near(x["center"], (0, 0, 10 if kind == "pocket" else 5), 1e-6) and near(x["axis"], (0, 0, -1), 1e-9)
    R.check(R.features_reply(d, "p"))


@pytest.mark.parametrize("outline,rotate,text", [
    ("slot", True, "slots: 6 x length 18 width 6 through -Z turned round a bolt circle r=30 at (0, 0, 4) at"),
    ("window", True, "pockets: 6 x rectangle 12 x 6 through -Z turned round a bolt circle r=30 at (0, 0, 4) at"),
    ("slot", False, "slots: 6 x length 18 width 6 through -Z on a bolt circle r=30 at (0, 0, 4) at"),
], ids=["radial_slots", "radial_windows", "parallel_slots"])
def test_copies_turned_round_a_circle_make_a_bolt_circle(outline, rotate, text):
    """An index plate's six radial slots were no pattern, and six radial windows read as three lines
    of two ("along axis (0.5, 0.866, 0)" ...): each copy points another way. Slots or pockets the
    same but for their direction, each at the same angle to its radius, make a circle, and the text
    says they are turned round it; copies that all point one way are on it, as before."""
    with BuildPart() as p:
        Cylinder(50, 8)
        with BuildSketch(Plane.XY.offset(4)):
            with PolarLocations(30, 6, rotate=rotate):
                if outline == "slot":
                    SlotCenterToCenter(12, 6)
                else:
                    Rectangle(12, 6)
        extrude(amount=-8, mode=Mode.SUBTRACT)
    d = run(p.part)
    of = "slots" if outline == "slot" else "pockets"
    (pat,) = d["patterns"]
    assert (pat["type"], pat["of"], pat["count"], pat["radius"]) == ("bolt_circle", of, 6, pytest.approx(30))
    assert sorted(pat["members"]) == list(range(6))
    assert text in table.render_text("features", {"ok": True, "features": R.features_reply(d, "p")})
    # the same six, each turned a different way from its radius, make no pattern
    with BuildPart() as q:
        Cylinder(50, 8)
        for i in range(6):
            with BuildSketch(Plane.XY.offset(4)):
                with Locations(Location((30 * math.cos(math.radians(60 * i)), 30 * math.sin(math.radians(60 * i))),
                                        (0, 0, 60 * i + 10 * i))):
                    SlotCenterToCenter(12, 6)
            extrude(amount=-8, mode=Mode.SUBTRACT)
    assert run(q.part)["patterns"] == []


def test_a_hole_opening_into_a_sphere_below_its_rim_keeps_a_positive_depth():
    """Found by cutting 3 000 random parts: a ring groove whose middle a spherical cut took away
    left a blind hole whose mouth opens into the sphere; the axis meets the sphere below the hole's
    floor, so the entry crossing was taken past the far end, the depth came out -0.89 and the
    launcher refused the whole reply. A crossing past the far end now falls back to the wall's end."""
    from build123d import Sphere
    with BuildPart() as p:
        Box(80, 60, 20)
        with BuildSketch(Plane.XY.offset(10)):
            Circle(4.4)
            Circle(2.5, mode=Mode.SUBTRACT)
        extrude(amount=-4.3, mode=Mode.SUBTRACT)
        with Locations((0, -0.25, 9.5)):
            Sphere(4.7, mode=Mode.SUBTRACT)
    d = run(p.part)
    (h,) = [h for h in d["holes"] if h["ball"] is None]  # and the sphere's cap below the groove's floor: a dimple
    assert h["depth"] > 0 and h["length"] > 0 and not h["through"]
    assert [(x["ball"], round(x["depth"], 6)) for x in d["holes"] if x["ball"]] == [(4.7, 0.9)], d["holes"]
    R.check(R.features_reply(d, "p"))


def test_a_pattern_whose_members_are_past_the_cap_says_so():
    """A heat exchanger's tube ends read "pattern: 148 bosses on a staggered bundle ..." on a line of
    their own, with no hint why: its members are past the list's cap, so no listed line names it.
    Such a line now says how many of its members are not listed."""
    pockets = [{"center": [10.0 * i, 0.0, 0.0], "axis": [0.0, 0.0, -1.0], "depth": None, "through": True,
                "width": 4.0, "length": 4.0, "direction": [1.0, 0.0, 0.0], "sides": 4, "shape": "rectangle",
                "corner_radius": None, "draft": None, "curved": 0, "island": None, "sector": None}
               for i in range(R.FEATURES_LIST_CAP)]
    reply = {k: [] for k in R.KINDS}
    reply.update(pockets=pockets, truncated={"pockets": 300}, patterns=[
        {"type": "linear", "of": "pockets", "count": 100, "members": list(range(100)), "pitch": 10.0,
         "direction": [1.0, 0.0, 0.0]},
        {"type": "linear", "of": "pockets", "count": 200, "members": [], "pitch": 10.0,
         "direction": [0.0, 1.0, 0.0]}])
    text = table.render_text("features", {"ok": True, "features": R.features_reply(reply, "p")})
    assert "pattern: 200 pockets on a linear pitch 10 along (0, 1, 0) (200 not listed: past the list's cap)" in text
    assert "not listed" not in text.split("pattern: 200")[0], text  # the listed pattern's line says nothing


def test_a_row_off_by_its_last_digits_is_no_huge_circle():
    """Eight members in a row whose centres differ from a line only in their last digits (channels'
    centres, computed): a linear pattern, no "arc" of radius 1e17, whose centre the launcher
    refuses (the whole reply was lost)."""
    from jail.cad import features_patterns
    noise = [0.0, 1e-14, -2e-14, 0.0, 3e-14, -1e-14, 2e-14, 0.0]
    items = [{"center": (noise[i], -84.0 + 24 * i, 10.0), "axis": (0.0, 0.0, -1.0), "diameter": 8.0, "sig": 1}
             for i in range(8)]
    found = features_patterns.find(items, "slots")
    assert [p["type"] for p in found] == ["linear"], found


@pytest.mark.parametrize("tilt", [0.5, 1.0, 2.5])
def test_a_bolt_circle_tilted_a_little_off_an_axis_is_one_circle(tilt):
    """Holes whose axes lie within 2.6 degrees of the part's Z were placed in the X-Y plane as they
    were, not square to their axes: a circle of 20 holes, r=10.7, tilted 2.5 degrees, came out an
    ellipse 0.01 mm out of round (``tol`` 0.001) and read as 33 arcs (stop 53's fluted knobs)."""
    from jail.cad import features_patterns
    a = math.radians(tilt)
    axis = (0.0, -math.sin(a), -math.cos(a))  # Z turned round X
    u, v = (1.0, 0.0, 0.0), (0.0, math.cos(a), -math.sin(a))
    items = [{"center": tuple(10.7 * (math.cos(t) * u[k] + math.sin(t) * v[k]) for k in range(3)),
              "axis": axis, "diameter": 2.0, "sig": 1} for t in (2 * math.pi * i / 20 for i in range(20))]
    (found,) = features_patterns.find(items, "holes")
    assert (found["type"], found["count"], round(found["radius"], 9)) == ("bolt_circle", 20, 10.7), found


@pytest.mark.parametrize("turn", [17, 30, 45, 90])
def test_staggered_rows_turned_in_their_plane_are_found(turn):
    """A honeycomb of holes (HexLocations, 4 rows of 5) turned in its plane: the staggered rows were
    looked for along the part's axes only, so turned by 17 or 45 degrees it was no pattern but a
    "bolt circle" of one hole's six neighbours (30 degrees read as a bundle along +X). Now its own
    rows are tried too: a staggered 4x5 grid, rows along the way it was turned."""
    from build123d import HexLocations
    with BuildPart() as p:
        Box(200, 200, 5)
        with Locations(Pos(0, 0, 2.5) * Rot(0, 0, turn)):
            with HexLocations(6, 5, 4):
                Hole(2)
    (g,) = run(p.part)["patterns"]
    assert (g["type"], g["count"], sorted(g["counts"]), g["pitch"]) == (
        "staggered", 20, [4, 5], [pytest.approx(12), pytest.approx(6 * 3 ** 0.5)])
    a = math.radians(turn + 90)  # HexLocations' rows run along its Y
    assert abs(abs(g["directions"][0][0] * math.cos(a) + g["directions"][0][1] * math.sin(a)) - 1) < 1e-6

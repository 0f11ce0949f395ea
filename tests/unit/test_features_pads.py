"""Pads: raised features that are not round (jail/cad/features_pads.py), the reply rebuilt by
launcher/replies/features.py and its text (launcher/tools/cad.py ``_pad_kind``). In process.

Before, a rectangular pad, a hex boss or an obround boss on a plate read as nothing at all (the
obround's round ends as two convex fillets). A pad is a flat top with walls square to it all round,
standing on a floor: a whole block, a shoulder run out to the part's edge or a waffle's posts
between channels are not pads.
"""
from __future__ import annotations

import math

import pytest
from build123d import (
    Align,
    Axis,
    Box,
    BuildPart,
    BuildSketch,
    GridLocations,
    Hole,
    Locations,
    Mode,
    Plane,
    Pos,
    Rectangle,
    RectangleRounded,
    RegularPolygon,
    Rot,
    SlotOverall,
    chamfer,
    export_step,
    extrude,
    fillet,
    import_step,
)

from tests.unit.test_features_pattern_levels import run, text_of

UP = Align.CENTER, Align.CENTER, Align.MIN


def on_plate(outline, height: float = 8.0, at=(0, 0), rounds: float | None = None):
    """A 100 x 60 x 10 plate (top at z = 5) with ``outline()`` (a sketch) extruded ``height`` at ``at``."""
    with BuildPart() as p:
        Box(100, 60, 10)
        with BuildSketch(Plane.XY.offset(5)):
            with Locations(at):
                outline()
        extrude(amount=height)
        if rounds:
            fillet(p.edges().filter_by(Axis.Z).filter_by_position(Axis.Z, 5, 5 + height), rounds)
    return p.part


def near(a, b, tol: float = 1e-4) -> bool:  # the reply's numbers are rounded
    return all(abs(x - y) <= tol for x, y in zip(a, b))


CASES = {  # name: (part, shape, width, length, sides, corner radius, height, text)
    "rectangle": (lambda: on_plate(lambda: Rectangle(30, 20)), "rectangle", 20, 30, 4, None, 8,
                  "pads: 1 x rectangle 30 x 20 along +X height 8 +Z at (0, 0, 5)"),
    "rounded corners": (lambda: on_plate(lambda: Rectangle(30, 20), rounds=3), "rectangle", 20, 30, 4, 3, 8,
                        "pads: 1 x rectangle 30 x 20 along +X r=3 height 8 +Z at (0, 0, 5)"),
    "hex boss": (lambda: on_plate(lambda: RegularPolygon(10, 6), height=6), "regular", 10 * math.sqrt(3), 20, 6,
                 None, 6, "pads: 1 x hex 17.3205 across flats height 6 +Z at (0, 0, 5)"),
    "obround boss": (lambda: on_plate(lambda: SlotOverall(40, 12), height=4, at=(10, -5)), "obround", 12, 40, 2,
                     None, 4, "pads: 1 x obround 40 x 12 along +X height 4 +Z at (10, -5, 5)"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_raised_outline_on_a_plate_reads_as_a_pad(name):
    make, shape, width, length, sides, radius, height, line = CASES[name]
    d = run(make())
    (p,) = d["pads"]
    assert (p["shape"], p["sides"], p["corner_radius"]) == (shape, sides, radius), p
    assert p["width"] == pytest.approx(width, abs=1e-4) and p["length"] == pytest.approx(length, abs=1e-4), p
    assert p["height"] == pytest.approx(height, abs=1e-6) and near(p["axis"], (0, 0, 1)), p
    assert d["fillets"] == [] and d["bosses"] == [] and d["steps"] == [], d
    assert line in text_of(d), text_of(d)


def test_a_hole_in_a_pads_top_is_a_hole_of_its_own():
    with BuildPart() as b:
        Box(100, 60, 10)
        with Locations((0, 0, 5)):
            Box(24, 24, 6, align=UP)
        with Locations((0, 0, 11)):
            Hole(radius=3)
    d = run(b.part)
    (p,) = d["pads"]
    assert (p["shape"], p["width"], p["height"]) == ("rectangle", 24, 6) and near(p["center"], (0, 0, 5)), p
    assert [(h["diameter"], h["through"]) for h in d["holes"]] == [(6, True)], d["holes"]


@pytest.mark.parametrize("part", [
    lambda: Box(100, 60, 10),                                          # a whole block: walls down to its bottom
    lambda: Box(100, 60, 10) + Pos(20, 0, 9) * Box(40, 60, 8),         # a shoulder run out to the part's edges
    lambda: Box(60, 40, 10) + Pos(0, 0, 10) * Box(40, 30, 10),         # a shoulder all round: four steps
], ids=["block", "flush-step", "shoulder-all-round"])
def test_blocks_and_shoulders_are_no_pads(part):
    d = run(part())
    assert d["pads"] == [], d["pads"]


def test_a_waffles_posts_are_its_channels_walls_not_pads():
    part = Box(120, 120, 20)
    for i in range(4):
        part -= Pos(-36 + 24 * i, 0, 10) * Box(8, 120, 12)
        part -= Pos(0, -36 + 24 * i, 10) * Box(120, 8, 12)
    d = run(part)
    assert d["pads"] == [] and len(d["slots"]) == 8, (d["pads"], len(d["slots"]))


def test_a_pad_with_a_fillet_round_its_foot_measures_from_the_floor():
    with BuildPart() as b:
        Box(100, 60, 10)
        with Locations((0, 0, 5)):
            Box(30, 20, 8, align=UP)
        fillet(b.edges().filter_by_position(Axis.Z, 5, 5).filter_by(Axis.Z, reverse=True)
               .filter_by(lambda e: abs(e.center().X) <= 15 + 1e-6 and abs(e.center().Y) <= 10 + 1e-6), 2)
    d = run(b.part)
    (p,) = d["pads"]
    assert p["height"] == pytest.approx(8, abs=1e-6) and near(p["center"], (0, 0, 5)), p


def test_a_lower_rib_running_into_a_pad_leaves_the_pad():
    part = Box(100, 60, 10) + Pos(0, 0, 9) * Box(30, 20, 8) + Pos(0, 0, 7) * Box(100, 3, 4)
    (p,) = run(part)["pads"]
    assert (p["shape"], p["length"], p["width"], p["height"]) == ("rectangle", 30, 20, 8), p


def test_pads_on_a_grid_make_a_pattern():
    with BuildPart() as b:
        Box(100, 60, 10)
        with BuildSketch(Plane.XY.offset(5)):
            with GridLocations(40, 30, 2, 2):
                Rectangle(10, 6)
        extrude(amount=3)
    d = run(b.part)
    assert len(d["pads"]) == 4 and [(p["type"], p["of"], p["count"]) for p in d["patterns"]] == [("grid", "pads", 4)]
    assert "pads: 4 x rectangle 10 x 6 along +X height 3 +Z on a 2x2 grid pitch 40 x 30 at (" in text_of(d)


def test_a_pad_on_a_side_face_turned_and_moved():
    part = Box(20, 80, 60) + Pos(10, 0, 0) * Rot(0, 90, 0) * Box(16, 24, 6, align=UP)  # on +X, 6 high
    moved = Pos(5, -7, 3) * Rot(0, 0, 30) * part
    (p,) = run(moved)["pads"]
    c30, s30 = math.cos(math.radians(30)), math.sin(math.radians(30))
    assert near(p["axis"], (c30, s30, 0)) and p["height"] == pytest.approx(6, abs=1e-6), p
    assert near(p["center"], (5 + 10 * c30, -7 + 10 * s30, 3)), p
    assert (p["shape"], p["width"], p["length"]) == ("rectangle", 16, 24), p


def test_a_pad_read_back_from_step(tmp_path):
    f = tmp_path / "pad.step"
    export_step(on_plate(lambda: RegularPolygon(10, 6), height=6), str(f))
    (p,) = run(import_step(str(f)))["pads"]
    assert (p["shape"], p["sides"]) == ("regular", 6) and p["width"] == pytest.approx(10 * math.sqrt(3), abs=1e-4), p


def test_an_l_shaped_pad_is_other_with_its_extents():
    part = Box(100, 60, 10) + Pos(0, 0, 7.5) * Box(30, 10, 5) + Pos(-10, 10, 7.5) * Box(10, 30, 5)
    (p,) = run(part)["pads"]
    assert (p["shape"], p["sides"], p["corner_radius"]) == ("other", 6, None), p
    assert (p["width"], p["length"], p["height"]) == (30, 30, 5), p
    assert "pads: 1 x 30 x 30 (6 straight sides) height 5 +Z at" in text_of(run(part))


def _pad_with(break_top, foot: float | None = None, outline=lambda: Rectangle(30, 20)):
    with BuildPart() as b:
        Box(100, 60, 10)
        with BuildSketch(Plane.XY.offset(5)):
            outline()
        extrude(amount=8)
        break_top(b.edges().filter_by_position(Axis.Z, 13, 13))
        if foot:
            fillet(b.edges().filter_by_position(Axis.Z, 5, 5)
                   .filter_by(lambda e: abs(e.center().X) <= 15.01 and abs(e.center().Y) <= 10.01), foot)
    return b.part


@pytest.mark.parametrize("make,radius,line", [
    (lambda: _pad_with(lambda e: fillet(e, 2)), None, "fillets: 4 x r=2 (convex rounds)"),
    (lambda: _pad_with(lambda e: chamfer(e, 1), outline=lambda: RectangleRounded(30, 20, 4)), 4, "chamfers: 8 x 1"),
    (lambda: _pad_with(lambda e: fillet(e, 2), foot=1.5), None, "fillets: 4 x r=1.5 (concave)"),
], ids=["rounded-top", "chamfered-top-rounded-corners", "rounded-top-and-foot"])
def test_a_pad_with_its_top_edges_broken_reads_its_walls_outline(make, radius, line):
    """Past a rounded or chamfered top edge the walls are found across the round; the outline is the
    walls' (at their foot), the round stays a fillet (the chamfer a chamfer)."""
    d = run(make())
    (p,) = d["pads"]
    assert (p["shape"], p["length"], p["width"], p["height"], p["corner_radius"]) == ("rectangle", 30, 20, 8, radius), p
    assert near(p["center"], (0, 0, 5)) and line in text_of(d), text_of(d)


@pytest.mark.parametrize("name", ["rounded corners", "hex boss", "obround boss"])
def test_a_pad_all_in_b_splines_reads_as_the_analytic_one(name):
    """A STEP file written all in NURBS by another CAD system: the walls read as planes and cylinders,
    their edges as the lines and arcs they are."""
    from build123d import Compound
    from OCP.BRepBuilderAPI import BRepBuilderAPI_NurbsConvert
    part = CASES[name][0]()
    nurbs = Compound(BRepBuilderAPI_NurbsConvert(part.wrapped, True).Shape())
    assert run(nurbs)["pads"] == run(part)["pads"]


def test_a_pentagon_pads_width_runs_from_a_flat_to_the_opposite_corner():
    """An odd regular polygon has no flats opposite each other: its width (the narrowest extent) runs
    from a flat to a corner, and the text says so instead of "across flats"."""
    d = run(on_plate(lambda: RegularPolygon(10, 5), height=4))
    (p,) = d["pads"]
    assert (p["shape"], p["sides"]) == ("regular", 5), p
    assert p["width"] == pytest.approx(10 * (1 + math.cos(math.pi / 5)), abs=1e-4), p
    assert "pads: 1 x 5-sided 18.0902 flat to corner height 4 +Z at (" in text_of(d), text_of(d)


def _pentagon_pocket():
    with BuildPart() as b:
        Box(100, 60, 10)
        with BuildSketch(Plane.XY.offset(5)):
            RegularPolygon(10, 5)
        extrude(amount=-4, mode=Mode.SUBTRACT)
    return b.part


def test_a_pentagon_pockets_text_says_flat_to_corner_too():
    """Before, a pentagonal pocket read as "other": its walls were measured from its extents' middle."""
    d = run(_pentagon_pocket())
    (p,) = d["pockets"]
    assert (p["shape"], p["sides"]) == ("regular", 5), p
    assert "pockets: 1 x 5-sided 18.0902 flat to corner depth 4 -Z at (" in text_of(d), text_of(d)


@pytest.mark.parametrize("kind", ["pads", "pockets"])
def test_a_pentagons_centre_is_its_own_not_its_extents_middle(kind):
    """A pentagon's extents are not centred on it: its centre is its sides' middle."""
    d = run(on_plate(lambda: RegularPolygon(10, 5), height=4) if kind == "pads" else _pentagon_pocket())
    (p,) = d[kind]
    assert near(p["center"][:2], (0, 0)), p

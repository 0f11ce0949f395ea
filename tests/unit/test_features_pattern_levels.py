"""Patterns of members entering at different levels along their axis (jail/cad/features_patterns.py
``find``, ``_levels_in_runs``), and the reply's text giving each pattern of a kind its own line
(launcher/tools/cad.py ``features_content``); in process, the reply rebuilt by
launcher/replies/features.py.

Patterns are found on centres projected across the holes' axis. A C-beam whose two flanges are
drilled alike projected each top hole onto the bottom one: ten holes, no pattern. Drilled in turn
(top at 20, 60, ..., bottom at 40, 80, ...), the flanges read as one row at half the pitch, a row
no hole is on. Such a group is read level by level now. A lattice whose levels rise one way along
its rows (a stepped plate drilled through as one grid, holes drilled down into a sloping face)
stays one lattice, as it was drilled.
"""
from __future__ import annotations

import json

import pytest
from build123d import (
    Align,
    BuildPart,
    BuildSketch,
    Box,
    Cylinder,
    Locations,
    Plane,
    Polygon,
    Pos,
    Rectangle,
    Rot,
    export_step,
    extrude,
    import_step,
)

from jail.cad import features
from launcher.replies import features as R
from launcher.tools import table

XS = (20, 60, 100, 140, 180)


def run(part) -> dict:
    return json.loads(json.dumps(features.features({"p": part}, "p"), allow_nan=False))


def text_of(d: dict) -> str:
    return table.render_text("features", {"ok": True, "features": R.features_reply(d, "p")})


def c_beam():
    """A C-beam 200 long along X: a web 3 thick and 50 high at y=0..3, flanges 30 wide (y=0..30)
    3 thick at its top (z=22..25) and bottom (z=-25..-22)."""
    with BuildPart() as c:
        with BuildSketch(Plane.YZ):
            Rectangle(3, 50, align=(Align.MIN, Align.CENTER))
            with Locations((0, 25)):
                Rectangle(30, 3, align=(Align.MIN, Align.MAX))
            with Locations((0, -25)):
                Rectangle(30, 3, align=(Align.MIN, Align.MIN))
        extrude(amount=200)
    return c.part


def rows(d: dict) -> list[tuple]:
    """Each pattern as (type, count, pitch, the members' centres' z), sorted."""
    return sorted((p["type"], p["count"], round(p.get("pitch", 0), 6),
                   tuple(sorted({round(d["holes"][m]["center"][2], 6) for m in p["members"]})))
                  for p in d["patterns"])


def test_a_c_beams_flanges_drilled_alike_are_two_rows():
    b = c_beam()
    for x in XS:
        b -= Pos(x, 18, 0) * Cylinder(3, 60)  # through both flanges
    d = run(b)
    assert len(d["holes"]) == 10
    assert rows(d) == [("linear", 5, 40, (-22,)), ("linear", 5, 40, (25,))]
    text = text_of(d)
    assert ("holes: 5 x through d=6 -Z on a linear pitch 40 along (1, 0, 0) at (20, 18, 25), (60, 18, 25), "
            "(100, 18, 25), (140, 18, 25), (180, 18, 25)\n") in text, text
    assert "holes: 5 x through d=6 -Z on a linear pitch 40 along (1, 0, 0) at (20, 18, -22)," in text, text
    assert "pattern:" not in text and "holes: 10" not in text, text


@pytest.mark.parametrize("turned", [False, True])
def test_flanges_drilled_in_turn_are_no_row_at_half_the_pitch(turned):
    """Top at 20, 60, ... 180, bottom at 40, 80, ... 160: each flange its own row of pitch 40; no
    row of nine at pitch 20 (it read so). Turned about X and Z, and read back from STEP alike."""
    b = c_beam()
    for x in XS:
        b -= Pos(x, 18, 25) * Cylinder(3, 10)
    for x in XS[:-1]:
        b -= Pos(x + 20, 18, -25) * Cylinder(3, 10)
    if turned:
        b = Rot(30, 0, 50) * b
    d = run(b)
    pats = sorted((p["type"], p["count"], round(p["pitch"], 6)) for p in d["patterns"])
    assert pats == [("linear", 4, 40), ("linear", 5, 40)], d["patterns"]
    if not turned:
        assert rows(d) == [("linear", 4, 40, (-22,)), ("linear", 5, 40, (25,))]
        assert "on a linear pitch 20" not in text_of(d)


def test_a_beam_read_back_from_step(tmp_path):
    b = c_beam()
    for x in XS:
        b -= Pos(x, 18, 25) * Cylinder(3, 10)
    for x in XS[:-1]:
        b -= Pos(x + 20, 18, -25) * Cylinder(3, 10)
    export_step(b, str(tmp_path / "beam.step"))
    d = run(import_step(str(tmp_path / "beam.step")))
    assert rows(d) == [("linear", 4, 40, (-22,)), ("linear", 5, 40, (25,))]


def test_a_stepped_plate_drilled_through_as_one_grid_stays_one_grid():
    """The upper step's holes enter at z=15, the lower's at z=10: along each row the entries step
    down once, so the 4 x 2 grid it was drilled as reads as one (not two 2 x 2 grids)."""
    s = Box(80, 40, 10, align=Align.MIN) + Box(40, 40, 15, align=Align.MIN)
    for x in (10, 30, 50, 70):
        for y in (10, 30):
            s -= Pos(x, y, 0) * Cylinder(2.5, 100)
    d = run(s)
    (g,) = d["patterns"]
    assert (g["type"], g["counts"], g["pitch"]) == ("grid", [4, 2], [20, 20])
    assert "holes: 8 x through d=5 -Z on a 4x2 grid pitch 20 x 20 at" in text_of(d)


def test_holes_drilled_down_into_a_sloping_face_stay_one_row():
    """Entries at z=14, 18, 22, 26: one level each, rising one way along the row: one row of pitch
    20 (across the axis, as they were drilled)."""
    w = Rot(90, 0, 0) * extrude(Polygon((0, 0), (100, 0), (100, 30), (0, 10), align=None), amount=20)
    w = Pos(0, 10, 0) * w
    for x in (20, 40, 60, 80):
        w -= Pos(x, 0, 0) * Cylinder(2, 100)
    d = run(w)
    assert [(p["type"], p["count"], round(p["pitch"], 6)) for p in d["patterns"]] == [("linear", 4, 20)]


def test_two_circles_of_the_same_holes_get_a_line_each():
    """One kind of hole in two patterns: a line per pattern, each with its centres (before: one
    line of all eleven, and a "pattern:" line per pattern that did not say which holes are on it)."""
    from build123d import Hole, PolarLocations
    with BuildPart() as p:
        Box(200, 80, 6)
        with Locations((-50, 0, 3)):
            with PolarLocations(25, 5):
                Hole(3)
        with Locations((50, 0, 3)):
            with PolarLocations(20, 6):
                Hole(3)
    d = run(p.part)
    assert sorted((q["type"], q["count"]) for q in d["patterns"]) == [("bolt_circle", 5), ("bolt_circle", 6)]
    text = text_of(d)
    assert "holes: 5 x through d=6 -Z on a bolt circle r=25 at (-50, 0, 3) at (-42.27, -23.78, 3)," in text, text
    assert "holes: 6 x through d=6 -Z on a bolt circle r=20 at (50, 0, 3) at" in text, text
    assert "pattern:" not in text and "holes: 11" not in text, text

"""``features``: drafted freeform and oval cuts (build123d's tapered extrude of a spline or an ellipse:
ruled B-spline walls that lean by one angle) are freeform pockets with their draft, sized at their
entry (jail/cad/features_outlines.py), in process."""
from __future__ import annotations

import json

import pytest
from build123d import Box, Ellipse, GeomType, Pos, Rot, Spline, extrude, fillet, loft, make_face

from jail.cad import features

CAM = ((-20, 0), (0, 15), (20, 0), (0, -12))


def run(part) -> dict:
    return json.loads(json.dumps(features.features({"p": part}, "p"), allow_nan=False))


def profile():
    return make_face(Spline(*CAM, periodic=True))


def cut(taper: float, depth: float = 6, face=None):
    """``face`` (the cam profile) cut ``depth`` into an 80x60x10 block's top (z = 5) with ``taper``."""
    return Box(80, 60, 10) - Pos(0, 0, 5) * extrude(profile() if face is None else face, amount=-depth, taper=taper)


def _extents():
    bb = profile().bounding_box()
    return bb.size.X, bb.size.Y


@pytest.mark.parametrize("taper", [5, 1.5, -3])
def test_a_drafted_spline_pocket_reads_its_draft_and_its_entry_s_sizes(taper):
    """Blind, 6 deep: one freeform pocket with the taper as its draft (negative: an undercut, wider
    deeper in), its width and length the profile's at the mouth, entered from the top. Before, a
    tapered spline cut read as nothing."""
    (p,) = run(cut(taper))["pockets"]
    sx, sy = _extents()
    assert (p["shape"], p["through"], p["axis"]) == ("freeform", False, [0, 0, -1]), p
    assert p["draft"] == pytest.approx(taper, abs=1e-3) and p["depth"] == pytest.approx(6), p
    assert p["length"] == pytest.approx(sx, abs=1e-3) and p["width"] == pytest.approx(sy, abs=1e-3), p
    assert p["center"][2] == pytest.approx(5)


def test_a_drafted_spline_window_and_one_cut_from_below():
    """Through (entered from the top, sized there), and the blind cut turned over (entered from below)."""
    (p,) = run(cut(3, depth=12))["pockets"]
    assert p["through"] is True and p["draft"] == pytest.approx(3, abs=1e-3), p
    assert p["length"] == pytest.approx(_extents()[0], abs=1e-3), p
    (q,) = run(Rot(180, 0, 0) * cut(5))["pockets"]
    assert q["axis"] == [0, 0, 1] and q["draft"] == pytest.approx(5, abs=1e-3) and q["depth"] == pytest.approx(6), q


@pytest.mark.parametrize("taper", [5, 10])
def test_a_drafted_oval_is_a_freeform_pocket_of_its_ellipse(taper):
    """A tapered ellipse's walls are ruled B-splines too: a freeform pocket 30 x 16 at the mouth
    (the oval finder reads an ellipse's extrusion). Tapered 10 degrees, OCCT skews its rulings: the
    normals lean 10.0 to 12.8 degrees, but the floor's outline is the mouth's offset by one
    distance, and the draft is read from the two: 10."""
    (p,) = run(cut(taper, face=Ellipse(15, 8)))["pockets"]
    assert p["shape"] == "freeform" and p["draft"] == pytest.approx(taper, abs=1e-3), p
    assert (p["length"], p["width"]) == (pytest.approx(30, abs=1e-3), pytest.approx(16, abs=1e-3)), p
    assert p["center"] == pytest.approx([0, 0, 5], abs=1e-6)


def test_a_drafted_pocket_turned_and_with_a_rounded_floor():
    """Turned and moved: the same draft and depth (the axis from the plane next to the walls). Its
    floor rounded: the axis from the face it opens onto, the depth to the floor."""
    moved = Pos(50, 20, -30) * Rot(20, 30, 40) * cut(5)
    (p,) = run(moved)["pockets"]
    assert p["draft"] == pytest.approx(5, abs=1e-3) and p["depth"] == pytest.approx(6, abs=1e-6), p
    part = cut(4)
    floor = part.edges().filter_by(GeomType.LINE, reverse=True).filter_by(lambda e: abs(e.center().Z + 1) < 1e-6)
    (p,) = run(fillet(floor, 1))["pockets"]
    assert p["draft"] == pytest.approx(4, abs=1e-3) and p["depth"] == pytest.approx(6, abs=1e-6), p


def test_walls_that_lean_unevenly_and_a_drafted_boss_are_no_pocket():
    """A ruled loft down to the profile scaled by 0.95 leans by 6 to 10 degrees, not one angle: not
    drafted, not read. A tapered spline boss has its material inside the outline: no pocket."""
    from build123d import scale
    top = Pos(0, 0, 5) * profile()
    bottom = Pos(0, 0, -1) * scale(profile(), 0.95)
    lofted = Box(80, 60, 10) - loft([bottom, top], ruled=True)
    assert run(lofted)["pockets"] == []
    boss = Box(80, 60, 10) + Rot(180, 0, 0) * (Pos(0, 0, -5) * extrude(profile(), amount=-6, taper=5))
    assert run(boss)["pockets"] == []


def test_a_drafted_window_is_entered_from_its_wider_end():
    """A through cut tapered -3 (wider at the bottom), freeform or rectangular: entered from below,
    where it is wider, so its draft reads 3 (a through hole's rule). Before, both were entered from
    the top and read as undercuts, and a turned copy could read either way."""
    from build123d import Rectangle
    for face in (profile(), Rectangle(30, 20)):
        (p,) = run(cut(-3, depth=12, face=face))["pockets"]
        assert p["through"] is True and p["axis"] == [0, 0, 1], p
        assert p["draft"] == pytest.approx(3, abs=1e-2) and p["center"][2] == pytest.approx(-5), p

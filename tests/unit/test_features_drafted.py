"""Slots with slanted walls (V grooves, dovetails, drafted channels), jail/cad/features_drafted.py
in process, the reply rebuilt by launcher/replies/features.py and its text.

The block is 100 x 60 x 30 (z from -15 to 15); each cut is a prism subtracted along Y, as a CAD
user makes it. Shapes with slanted faces that are no cut (an L bracket, a roof, a rebate turned
45°, ribs with draft, a rack's teeth, a chamfered block) are checked to list no slot.
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
    Cylinder,
    Locations,
    Mode,
    Plane,
    Polygon,
    Pos,
    Rotation,
    chamfer,
    export_step,
    extrude,
    fillet,
    import_step,
)

from jail.cad import features
from launcher.replies import features as R
from launcher.replies.cad import ReplyRefused
from launcher.tools import table
from tests.unit.test_features_channels import run, text  # the part's features as JSON, and as the text

BLOCK = (100, 60, 30)
TOP = 15


def near(a, b, tol=1e-4) -> bool:
    return all(abs(x - y) <= tol for x, y in zip(a, b))


def cut(profile, y0: float = -30, length: float = 60, x: float = 0):
    """The block less ``profile`` (x, z points, moved by ``x``) extruded along Y from ``y0`` for ``length``."""
    with BuildPart() as b:
        Box(*BLOCK)
        with BuildSketch(Plane.XZ.offset(-(y0 + length))):  # its normal is -Y
            Polygon(*[(px + x, pz) for px, pz in profile], align=None)
        extrude(amount=length, mode=Mode.SUBTRACT)
    return b.part


def vee(angle: float, depth: float = 8, **kw):
    w = depth * math.tan(math.radians(angle / 2))
    return cut([(-w, TOP), (w, TOP), (0, TOP - depth)], **kw)


def dovetail(wall_to_floor: float = 60, depth: float = 10, floor: float = 30, **kw):
    off = depth / math.tan(math.radians(wall_to_floor))
    return cut([(-floor / 2 + off, TOP), (floor / 2 - off, TOP), (floor / 2, TOP - depth), (-floor / 2, TOP - depth)],
               **kw)


def only_slot(part) -> dict:
    r = run(part)
    assert len(r["slots"]) == 1 and not r["steps"] and not r["chamfers"], r
    return r["slots"][0]


@pytest.mark.parametrize("angle", [60, 90, 120])
def test_v_groove_by_its_angle(angle):
    s = only_slot(vee(angle))
    assert s["draft"] == pytest.approx(angle / 2, abs=1e-4)
    assert s["width"] == pytest.approx(2 * 8 * math.tan(math.radians(angle / 2)), rel=1e-5)
    assert s["depth"] == pytest.approx(8) and s["length"] == pytest.approx(60)
    assert near(s["center"], (0, 0, TOP)) and near(s["axis"], (0, 0, -1)) and near(s["direction"], (0, 1, 0))
    assert s["ends"] == ["open", "open"] and s["open_end"] is True and s["through"] is False
    assert f"V {angle}° open at both ends depth 8 -Z along +Y at (0, 0, 15)" in text(vee(angle))


def test_a_v_groove_is_no_step():
    """It read "steps: 1 x width 11.3137 depth 41.0122 ... at (-25, 0, 40)": one wall taken for a
    floor, the other for its wall, and the block's top for a chamfer along that wall's top."""
    r = run(vee(90))
    assert r["steps"] == [] and "steps" not in text(vee(90))


def test_stopped_v_grooves():
    both = only_slot(vee(90, y0=-10, length=20))
    assert both["ends"] == ["square", "square"] and both["length"] == pytest.approx(20)
    one = only_slot(vee(90, y0=-10, length=40))  # y from -10 out through the +Y face
    assert one["ends"] == ["square", "open"] and near(one["direction"], (0, 1, 0))
    assert near(one["center"], (0, 10, TOP)) and one["length"] == pytest.approx(40)
    assert "V 90° square-ended open-ended depth 8 -Z opening +Y" in text(vee(90, y0=-10, length=40))


@pytest.mark.parametrize("make", [lambda: dovetail(60, y0=-10, length=40),
                                  lambda: cut([(-8, TOP), (8, TOP), (5, TOP - 10), (-5, TOP - 10)], y0=-10, length=40)])
def test_a_stopped_slanted_cut_has_no_step_at_its_end(make):
    """Its end face read as a step's floor, the cut's floor as its wall (fuzzing: "steps: 1 x width
    6.88563 depth 46.0747 length 12.9637 +Y along +X facing +Z"): the floor's ends meet the slanted
    walls, which close them."""
    s = only_slot(make())
    assert s["ends"] == ["square", "open"] and near(s["direction"], (0, 1, 0)) and s["length"] == pytest.approx(40)


def test_the_land_beside_a_v_groove_is_no_chamfer():
    """A V groove 4 mm from the block's side leaves a land between its wall and the side: it read
    "chamfers: 1 x 8.98 x 4.33" (the chamfer of a corner that would stand above the part)."""
    part = vee(120, x=50 - 4 - 8 * math.tan(math.radians(60)))
    r = run(part)
    assert r["chamfers"] == [] and len(r["slots"]) == 1 and r["slots"][0]["draft"] == pytest.approx(60)
    assert run(chamfer(part.edges().group_by(Axis.X)[-1], 1))["chamfers"][0]["count"] == 4  # the side's own


def test_dovetail():
    s = only_slot(dovetail(60))
    assert s["draft"] == pytest.approx(-30, abs=1e-4)
    assert s["width"] == pytest.approx(30 - 2 * 10 / math.tan(math.radians(60)), rel=1e-5)
    assert s["depth"] == pytest.approx(10) and near(s["center"], (0, 0, TOP))
    assert "width 18.453 dovetail 60° open at both ends depth 10" in text(dovetail(60))


def test_drafted_channel():
    s = only_slot(cut([(-8, TOP), (8, TOP), (5, TOP - 10), (-5, TOP - 10)]))
    assert s["draft"] == pytest.approx(math.degrees(math.atan(0.3)), abs=1e-4)
    assert s["width"] == pytest.approx(16) and s["depth"] == pytest.approx(10)
    assert "width 16 draft 16.6992° open at both ends" in text(cut([(-8, TOP), (8, TOP), (5, TOP - 10),
                                                                    (-5, TOP - 10)]))


def test_turned_and_moved():
    up = only_slot(vee(90))
    turn = Rotation(20, 30, 40) * Pos(100, 200, 300)
    s = only_slot(turn * vee(90))
    for k in ("width", "depth", "length", "draft"):
        assert s[k] == pytest.approx(up[k], rel=1e-5), k
    assert near(s["center"], tuple((turn * Pos(*up["center"])).position), 1e-3)
    axis = (turn * Pos(0, 0, -1)).position - (turn * Pos(0, 0, 0)).position
    assert near(s["axis"], tuple(axis), 1e-5)


def test_through_step_file(tmp_path):
    export_step(dovetail(60), str(tmp_path / "d.step"))
    s = only_slot(import_step(str(tmp_path / "d.step")))
    assert s["draft"] == pytest.approx(-30, abs=1e-4) and s["depth"] == pytest.approx(10)


def test_v_grooves_side_by_side_are_no_steps():
    """A machine table's V grooves 45 apart, cut by T-slots into lengths of 18 and 36, read as steps
    "width 8.48528 depth 31.8198" entered above the table: one V's wall a floor, its other wall a
    wall, and the land to the next V (whose wall faces the same way) a chamfer along its top."""
    with BuildPart() as b:
        Box(*BLOCK)
        with BuildSketch(Plane.XZ):
            for x in (-22.5, 22.5):
                Polygon((x - 6, TOP), (x + 6, TOP), (x, TOP - 6), align=None)
        extrude(amount=30, both=True, mode=Mode.SUBTRACT)
    r = run(b.part - Pos(0, 0, TOP) * Box(100, 10, 20))  # a channel across, deeper: each V cut in two
    assert r["steps"] == [], r["steps"]
    assert sorted((s["draft"], s["width"], s["depth"], s["length"]) for s in r["slots"] if s["draft"]) == [
        (45, 12, 6, 25)] * 4


@pytest.mark.parametrize("broken", ["chamfer", "fillet", "one chamfer"])
@pytest.mark.parametrize("make, sizes", [(lambda: vee(90), (16, 8, 45)), (lambda: dovetail(60), (18.453, 10, -30)),
                                         (lambda: cut([(-8, TOP), (8, TOP), (5, TOP - 10), (-5, TOP - 10)]),
                                          (16, 10, 16.6992))])
def test_a_broken_mouth_reads_at_the_face(make, sizes, broken):
    """The mouth's edges chamfered or rounded by 1 (one or both): the cut is read past them, its width
    and depth where the walls would meet the face, the breaks listed as chamfers or fillets (fuzzing
    read half the random V, dovetail and drafted cuts: a broken edge hid them)."""
    part = make()
    edges = part.edges().filter_by(Axis.Y).group_by(Axis.Z)[-1].sort_by(Axis.X)[1:3]
    if broken == "one chamfer":
        edges = edges[:1]
    part = (fillet if broken == "fillet" else chamfer)(edges, 1)
    r = run(part)
    assert [(s["width"], s["depth"], s["draft"]) for s in r["slots"]] == [pytest.approx(sizes, abs=1e-4)]
    assert near(r["slots"][0]["center"], (0, 0, TOP)) and r["steps"] == []
    breaks = r["fillets"] if broken == "fillet" else r["chamfers"]
    assert [g["count"] for g in breaks] == [1 if broken == "one chamfer" else 2]


def test_a_wall_split_by_a_crossing_hole_is_one_wall():
    """A hole through a dovetail's wall splits it in two faces along the cut: it read as no slot (the
    floor ran on past each piece); a wall's pieces in one plane are one wall, as a channel's."""
    r = run(dovetail(60) - Pos(-12, 0, 0) * Cylinder(3, 40))
    assert [(s["length"], s["width"], s["draft"]) for s in r["slots"]] == [pytest.approx((60, 18.453, -30), abs=1e-4)]
    assert len(r["holes"]) == 1 and r["holes"][0]["partial"] is True


def test_beside_a_hole():
    r = run(vee(90) - Pos(30, 0, 0) * Cylinder(4, 40))
    assert len(r["holes"]) == 1 and len(r["slots"]) == 1 and r["slots"][0]["draft"] == pytest.approx(45)


def _l_bracket():
    with BuildPart() as b:
        Box(60, 40, 10, align=(Align.MIN, Align.MIN, Align.MIN))
        Box(10, 40, 50, align=(Align.MIN, Align.MIN, Align.MIN))
    return b.part


def _prism(profile, depth=60):
    with BuildPart() as b:
        with BuildSketch(Plane.XZ):
            Polygon(*profile, align=None)
        extrude(amount=depth / 2, both=True)
    return b.part


def _ribs():
    """Two ribs with 3.8° draft standing on a plate: the gap between them is no cut."""
    with BuildPart() as b:
        Box(100, 60, 5, align=(Align.CENTER, Align.CENTER, Align.MAX))
        for x in (-15, 15):
            with BuildSketch(Plane.XZ):
                Polygon((x - 4, 0), (x + 4, 0), (x + 3, 15), (x - 3, 15), align=None)
            extrude(amount=30, both=True)
    return b.part


def _rack():
    with BuildPart() as b:
        Box(100, 20, 10, align=(Align.CENTER, Align.CENTER, Align.MAX))
        with BuildSketch(Plane.XZ):
            for i in range(-4, 5):
                Polygon((i * 10 - 5, 0), (i * 10 + 5, 0), (i * 10, 8), align=None)
        extrude(amount=10, both=True)
    return b.part


def _notch_with_chamfered_corners():
    """build123d's intersecting_chamfers example: a notch whose inner corners are chamfered read as
    "slots: 1 x length 0.9 width 1.27279 draft 45° ... axis (-0.7071, 0.7071, 0)" (a corner's chamfer
    for a floor, the notch's sides for walls, two chamfer strips at a wall's end for its mouth)."""
    with BuildPart() as b:
        with Locations((-1, -1, 0)):
            Box(1, 2, 1, align=(Align.CENTER, Align.MIN, Align.MIN))
        Box(1, 1, 2, align=(Align.CENTER, Align.MIN, Align.MIN))
        with Locations((1, -1, 0)):
            Box(1, 2, 1, align=(Align.CENTER, Align.MIN, Align.MIN))
        chamfer(b.edges().filter_by_position(Axis.Z, 0, 1, inclusive=(True, False)), length=0.1)
        chamfer(b.edges().filter_by_position(Axis.Z, 1, 2, inclusive=(False, True)), length=0.1)
    return b.part


NO_SLOT = {
    "L bracket": _l_bracket,
    "roof": lambda: _prism([(-20, 0), (20, 0), (20, 10), (0, 20), (-20, 10)]),
    "ribs with draft": _ribs,
    "rack": _rack,
    "chamfered block": lambda: chamfer(Box(40, 30, 20).edges(), 2),
    "notch with chamfered corners": _notch_with_chamfered_corners,
}


@pytest.mark.parametrize("name", list(NO_SLOT))
def test_slanted_faces_that_are_no_cut(name):
    assert run(NO_SLOT[name]())["slots"] == []


def test_a_rebate_turned_45_degrees_stays_a_step():
    r = run((Box(*BLOCK) - Pos(45, 0, 10) * Box(10, 60, 10)).rotate(Axis.Y, 45))
    assert r["slots"] == [] and len(r["steps"]) == 1
    st = r["steps"][0]
    assert st["width"] == pytest.approx(10) and st["depth"] == pytest.approx(10)


# --------------------------------------------------------------- the launcher's rebuild
def _slot(**kw):
    s = dict(center=[0, 0, 15], length=60, width=16, axis=[0, 0, -1], direction=[0, 1, 0], depth=8, through=False,
             open_end=True, arc=None, counterbore=None, ends=["open", "open"], draft=45.0)
    s.update(kw)
    return s


def _reply(slot) -> dict:
    r = {k: [] for k in features.KINDS}
    r["slots"] = [slot]
    return r


@pytest.mark.parametrize("draft", [91, -90.5, "45", True, float("nan"), float("inf"), [45], "\x1b[2J"])
def test_a_bad_draft_is_refused(draft):
    with pytest.raises(ReplyRefused, match=r"slots\[0\]\.draft"):
        R.features_reply(_reply(_slot(draft=draft)), "p")


@pytest.mark.parametrize("tee", [{"width": -1, "height": 2}, {"width": 2}, {"width": "2", "height": 2},
                                 {"width": float("nan"), "height": 2}, [16, 6], "\x1b[2J", True])
def test_a_bad_tee_is_refused(tee):
    with pytest.raises(ReplyRefused, match=r"slots\[0\]\.tee"):
        R.features_reply(_reply(_slot(draft=None, tee=tee)), "p")


def test_a_tee_is_rebuilt_with_its_two_sizes_only():
    out = R.features_reply(_reply(_slot(draft=None, tee={"width": 16, "height": 6, "\x1b[2J": 1})), "p")
    assert out["slots"][0]["tee"] == {"width": 16.0, "height": 6.0}
    line = table.render_text("features", {"ok": True, "features": out})
    assert "width 16 T-slot (cavity 16 wide, 6 high) open at both ends depth 8" in line and "\x1b" not in line


def test_a_missing_draft_is_square_walls():
    s = _slot()
    del s["draft"]
    assert R.features_reply(_reply(s), "p")["slots"][0]["draft"] is None


def test_draft_text():
    def line(**kw):
        return table.render_text("features", {"ok": True, "features": R.features_reply(_reply(_slot(**kw)), "p")})
    assert "width 16 V 90° open" in line()
    assert "width 16 dovetail 60° open" in line(draft=-30)
    assert "width 16 draft 10° open" in line(draft=10)
    assert "width 16 open at both ends" in line(draft=None)
    assert "draft 45°" in line(width=1, depth=10 ** 6) and " V " not in line(width=1, depth=10 ** 6)


def test_a_broken_solid_gets_a_clear_error(monkeypatch):
    """A random cut left an invalid solid (fuzzing) on which OCCT's classifier raised a bare
    ``Standard_NullObject`` out of the finders: on an invalid solid the error now says so and what to
    run; on a valid one the finder's own error still surfaces (a bug, not the shape)."""
    from build123d import Shell, Solid

    from jail.cad.measure import MeasureError

    class Standard_NullObject(Exception):  # OCCT's name, as the user would see it
        pass

    def broken(*a, **kw):
        raise Standard_NullObject()

    monkeypatch.setattr(features, "find", broken)
    open_box = Solid(Shell(Box(10, 10, 10).faces()[:5]))  # a face missing: BRepCheck says invalid
    assert not open_box.is_valid
    with pytest.raises(MeasureError, match=r"'p' is not a valid solid \(BRepCheck\), and features could not "
                                           r"read it \(Standard_NullObject\); validate says what is wrong"):
        features.features({"p": open_box}, "p")
    with pytest.raises(Standard_NullObject):
        features.features({"p": Box(10, 10, 10)}, "p")

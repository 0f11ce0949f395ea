"""Notches (jail/cad/features_slots.py ``_open_slot``, ``_leaves_by``): a concave cylinder over less
than the turn of a hole open on one side, cut into the surface it leaves by, reads as a slot open
at one end; in process, the reply rebuilt by launcher/replies/features.py.

A knob's flutes (a cutter centred on its rim: each wall a little under half a turn, its straight
edges on the round rim) read as nothing before: only exact half cylinders whose edges lay in one
plane square to the opening were notches. A chamfer or a rounding round that rim, cut through by
the flutes, read once per piece (``chamfers: 18 x 1``).
"""
from __future__ import annotations

import json
import math

import pytest
from build123d import (
    Align,
    Axis,
    Box,
    BuildPart,
    BuildSketch,
    Circle,
    Cylinder,
    Locations,
    Mode,
    Plane,
    Pos,
    Rectangle,
    Rot,
    chamfer,
    export_step,
    extrude,
    fillet,
    import_step,
)

from jail.cad import features
from launcher.replies import features as R
from launcher.tools import table


def run(part) -> dict:
    return json.loads(json.dumps(features.features({"p": part}, "p"), allow_nan=False))


def text(part) -> str:
    return table.render_text("features", {"ok": True, "features": R.features_reply(run(part), "p")})


def knob(top: str | None = None, flutes: int = 18, r: float = 1.2, at: float = 15.0, radius: float = 15.0):
    """A knob of ``radius``, 12 high, ``flutes`` cutters of radius ``r`` centred ``at`` from its axis;
    its top edge (and with "both" its bottom one) rounded or chamfered first."""
    k = Cylinder(radius, 12)
    if top == "fillet":
        k = fillet(k.edges().sort_by(Axis.Z)[-1], 2)
    elif top == "chamfer":
        k = chamfer(k.edges().sort_by(Axis.Z)[-1], 1)
    elif top == "both":
        k = chamfer(k.edges().sort_by(Axis.Z)[-1], 1)
        k = chamfer(k.edges().sort_by(Axis.Z)[0], 1)
    return k - [Rot(0, 0, i * 360 / flutes) * Pos(at, 0, 0) * Cylinder(r, 12) for i in range(flutes)]


def notches(part) -> list[tuple]:
    return sorted((round(s["length"], 4), round(s["width"], 4), s["through"]) for s in run(part)["slots"]
                  if s["open_end"])


def _radial(reply: dict) -> None:
    """Each notch opens away from the knob's axis, its centre on the bolt circle of its pattern."""
    for s in reply["slots"]:
        c = s["center"]
        rho = math.hypot(c[0], c[1])
        assert abs((c[0] * s["direction"][0] + c[1] * s["direction"][1]) / rho - 1) < 1e-6, s


def test_a_knob_s_flutes_are_notches_on_a_circle(tmp_path):
    part = knob()
    reply = run(part)
    assert notches(part) == [(1.2, 2.4, True)] * 18, reply["slots"]
    _radial(reply)
    (pat,) = reply["patterns"]
    assert (pat["type"], pat["of"], pat["count"], pat["radius"]) == ("bolt_circle", "slots", 18, 14.4), pat
    assert "slots: 18 x length 1.2 width 2.4 open-ended through -Z turned round a bolt circle r=14.4" in text(part)
    assert reply["holes"] == reply["fillets"] == reply["pockets"] == []
    turned = Rot(20, 30, 40) * part
    assert notches(turned) == [(1.2, 2.4, True)] * 18
    export_step(part, str(tmp_path / "knob.step"))
    assert notches(import_step(str(tmp_path / "knob.step"))) == [(1.2, 2.4, True)] * 18


@pytest.mark.parametrize("at, depth", [(15.5, 1.0), (14.9, 1.6), (15.8, 0.7)])
def test_a_flute_cut_from_beyond_or_within_the_rim_reads_its_depth(at, depth):
    """A cutter centred outside the rim leaves less than half a turn (a fluted column's), one centred
    just inside a little more: ``length`` is the depth below the rim on the flute's centre line."""
    part = knob(at=at, r=1.5, flutes=12)
    assert notches(part) == [(depth, 3.0, True)] * 12, run(part)["slots"]


@pytest.mark.parametrize("top, chamfers, fillets", [("fillet", [], [(2.0, 1)]), ("chamfer", [(1.0, 1)], []),
                                                    ("both", [(1.0, 2)], [])])
def test_a_rounded_or_chamfered_rim_reads_once_and_its_flutes_still_read(top, chamfers, fillets):
    """The flutes cut the rim's chamfer in 18 pieces: one chamfer, as one edge was chamfered; and the
    flutes' straight edges stop short of their ends, at the chamfer or the rounding."""
    part = knob(top)
    reply = run(part)
    assert notches(part) == [(1.2, 2.4, True)] * 18, reply["slots"]
    assert [(c["size"], c["count"]) for c in reply["chamfers"]] == chamfers, reply["chamfers"]
    assert [(f["radius"], f["count"]) for f in reply["fillets"]] == fillets, reply["fillets"]


def test_a_rounding_cut_through_by_deep_flutes_is_one_fillet():
    part = Cylinder(15, 12)
    part = fillet(part.edges().sort_by(Axis.Z)[-1], 1)
    part = part - [Rot(0, 0, a) * Pos(15, 0, 0) * Cylinder(1.5, 12) for a in range(0, 360, 30)]
    reply = run(part)
    assert [(f["radius"], f["count"]) for f in reply["fillets"]] == [(1.0, 1)], reply["fillets"]
    assert notches(part) == [(1.5, 3.0, True)] * 12


def test_notches_in_a_plate_s_edge():
    """Half holes (the notch as before) and a scallop cut by a cutter centred beyond the edge."""
    half = Box(60, 30, 4) - [Pos(x, 15, 0) * Cylinder(1.5, 4) for x in (-20, 0, 20)]
    assert notches(half) == [(1.5, 3.0, True)] * 3
    scallop = Box(60, 30, 4) - Pos(0, 15.75, 0) * Cylinder(1.5, 4)
    (s,) = run(scallop)["slots"]
    assert (s["length"], s["width"], s["direction"]) == (0.75, 3.0, [0.0, 1.0, 0.0]), s
    assert s["center"] == [0.0, 14.625, 2.0], s  # the middle of its depth, on the entry face
    blind = Box(60, 30, 4) - Pos(0, 15.75, 1) * Cylinder(1.5, 2, align=(Align.CENTER, Align.CENTER, Align.MIN))
    (s,) = run(blind)["slots"]
    assert (s["length"], s["through"], s["depth"]) == (0.75, False, 1.0), s


def _d_pocket():
    with BuildPart() as p:
        Box(60, 40, 10)
        with BuildSketch(Plane.XY.offset(5)):
            Circle(8)
            Rectangle(20, 10, align=(Align.CENTER, Align.MAX), mode=Mode.SUBTRACT)
        extrude(amount=-4, mode=Mode.SUBTRACT)
    return p.part


def _dogbone_pocket():
    with BuildPart() as p:
        Box(60, 40, 10)
        with BuildSketch(Plane.XY.offset(5)):
            Rectangle(30, 20)
            with Locations((13.5, 8.5), (-13.5, 8.5), (13.5, -8.5), (-13.5, -8.5)):
                Circle(3)
        extrude(amount=-4, mode=Mode.SUBTRACT)
    return p.part


@pytest.mark.parametrize("make", [
    _d_pocket,  # its arc's edges meet its flat, which faces back into the arc
    lambda: Box(60, 40, 10) - Cylinder(5, 10) - Box(6, 40, 10),  # a hole crossed by a slot: two walls apart
    lambda: Cylinder(5, 30) - Pos(0, 9.5, 0) * Box(10, 10, 30),  # a shaft's flat
    lambda: fillet(Box(60, 40, 10).edges().filter_by(Axis.Z), 4),  # rounded corners
    _dogbone_pocket,  # corner reliefs: holes open on one side, as before
])
def test_no_notch_where_a_cylinder_does_not_cut_the_surface_it_leaves_by(make):
    reply = run(make())
    assert [s for s in reply["slots"] if s["open_end"]] == [], reply["slots"]

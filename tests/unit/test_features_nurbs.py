"""``features`` on all-NURBS parts (every face a B-spline, as Rhino and some exporters write STEP
files): faces on cylinders, cones, spheres and tori read as such (jail/cad/features_faces.py), in
process."""
from __future__ import annotations

import json

import pytest
from build123d import Box, Cylinder, GeomType, Pos, Rot, Torus, export_step, import_step

from tests.unit.test_features import boss_part, hub, near, plate, run, slotted, tilted, tube


def _all_nurbs(part):
    """``part`` with every face a B-spline (OCCT's NURBS conversion: what Rhino and some exporters write)."""
    from OCP.BRepBuilderAPI import BRepBuilderAPI_NurbsConvert
    from build123d import Compound
    return Compound(BRepBuilderAPI_NurbsConvert(part.wrapped, True).Shape())


def _rounded(d: dict) -> str:
    """A reply with its numbers at 4 decimals (the NURBS copy's differ in the last digits)."""
    def r(x):
        if isinstance(x, float):
            return round(x, 4) + 0.0
        if isinstance(x, dict):
            return {k: r(v) for k, v in x.items()}
        return [r(v) for v in x] if isinstance(x, list) else x
    return json.dumps(r(d), sort_keys=True)


def _ball_ended():
    from build123d import Sphere
    return Box(60, 40, 20) - Pos(0, 0, 5) * Cylinder(4, 10) - Sphere(4) - Pos(20, 0, 0) * Torus(6, 2)


def _dimpled():
    from build123d import Sphere
    return Box(40, 40, 10) - Pos(0, 0, 7) * Sphere(3) - Pos(10, 10, 4) * Sphere(3)


@pytest.mark.parametrize("make", [plate, boss_part, hub, tube, tilted, lambda: slotted(3, True), _ball_ended,
                                  _dimpled], ids=["plate", "boss", "hub", "tube", "tilted", "slot", "ball", "dimples"])
def test_an_all_nurbs_part_reads_every_feature_as_the_analytic_part(make, tmp_path):
    """The plate (its counterbore, countersink, blind and through holes, rounded corners), a boss,
    radial and cross holes, tilted holes, a chamfered slot, a ball-ended hole, a ring groove and two
    dimples,
    with every face a B-spline, read
    exactly as the analytic part: their B-spline faces that lie on a cylinder, cone, sphere or torus
    (within 1e-6 mm) are read as that surface, the angle a partial one spans from its edges. Before,
    the plate's counterbore read as two concentric holes and its countersink as a plain hole."""
    part = make()
    want = _rounded(run(part))
    nurbs = _all_nurbs(part)
    assert {f.geom_type for f in nurbs.faces()} == {GeomType.BSPLINE}
    assert _rounded(run(nurbs)) == want
    if make is plate:  # and through a STEP file, as such parts arrive
        export_step(nurbs, str(tmp_path / "n.step"))
        assert _rounded(run(import_step(str(tmp_path / "n.step")))) == want


def test_an_all_nurbs_plate_turned_and_moved_reads_its_holes():
    """The done-means plate turned and moved, then converted: the same holes, counterbore and
    countersink included, and its corners as fillets (the surfaces are placed where the faces are)."""
    moved = Pos(120, -40, 35) * Rot(15, 25, 35) * plate()
    want, got = run(moved), run(_all_nurbs(moved))
    key = lambda h: (h["diameter"], h["depth"], h["through"], h["countersink"], h["counterbore"])  # noqa: E731
    assert sorted(map(key, got["holes"]), key=str) == sorted(map(key, want["holes"]), key=str)
    at = lambda h: [round(x, 2) for x in h["center"]]  # noqa: E731
    assert all(near(a["center"], b["center"], 1e-4) for a, b in zip(sorted(got["holes"], key=at),
                                                                    sorted(want["holes"], key=at)))
    assert [(f["radius"], f["count"]) for f in got["fillets"]] == [(5, 4)] and got["bosses"] == []


def _divided(part, degrees: float):
    """``part`` with each cylinder, cone, sphere and torus split into faces of at most ``degrees`` round
    their axes (OCCT's ``ShapeUpgrade_ShapeDivideAngle``), as some CAD systems write STEP files (two
    half cylinders a hole)."""
    import math

    from OCP.ShapeUpgrade import ShapeUpgrade_ShapeDivideAngle
    from build123d import Part
    d = ShapeUpgrade_ShapeDivideAngle(math.radians(degrees), part.wrapped)
    d.Perform()
    return Part(d.Result())


@pytest.mark.parametrize("make", [plate, boss_part, hub, tube], ids=["plate", "boss", "hub", "tube"])
def test_a_part_whose_round_faces_are_split_reads_as_the_whole_part(make, tmp_path):
    """A part with its cylinders and cones split into halves, quarters and eighths reads as the part:
    ``features.find`` merges the faces that lie on one surface first (build123d's ``clean``). Before,
    quarters read the done-means plate's countersunk hole as a plain one and "chamfers: 4 x 2.7", and
    eighths a through hole as 8 concave fillets. Through a STEP file too."""
    want = _rounded(run(make()))
    for degrees in (180, 90, 45):
        assert _rounded(run(_divided(make(), degrees))) == want, degrees
    export_step(_divided(make(), 90), str(tmp_path / "split.step"))
    assert _rounded(run(import_step(str(tmp_path / "split.step")))) == want

"""jail/cad/measure.py in-process: known volumes, areas, diameters, distances, and the validate verdicts."""
from __future__ import annotations

import json
import math

import pytest

from build123d import (Box, BuildPart, Compound, Cylinder, Face, GridLocations, Hole, Line, Pos,
                       Sphere)

from jail.cad import measure

from jail.cad import runner, summary


def ns_with(**objs):
    ns = runner.new_namespace(["build123d"], [], python_layers=False)
    ns.update(objs)
    return ns


def plate():
    with BuildPart() as p:
        Box(80, 60, 10)
        with GridLocations(60, 40, 2, 2):
            Hole(4)
    return p.part


def strict_json(d):
    return json.loads(json.dumps(d, allow_nan=False))


def test_box_numbers():
    d = strict_json(measure.measure(ns_with(b=Pos(5, 0, 0) * Box(10, 20, 30)), "b"))
    assert d["volume"] == 6000.0
    assert d["area"] == 2 * (200 + 300 + 600)
    assert d["bbox"] == {"min": [0.0, -10.0, -15.0], "max": [10.0, 10.0, 15.0],
                         "size": [10.0, 20.0, 30.0], "center": [5.0, 0.0, 0.0]}
    assert d["center_of_mass"] == [5.0, 0.0, 0.0]
    assert d["counts"] == {"solids": 1, "shells": 1, "faces": 6, "wires": 6, "edges": 12, "vertices": 8}
    assert d["face_types"] == [{"type": "plane", "count": 6, "area": 2200.0}]
    assert "valid" not in d and d["closed"] and d["manifold"]


def test_measure_checks_validity_only_when_asked(monkeypatch):
    """The full BRepCheck is validate's job (issue 22): measure runs it with check=True only; the
    cheap edge checks (closed, manifold, free edges) stay."""
    calls = []
    real = measure.is_valid
    monkeypatch.setattr(measure, "is_valid", lambda s: calls.append(1) or real(s))
    ns = ns_with(p=plate())
    d = measure.measure(ns, "p")
    assert calls == [] and "valid" not in d
    assert (d["closed"], d["manifold"], d["free_edges"], d["non_manifold_edges"]) == (True, True, 0, 0)
    d = measure.measure(ns, "p", check=True)
    assert calls == [1] and d["valid"] is True and d["closed"]
    msg, _ = measure.op_measure({"t": "measure", "name": "p", "check": True}, type("C", (), {"namespace": ns})())
    assert msg["ok"] and msg["result"]["valid"] is True
    msg, _ = measure.op_measure({"t": "measure", "name": "p", "check": "yes"}, type("C", (), {"namespace": ns})())
    assert "valid" not in msg["result"]


def test_edge_checks_find_free_edges():
    """An open shell (a box without its top) is not closed: 4 free edges."""
    from build123d import Shell
    from OCP.BRepBuilderAPI import BRepBuilderAPI_MakeSolid
    from OCP.TopoDS import TopoDS
    faces = sorted(Box(10, 10, 10).faces(), key=lambda f: f.center().Z)[:-1]
    open_solid = BRepBuilderAPI_MakeSolid(TopoDS.Shell(Shell(faces).wrapped)).Solid()
    d = measure.edge_checks(open_solid)
    assert d["closed"] is False and d["free_edges"] == 4 and d["manifold"] is True
    assert measure.edge_checks(Box(1, 1, 1).wrapped)["free_edges"] == 0


def test_plate_hole_inventory():
    d = measure.measure(ns_with(p=plate()), "p")
    assert math.isclose(d["volume"], 80 * 60 * 10 - 4 * math.pi * 16 * 10, rel_tol=1e-5)
    cyl = d["cylinders"]
    assert cyl == [{"diameter": 8.0, "faces": 4, "hole": True, "full": True, "over_half": True,
                    "area": pytest.approx(4 * 2 * math.pi * 4 * 10, rel=1e-5)}]
    kinds = {k["type"]: k["count"] for k in d["face_types"]}
    assert kinds == {"plane": 6, "cylinder": 4}


def test_boss_is_not_a_hole_and_sphere_is_a_sphere():
    ns = ns_with(c=Cylinder(3, 10), s=Sphere(2))
    c = measure.measure(ns, "c")
    assert c["cylinders"][0]["diameter"] == 6.0 and c["cylinders"][0]["hole"] is False
    assert c["cylinders"][0]["full"] is True
    s = measure.measure(ns, "s")
    assert s["face_types"][0]["type"] == "sphere"
    assert math.isclose(s["volume"], 4 / 3 * math.pi * 8, rel_tol=1e-6)


def test_face_and_edges():
    ns = ns_with(f=Face.make_rect(4, 5), l=Line((0, 0), (3, 4)))
    f = measure.measure(ns, "f")
    assert f["area"] == 20.0 and "volume" not in f and "closed" not in f
    e = measure.measure(ns, "l")
    assert e["length"] == 5.0 and "face_types" not in e


def test_builder_is_measured_through_its_part():
    with BuildPart() as bp:
        Box(2, 2, 2)
    assert measure.measure(ns_with(bp=bp), "bp")["volume"] == 8.0


def test_patched_build123d_does_not_change_the_numbers(monkeypatch):
    b = Box(1, 2, 3)
    owner = next(c for c in type(b).__mro__ if "volume" in vars(c))
    monkeypatch.setattr(owner, "volume", property(lambda self: -1.0))
    assert b.volume == -1.0
    assert measure.measure(ns_with(b=b), "b")["volume"] == 6.0


def test_distance_apart_touching_overlapping():
    ns = ns_with(a=Box(10, 10, 10), b=Pos(15, 0, 0) * Box(10, 10, 10), c=Pos(10, 0, 0) * Box(10, 10, 10),
                 d=Pos(5, 0, 0) * Box(10, 10, 10), inner=Box(2, 2, 2))
    r = strict_json(measure.distance(ns, "a", "b"))
    assert r["distance"] == 5.0 and r["intersect"] is False
    assert r["point_a"][0] == 5.0 and r["point_b"][0] == 10.0
    t = measure.distance(ns, "a", "c")
    assert t["distance"] == 0.0 and t["overlap_volume"] == 0.0 and t["intersect"] is False
    o = measure.distance(ns, "a", "d")
    assert o["distance"] == 0.0 and o["intersect"] is True and o["overlap_volume"] == 500.0
    i = measure.distance(ns, "a", "inner")
    assert i["intersect"] is True and i["overlap_volume"] == 8.0


def test_validate_pass_and_fail():
    ns = ns_with(p=plate(), f=Face.make_rect(3, 3),
                 two=Compound([Box(2, 2, 2), Pos(1, 0, 0) * Box(2, 2, 2)]),
                 apart=Compound([Box(2, 2, 2), Pos(5, 0, 0) * Box(2, 2, 2)]))
    ok = strict_json(measure.validate(ns, "p"))
    assert ok["status"] == "PASS" and ok["reasons"] == [] and ok["warnings"] == []
    assert {c["check"] for c in ok["checks"]} >= {"valid", "has_solid", "closed", "manifold",
                                                  "positive_volume", "self_intersection"}
    face = measure.validate(ns, "f")
    assert face["status"] == "FAIL" and "no solid" in face["reasons"][0]
    overl = measure.validate(ns, "two")
    assert overl["status"] == "FAIL" and overl["reasons"] == ["solids 0 and 1 overlap by 4 mm^3 (fuse them, or "
                                                              "move one)"], overl["reasons"]
    apart = measure.validate(ns, "apart")
    assert apart["status"] == "PASS" and "2 separate solids" in apart["warnings"][0]


def test_an_assembly_whose_parts_only_touch_passes_with_a_warning():
    """A lid resting on a box (a shared face, no shared volume) is what an assembly looks like:
    BOPAlgo flags the contact as interference, but it is not a fault; overlapping solids are,
    named with the volume they share, and a fault inside one solid keeps the general reason."""
    lid_on_box = Compound([Box(10, 10, 10), Pos(0, 0, 6) * Box(10, 10, 2), Pos(20, 0, 0) * Box(2, 2, 2)])
    v = strict_json(measure.validate(ns_with(a=lid_on_box), "a"))
    assert v["status"] == "PASS" and v["reasons"] == [], v
    assert any("touch" in w for w in v["warnings"]) and any("3 separate solids" in w for w in v["warnings"]), v
    three = Compound([Box(10, 10, 10), Pos(0, 0, 5) * Box(10, 10, 2), Pos(20, 0, 0) * Box(2, 2, 2),
                      Pos(20, 0, 1.5) * Box(2, 2, 2)])
    v = strict_json(measure.validate(ns_with(t=three), "t"))
    assert v["status"] == "FAIL" and v["reasons"] == [
        "solids 0 and 1 overlap by 100 mm^3, solids 2 and 3 by 2 mm^3 (fuse them, or move one)"], v


def test_open_shell_is_not_closed():
    from build123d import Shell
    box = Box(1, 1, 1)
    shell = Shell(box.faces()[:5])
    d = measure.measure(ns_with(s=shell), "s")
    assert "closed" not in d  # no solid
    v = measure.validate(ns_with(s=shell), "s")
    assert v["status"] == "FAIL"


def test_errors_name_what_exists():
    ns = ns_with(b=Box(1, 1, 1), n=3)
    with pytest.raises(measure.MeasureError, match=r"no object named 'x'; shapes in the session: b"):
        measure.measure(ns, "x")
    with pytest.raises(measure.MeasureError, match="'n' is a int, not a shape"):
        measure.measure(ns, "n")
    with pytest.raises(measure.MeasureError, match="required"):
        measure.measure(ns, "")
    with pytest.raises(measure.MeasureError, match="no shapes yet"):
        measure.select_shapes(ns_with(), None)


def test_select_all_skips_star_imports_and_modules():
    ns = ns_with(b=Box(1, 1, 1), k=5)
    assert [n for n, _ in measure.select_shapes(ns, None)] == ["b"]


def test_execute_summary_shows_solid_and_face_counts():
    ns = ns_with(two=Compound([Box(1, 1, 1), Pos(5, 0, 0) * Box(1, 1, 1)]), one=Box(1, 1, 1))
    objs = {o["name"]: o for o in summary.summarize(ns)}
    from launcher.tools.text import describe  # the launcher renders summaries; the jail only makes them
    assert "2 solids, 12 faces, 24 edges" in describe(objs["two"])
    assert "1 solid, 6 faces, 12 edges" in describe(objs["one"])


def test_select_all_draws_a_builder_and_its_part_once():
    with BuildPart() as bp:
        Box(2, 2, 2)
    ns = ns_with(bp=bp, part=bp.part, other=Box(1, 1, 1))
    assert [n for n, _ in measure.select_shapes(ns, None)] == ["part", "other"]
    assert [n for n, _ in measure.select_shapes(ns, ["bp", "part"])] == ["bp", "part"]  # asked for: kept


def test_a_mesh_from_import_stl_gets_a_clear_refusal(tmp_path):
    """import_stl's Face of triangles has no surface: measure saw an empty box, distance nothing,
    and features crashed its process (SIGSEGV in OCCT's surface query). Each now says what it is
    and what gives a Solid."""
    from build123d import export_stl, import_stl
    from jail.cad import features
    export_stl(Box(4, 3, 2), str(tmp_path / "b.stl"))
    ns = ns_with(m=import_stl(str(tmp_path / "b.stl")), b=Box(1, 1, 1))
    assert measure.is_mesh(ns["m"].wrapped) and not measure.is_mesh(ns["b"].wrapped)
    for call, what in ((lambda: measure.measure(ns, "m"), "measure"), (lambda: measure.distance(ns, "b", "m"), "distance"),
                       (lambda: features.features(ns, "m"), "features")):
        with pytest.raises(measure.MeasureError) as e:
            call()
        assert f"is a mesh (faces of triangles with no surface, as import_stl gives): {what} needs B-rep" in str(e.value)
        assert "Mesher().read('part.stl') or the import_file tool give a Solid" in str(e.value)


def test_empty_shapes_are_called_empty():
    """Part() (build123d asserts on its unset shape) and Compound([]): the summary says empty (it was
    a summary error for Part(), and "bbox 0x0x0 ... valid" for the compound); measure and render say
    what the name holds instead of "a Part, not a shape"."""
    from jail.cad import render
    from jail.cad.render_view import RenderError
    from launcher.tools.text import describe
    ns = ns_with()
    exec("p = Part()\ne = Compound([])\nq = Part() + Box(1, 1, 1)", ns)
    items = {o["name"]: o for o in summary.summarize(ns)}
    for name in ("p", "e"):
        assert items[name].get("empty") is True and "bbox" not in items[name] and "valid" not in items[name], items
        assert describe(items[name]) == "empty (no solids, faces or edges)", items[name]
    assert items["q"]["volume"] == pytest.approx(1.0) and items["q"]["valid"] is True
    with pytest.raises(measure.MeasureError, match=r"'p' is an empty Part \(no solids, faces or edges\)"):
        measure.measure(ns, "p")
    with pytest.raises(RenderError, match=r"'p' is an empty Part \(no solids, faces or edges\)"):
        render.render(ns, ["p"])
    from jail.cad import serialize
    with pytest.raises(serialize.ExportError, match=r"'p' is an empty Part \(no solids, faces or edges\)"):
        serialize.serialize(ns, "p", "step", 10 ** 8)  # was an AssertionError with no words


def test_a_mesh_exports_where_its_triangles_are_kept(tmp_path):
    """import_stl's mesh: STEP kept none of it (a file of 0x0x0) and the SVG projection crashed the
    process; those say why, while STL, 3MF and BREP write its triangles (re-read: the same box)."""
    from build123d import export_stl, import_stl
    from jail.cad import serialize
    export_stl(Box(4, 3, 2), str(tmp_path / "b.stl"))
    ns = ns_with(m=import_stl(str(tmp_path / "b.stl")))
    for fmt in ("step", "svg", "dxf"):
        with pytest.raises(serialize.ExportError, match=f"'m' is a mesh .*: {fmt.upper()} needs B-rep faces;.* "
                                                         "STL, 3MF and BREP keep its triangles"):
            serialize.serialize(ns, "m", fmt, 10 ** 8)
    for fmt in ("stl", "3mf", "brep"):
        data, meta = serialize.serialize(ns, "m", fmt, 10 ** 8)
        assert data and meta["check"]["bbox"]["size"] == pytest.approx([4, 3, 2], abs=1e-3), (fmt, meta)


def test_rounded_edges_and_fillets_are_not_holes_or_bosses():
    """The issue's bracket: rounded corners were listed as bosses and a fillet in a corner as a
    hole. A cylinder face covering part of the turn is a rounded edge (convex) or a fillet
    (concave); a wall OCCT holds as two halves is still one hole, all the way round."""
    from OCP.ShapeUpgrade import ShapeUpgrade_ShapeDivideClosed
    from build123d import Align, Axis, Solid, fillet
    mn = (Align.CENTER, Align.CENTER, Align.MIN)
    tray = fillet(Box(80, 60, 30, align=mn).edges().filter_by(Axis.Z), 5)
    tray -= Pos(0, 0, 2) * fillet(Box(76, 56, 30, align=mn).edges().filter_by(Axis.Z), 3)
    cyl = measure.measure(ns_with(t=tray), "t")["cylinders"]
    assert [(c["diameter"], c["faces"], c["hole"], c["full"]) for c in cyl] == [(6.0, 4, True, False),
                                                                                 (10.0, 4, False, False)]
    div = ShapeUpgrade_ShapeDivideClosed(plate().wrapped)
    div.SetNbSplitPoints(1)
    div.Perform()
    cyl = measure.measure(ns_with(p=Solid(div.Result())), "p")["cylinders"]
    assert [(c["diameter"], c["faces"], c["hole"], c["full"]) for c in cyl] == [(8.0, 8, True, True)]


def test_a_wall_over_half_a_turn_is_a_partial_hole_or_shaft_not_a_fillet():
    """A keyed bore, a bore cut by the part's edge and a shaft with a flat: their walls turn more than
    half round, which no fillet or slot end does, so ``over_half`` is true and the text names a partial
    hole or shaft (a keyed bore once read "fillet/slot end"). A fillet and a slot's end stay at most half."""
    from build123d import Axis, Cylinder, Rectangle, SlotOverall, extrude, fillet
    hub = Cylinder(20, 10) - Cylinder(8, 10) - Pos(8, 0, 0) * Box(6, 5, 10)
    edge = Box(40, 20, 5) - Pos(17, 0, 0) * Cylinder(6, 5)  # a bore across the end face: 240 degrees
    shaft = Cylinder(5, 20) - Pos(0, 4.5 + 2, 0) * Box(10, 4, 20)  # a flat 0.5 deep
    slot = Box(40, 20, 5) - extrude(SlotOverall(20, 6), 5, both=True)
    corner = fillet(Box(20, 20, 5).edges().filter_by(Axis.Z), 3)
    want = {"hub": {(16.0, True, False, True), (40.0, False, True, True)},
            "edge": {(12.0, True, False, True)},
            "shaft": {(10.0, False, False, True)},
            "slot": {(6.0, True, False, False)},
            "corner": {(6.0, False, False, False)}}
    for name, shp in (("hub", hub), ("edge", edge), ("shaft", shaft), ("slot", slot), ("corner", corner)):
        cyl = measure.measure(ns_with(**{name: shp}), name)["cylinders"]
        got = {(c["diameter"], c["hole"], c["full"], c["over_half"]) for c in cyl}
        assert got == want[name], (name, cyl)

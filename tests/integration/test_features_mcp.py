"""``features`` end to end over MCP stdio with the real ``mcp`` SDK client (which validates
``structuredContent`` against the listed ``outputSchema`` itself: a reply that did not conform
would raise in ``call_tool``).

The test plate (four through holes on a bolt circle, a blind, a countersunk and a counterbored
hole, rounded corners) is built in the session and, exported to STEP by this test, read back with
``import_file``: both answer every hole within 0.05 mm, the corners as fillets, no boss.
"""
from __future__ import annotations

import inspect
import math

import pytest

import mcpclient
from tests.unit import test_features as unit

PLATE_CODE = inspect.getsource(unit.plate) + "\nplate = plate()\n"
BOSS_CODE = "boss = Box(60, 40, 8) + Pos(10, 5, 4) * Cylinder(6, 12, align=(Align.CENTER, Align.CENTER, Align.MIN))\n"


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    from build123d import export_step
    d = tmp_path_factory.mktemp("features-mcp")
    (d / "in").mkdir()
    export_step(unit.plate(), str(d / "in" / "plate.step"))
    (d / "in" / "plate.step").chmod(0o644)
    from tests.unit.test_features_nurbs import _all_nurbs
    export_step(_all_nurbs(unit.plate()), str(d / "in" / "plate_nurbs.step"))  # as Rhino writes STEP
    (d / "in" / "plate_nurbs.step").chmod(0o644)
    from tests.unit.test_features_nurbs import _divided
    export_step(_divided(unit.plate(), 90), str(d / "in" / "plate_split.step"))  # its holes in quarter faces
    (d / "in" / "plate_split.step").chmod(0o644)
    with mcpclient.running(d / "out", d / "server-stderr.log", "--input-dir", str(d / "in")) as c:
        yield c


def features(client, args):
    res = client.call("features", args)
    assert res.is_error is False, res
    assert [c.type for c in res.content] == ["text"], res
    return res.structured_content, res.content[0].text


def test_listed_with_an_output_schema(client):
    tool = {t.name: t for t in client.list_tools().tools}["features"]
    assert tool.output_schema["type"] == "object"
    assert set(tool.output_schema["required"]) >= {"holes", "bosses", "fillets", "chamfers", "slots", "patterns"}
    hole = tool.output_schema["properties"]["holes"]["items"]
    assert set(hole["required"]) >= {"center", "axis", "diameter", "depth", "through", "countersink", "counterbore"}
    assert tool.annotations.read_only_hint is True


def test_the_plate_built_in_the_session(client):
    assert client.text("execute", {"code": PLATE_CODE}).startswith("OK")
    data, text = features(client, {"object_name": "plate"})
    unit.check_plate(data)
    assert "4 x through d=6.6 -Z on a bolt circle r=30" in text and "fillets: 4 x r=5 (convex rounds)" in text
    assert len(text.splitlines()) <= 8


def test_the_plate_imported_from_step(client):
    client.text("import_file", {"filename": "plate.step", "name": "imported"})
    data, _ = features(client, {"object_name": "imported"})
    unit.check_plate(data)


def test_a_boss_and_kinds(client):
    assert client.text("execute", {"code": BOSS_CODE}).startswith("OK")
    data, text = features(client, {"object_name": "boss", "kinds": ["bosses"]})
    assert len(data["bosses"]) == 1 and data["holes"] == [] and data["fillets"] == []
    b = data["bosses"][0]
    assert math.dist(b["center"], (10, 5, 4)) < 0.05 and b["diameter"] == pytest.approx(12)
    assert "bosses: 1 x d=12 height 12 +Z at (10, 5, 4)" in text
    data, text = features(client, {"object_name": "boss", "kinds": ["slots"]})
    assert text == "boss:\nno slots found" and data["slots"] == [] and data["bosses"] == []


def test_tilted_holes_cross_holes_and_a_blind_slot(client):
    """Through the SDK client (which validates the reply against the schema): holes drilled at an
    angle and across a tube's wall enter on their surface; a blind slot has a depth, and through
    ones ``through`` with a null depth."""
    code = "".join(inspect.getsource(f) for f in (unit.tilted, unit.tube, unit.slotted))
    code += "tilted = tilted()\ntube = tube()\nslot = slotted(4, 1)\n"
    assert client.text("execute", {"code": code}).startswith("OK")
    data, _ = features(client, {"object_name": "tilted"})
    assert math.dist(unit.hole_at(data, (0, 0))["center"], (0, 0, 5)) < 0.05
    data, text = features(client, {"object_name": "tube"})
    assert "holes: 1 x through d=6 +X at (-20, 0, 10)\nholes: 1 x through d=6 -X at (20, 0, 10)" in text
    data, text = features(client, {"object_name": "slot"})
    assert [(s["depth"], s["through"]) for s in data["slots"]] == [(pytest.approx(4), False)]
    assert "slots: 1 x length 26 width 6 depth 4 -Z at (0, 0, 5)" in text


def test_radial_holes_through_the_client(client):
    """A hub's radial holes: entered from outside, one radial pattern in the schema-checked reply."""
    code = inspect.getsource(unit.hub) + "hub = hub(start=15.0)\n"
    assert client.text("execute", {"code": code}).startswith("OK")
    data, text = features(client, {"object_name": "hub"})
    (p,) = [p for p in data["patterns"] if p["type"] == "radial"]
    assert p["count"] == 6 and p["radius"] == pytest.approx(20, abs=0.05)
    assert "holes: 6 x through d=4 on a radial pattern r=20 round +Z through (0, 0, 0) at" in text


def test_slots_open_at_one_end_through_the_client(client):
    code = inspect.getsource(unit.flange_slots) + "flange = flange_slots()\n"
    assert client.text("execute", {"code": code}).startswith("OK")
    data, text = features(client, {"object_name": "flange"})
    assert sorted(s["open_end"] for s in data["slots"]) == [False, True, True, True] and data["fillets"] == []
    assert "slots: 1 x length 4 width 8 open-ended through -Z opening -Y at (10, -18, 3)" in text, text


def test_a_shaft_s_groove_through_the_client(client):
    code = inspect.getsource(unit.grooved_shaft) + "shaft = grooved_shaft()\n"
    assert client.text("execute", {"code": code}).startswith("OK")
    data, text = features(client, {"object_name": "shaft", "kinds": ["grooves"]})
    assert [(g["profile"], g["width"]) for g in data["grooves"]] == [("flat", pytest.approx(1.2))]
    assert text == "shaft:\ngroove: flat d=18.8 width 1.2 depth 0.6 round +Z at (0, 0, 30)" and data["chamfers"] == []


def test_drafted_bosses_and_l_pockets_through_the_client(client):
    code = (inspect.getsource(unit.screw_bosses) + inspect.getsource(unit._l_pocket)
            + "enc = screw_bosses()\nlp = _l_pocket(3.0)\n")
    assert client.text("execute", {"code": code}).startswith("OK")
    data, text = features(client, {"object_name": "enc"})
    assert [b["draft"] for b in data["bosses"]] == [pytest.approx(1.5)] * 2 and len(data["holes"]) == 3
    assert "bosses: 2 x d=8 height 12 draft 1.5° +Z" in text, text
    data, text = features(client, {"object_name": "lp", "kinds": ["pockets"]})
    assert [(p["shape"], p["sides"]) for p in data["pockets"]] == [("L", 6)]
    assert "pockets: 1 x L-shaped 40 x 40 r=3 depth 8 -Z at (-6.667, -3.333, 10)" in text, text


def test_face_grooves_arc_and_counterbored_slots_and_sectors_through_the_client(client):
    code = (inspect.getsource(unit._flange) + inspect.getsource(unit._arc_plate)
            + inspect.getsource(unit._counterbored_slots) + inspect.getsource(unit._wheel)
            + "flange = _flange()\nrotary = _arc_plate()\nmount = _counterbored_slots()\nimport math\nwheel = _wheel(corner=3)\n")
    assert client.text("execute", {"code": code}).startswith("OK")
    data, text = features(client, {"object_name": "flange", "kinds": ["holes", "grooves"]})
    assert [(g["face"], g["diameter"], g["width"]) for g in data["grooves"]] == [(True, 60, 6)]
    assert "groove: face d=60 (inner 48) width 6 depth 3 -Z at (0, 0, 6)" in text, text
    data, text = features(client, {"object_name": "rotary"})
    assert [s["arc"]["sweep"] for s in data["slots"]] == [pytest.approx(40)] * 3 and data["fillets"] == []
    assert "slots: 3 x arc r=30 40° width 6 through -Z turned round a bolt circle r=30 at (0, 0, 4)" in text, text
    data, text = features(client, {"object_name": "mount", "kinds": ["slots"]})
    assert [s["counterbore"]["width"] for s in data["slots"]] == [10]
    assert text == "mount:\nslots: 1 x length 26 width 6 through counterbore 30 x 10 depth 4 -Z at (0, 0, 5)", text
    data, text = features(client, {"object_name": "wheel", "kinds": ["pockets", "patterns"]})
    assert [p["sector"]["angle"] for p in data["pockets"]] == [pytest.approx(56)] * 5
    assert "pockets: 5 x sector r=15..40 56° corners r=3 through -Z turned round a bolt circle r=27.5 at (0, 0, 5)" in text, text


def test_channels_and_steps_through_the_client(client):
    from tests.unit import test_features_channels as ch
    code = ("BLOCK = (80, 60, 20)\n" + inspect.getsource(ch.rebate) + inspect.getsource(ch.edge_slot)
            + "rebated = rebate()\nnotched = edge_slot()\n")
    assert client.text("execute", {"code": code}).startswith("OK")
    data, text = features(client, {"object_name": "rebated", "kinds": ["steps"]})
    assert [(s["width"], s["depth"], s["side"], s["ends"]) for s in data["steps"]] == [(10, 10, [1, 0, 0],
                                                                                         ["open", "open"])]
    assert text == "rebated:\nsteps: 1 x width 10 depth 10 length 60 -Z along +Y facing +X at (35, 0, 10)", text
    data, text = features(client, {"object_name": "notched"})
    assert [s["ends"] for s in data["slots"]] == [["square", "open"]] and data["steps"] == []
    assert "slots: 1 x length 30 width 10 square-ended open-ended depth 5 -Z opening +Y at (0, 15, 10)" in text, text


def test_v_grooves_dovetails_and_t_slots_through_the_client(client):
    from tests.unit import test_features_channels as ch
    from tests.unit import test_features_drafted as dr
    code = ("import math\nBLOCK = (100, 60, 30)\nTOP = 15\n" + inspect.getsource(dr.cut) + inspect.getsource(dr.vee)
            + inspect.getsource(dr.dovetail) + "grooved = vee(90)\ndovetailed = dovetail(60)\nBLOCK = (80, 60, 20)\n"
            + inspect.getsource(ch.t_slot) + "slotted = t_slot()\n" + inspect.getsource(ch.v_slot_profile)
            + "rail = v_slot_profile()\n")
    assert client.text("execute", {"code": code}).startswith("OK")
    data, text = features(client, {"object_name": "grooved", "kinds": ["slots"]})
    assert [(s["width"], s["depth"], s["draft"], s["ends"]) for s in data["slots"]] == [(16, 8, 45, ["open", "open"])]
    assert text == "grooved:\nslots: 1 x length 60 width 16 V 90° open at both ends depth 8 -Z along +Y at (0, 0, 15)"
    data, text = features(client, {"object_name": "dovetailed"})
    assert [s["draft"] for s in data["slots"]] == [-30] and data["steps"] == [] and data["chamfers"] == []
    assert "slots: 1 x length 60 width 18.453 dovetail 60° open at both ends depth 10 -Z along +Y" in text, text
    data, text = features(client, {"object_name": "slotted", "kinds": ["slots"]})
    assert [(s["width"], s["depth"], s["tee"]) for s in data["slots"]] == [(8, 10, {"width": 16, "height": 6})]
    assert "slots: 1 x length 60 width 8 T-slot (cavity 16 wide, 6 high) open at both ends depth 10" in text, text
    data, text = features(client, {"object_name": "rail"})  # a V-slot extrusion: sloped cavities, marker grooves
    assert sorted((s["width"], s["tee"]) for s in data["slots"] if s["tee"]) == [(6.25, {"width": 11, "height": 4.3})] * 4
    assert [c["size"] for c in data["chamfers"]] == [1.455]  # the flared mouths, not their uprights
    assert "4 x length 100 width 6.25 T-slot (cavity 11 wide, 4.3 high)" in text, text


def test_a_fluted_knob_through_the_client(client):
    """A knob's flutes, cut through its chamfered rim: notches on one circle, the chamfer once."""
    from tests.unit import test_features_notches as nt
    code = inspect.getsource(nt.knob) + "knob = knob('chamfer')\n"
    assert client.text("execute", {"code": code}).startswith("OK")
    data, text = features(client, {"object_name": "knob"})
    assert [(s["length"], s["width"], s["open_end"]) for s in data["slots"]] == [(1.2, 2.4, True)] * 18, data["slots"]
    assert [(p["type"], p["count"], p["radius"]) for p in data["patterns"]] == [("bolt_circle", 18, 14.4)]
    assert [(c["size"], c["count"]) for c in data["chamfers"]] == [(1, 1)] and data["holes"] == []
    assert "slots: 18 x length 1.2 width 2.4 open-ended through -Z turned round a bolt circle r=14.4" in text, text


def test_a_mesh_made_solid_says_it_is_faceted(client):
    """The plate's mesh made a solid in the session (an STL's way): no holes, and ``faceted`` says why."""
    code = PLATE_CODE + ("vs, ts = plate.tessellate(0.5, 0.5)\n"
                         "mesh = Solid(Shell([Face(Wire.make_polygon([vs[i] for i in t], close=True)) for t in ts]))\n")
    assert client.text("execute", {"code": code}).startswith("OK")
    data, text = features(client, {"object_name": "mesh"})
    n = data["faceted"]["faces"]
    assert data["faceted"] == {"faces": n, "triangles": n} and n >= 20 and data["holes"] == [], data
    assert f"faceted: {n} of {n} faces are flat triangles" in text
    assert features(client, {"object_name": "plate"})[0]["faceted"] is None


def test_errors_are_errors_without_structured_content(client):
    msg = client.error("features", {"object_name": "nothing_here"})
    assert "no object named" in msg
    assert client.text("execute", {"code": "ring = Circle(10) - Circle(3)\n"}).startswith("OK")
    assert "'ring' has no solid: features finds holes" in client.error("features", {"object_name": "ring"})
    res = client.call("features", {"object_name": "plate", "kinds": ["holes", "gears"]})
    assert res.is_error and res.structured_content is None


def test_a_stepped_bore_through_the_client(client):
    """A bore stepped three times from the top and counterbored from the bottom: every bore, in
    the structured reply (the SDK checks it against the schema) and in one text line."""
    code = ("from build123d import Align\n" + inspect.getsource(unit._bore)
            + "stepped = Box(60, 60, 30) - _bore(0, 12, 4) - _bore(0, 8, 10) - _bore(0, 4, 30)"
              " - _bore(0, 6, 5, top=False)\n")
    assert client.text("execute", {"code": code}).startswith("OK")
    data, text = features(client, {"object_name": "stepped", "kinds": ["holes"]})
    (h,) = data["holes"]
    assert (h["diameter"], h["counterbore"], h["bores"]) == (8, {"diameter": 24, "depth": 4}, [
        {"diameter": 16, "start": 4, "end": 10}, {"diameter": 12, "start": 25, "end": 30}]), h
    assert text == ("stepped:\nholes: 1 x through d=8 counterbore d=24 depth 4, bore d=16 at depth 4 to 10, "
                    "bore d=12 at depth 25 to 30 -Z at (0, 0, 15)"), text


def test_a_drafted_slot_through_the_client(client):
    """A round-ended slot with 5° of draft (half cones at its ends): a slot with its draft."""
    code = ("from build123d import Align, SlotOverall, extrude\n" + inspect.getsource(unit._drafted_slots)
            + "moulded = _drafted_slots(5, 8)\n")
    assert client.text("execute", {"code": code}).startswith("OK")
    data, text = features(client, {"object_name": "moulded", "kinds": ["slots"]})
    assert [(s["length"], s["width"], s["draft"], s["depth"]) for s in data["slots"]] == [(40, 10, 5, 8)], data
    assert text == "moulded:\nslots: 1 x length 40 width 10 draft 5° depth 8 -Z at (0, 0, 10)", text


def test_oval_pockets_through_the_client(client):
    """Elliptical cuts: pockets of shape "oval" with one side, which the listed schema admits (the
    SDK checks the reply against it), one text line each."""
    code = ("from build123d import Ellipse, Rot, extrude\n" + inspect.getsource(unit._ovals) + "ovals = _ovals()\n")
    assert client.text("execute", {"code": code}).startswith("OK")
    data, text = features(client, {"object_name": "ovals", "kinds": ["pockets"]})
    assert sorted((p["shape"], p["sides"], p["width"], p["length"]) for p in data["pockets"]) == (
        [("oval", 1, 4, 8)] * 3 + [("oval", 1, 16, 30)] * 2), data
    assert "pockets: 1 x oval 30 x 16 along +Y through -Z at (20, 10, 10)" in text, text


def test_freeform_pockets_through_the_client(client):
    """Spline cuts: pockets of shape "freeform", a closed spline's with one side, which the listed
    schema admits (the SDK checks the reply against it), one text line each."""
    code = "from build123d import *\n" + inspect.getsource(unit._splines) + "splines = _splines()\n"
    assert client.text("execute", {"code": code}).startswith("OK")
    data, text = features(client, {"object_name": "splines", "kinds": ["pockets"]})
    assert sorted((p["shape"], p["sides"], p["width"], p["length"], p["through"]) for p in data["pockets"]) == [
        ("freeform", 1, 28.1803, 40.1675, False), ("freeform", 2, 25, 30, True)], data
    assert "pockets: 1 x freeform 30 x 25 along +X through -Z at (20, -12.5, 10)" in text, text


def test_an_all_nurbs_step_plate_through_the_client(client):
    """The plate written to STEP with every face a B-spline reads as the analytic one: every hole
    within 0.05 mm, its countersink and counterbore, the corners as fillets, no boss."""
    client.text("import_file", {"filename": "plate_nurbs.step", "name": "nurbs"})
    data, text = features(client, {"object_name": "nurbs"})
    unit.check_plate(data)
    assert "fillets: 4 x r=5 (convex rounds)" in text, text


def test_a_drafted_spline_pocket_and_a_rounded_cam_through_the_client(client):
    """A spline pocket tapered 5 degrees: freeform with its draft; a cam whose top edge is rounded
    along its spline: a convex fillet of its radius, both in the reply the schema admits."""
    code = ("face = make_face(Spline((-20, 0), (0, 15), (20, 0), (0, -12), periodic=True))\n"
            "moulded = Box(80, 60, 10) - Pos(0, 0, 5) * extrude(face, amount=-6, taper=5)\n"
            "cam = fillet(extrude(face, amount=8).edges().group_by(Axis.Z)[-1], 1.5)\n")
    assert client.text("execute", {"code": code}).startswith("OK")
    data, text = features(client, {"object_name": "moulded", "kinds": ["pockets"]})
    (p,) = data["pockets"]
    assert (p["shape"], p["draft"], p["depth"]) == ("freeform", 5, 6), p
    assert "freeform 40.1676 x 28.181 along +X draft 5° depth 6 -Z" in text, text
    data, text = features(client, {"object_name": "cam", "kinds": ["fillets"]})
    assert [(g["radius"], g["convex"], g["count"]) for g in data["fillets"]] == [(1.5, True, 1)], data


def test_patterns_alone_through_the_client(client):
    """``kinds=["patterns"]``: the plate's bolt circle and grid, with no members (they index the
    holes' list, which was not asked for). Before, the launcher refused the reply: its members
    pointed past an empty list."""
    assert client.text("execute", {"code": PLATE_CODE}).startswith("OK")
    data, text = features(client, {"object_name": "plate", "kinds": ["patterns"]})
    assert data["holes"] == [] and sorted(p["type"] for p in data["patterns"]) == ["bolt_circle", "grid"], data
    assert all(p["members"] == [] and p["count"] == 4 for p in data["patterns"]), data
    assert "pattern: 4 holes on a bolt circle r=30" in text, text


def test_a_step_plate_whose_holes_are_split_in_quarters_through_the_client(client):
    """The done-means plate written with every cylinder and cone in quarter faces (some CAD systems
    split them so) reads as the plate: its countersink too, and its four corners as four fillets."""
    client.text("import_file", {"filename": "plate_split.step", "name": "split"})
    data, text = features(client, {"object_name": "split"})
    unit.check_plate(data)
    assert "countersink d=12 90°" in text and "fillets: 4 x r=5 (convex rounds)" in text, text


def test_a_c_beams_flanges_drilled_in_turn_through_the_client(client):
    """Two flanges drilled in turn read as two rows of pitch 40, each on a line of its own with its
    centres; before, as one row of nine at pitch 20 that no hole lies on."""
    from tests.unit import test_features_pattern_levels as levels
    code = (inspect.getsource(levels.c_beam) + "\nbeam = c_beam()\n"
            "for x in (20, 60, 100, 140, 180):\n    beam -= Pos(x, 18, 25) * Cylinder(3, 10)\n"
            "for x in (40, 80, 120, 160):\n    beam -= Pos(x, 18, -25) * Cylinder(3, 10)\n")
    assert client.text("execute", {"code": code}).startswith("OK")
    data, text = features(client, {"object_name": "beam"})
    assert sorted((p["type"], p["count"], p["pitch"]) for p in data["patterns"]) == [("linear", 4, 40), ("linear", 5, 40)]
    assert "holes: 5 x through d=6 -Z on a linear pitch 40 along (1, 0, 0) at (20, 18, 25)," in text, text
    assert "holes: 4 x through d=6 -Z on a linear pitch 40 along (1, 0, 0) at (40, 18, -22)," in text, text
    assert "pitch 20" not in text, text


def test_a_grid_round_a_central_boss_through_the_client(client):
    """A 3x3 grid of holes with its centre left for a boss reads as the grid, its empty position in
    ``empty`` and in the text; before, as a 2x2 grid of its corners and a bolt circle of its sides."""
    code = ("with BuildPart() as gb:\n    Box(100, 100, 10)\n"
            "    with Locations(*[(x, y, 5) for x in (-20, 0, 20) for y in (-20, 0, 20) if (x, y) != (0, 0)]):\n"
            "        Hole(radius=2.5)\n"
            "    with Locations((0, 0, 5)):\n        Cylinder(8, 6, align=(Align.CENTER, Align.CENTER, Align.MIN))\n"
            "grid_plate = gb.part\n")
    assert client.text("execute", {"code": code}).startswith("OK")
    data, text = features(client, {"object_name": "grid_plate"})
    (grid,) = data["patterns"]
    assert (grid["type"], grid["count"], grid["counts"]) == ("grid", 8, [3, 3]), grid
    assert grid["empty"] == [[0, 0, 5]] or all(abs(a - b) < 0.05 for a, b in zip(grid["empty"][0], (0, 0, 5))), grid
    assert "holes: 8 x through d=5 -Z on a 3x3 grid pitch 20 x 20 (1 empty: (0, 0, 5)) at (" in text, text
    assert "bolt circle" not in text and len(data["bosses"]) == 1, text


def test_pads_through_the_client(client):
    """A rectangular pad with rounded corners, a hex boss and an obround boss on a plate: each a pad
    with its outline, height and centre (before: nothing, and the obround's ends as two fillets)."""
    code = ("with BuildPart() as pb:\n    Box(120, 60, 10)\n"
            "    with BuildSketch(Plane.XY.offset(5)):\n"
            "        with Locations((-35, 0)):\n            RectangleRounded(30, 20, 3)\n"
            "        with Locations((5, 0)):\n            RegularPolygon(10, 6)\n"
            "        with Locations((40, 0)):\n            SlotOverall(30, 12, rotation=90)\n"
            "    extrude(amount=6)\npad_plate = pb.part\n")
    assert client.text("execute", {"code": code}).startswith("OK")
    data, text = features(client, {"object_name": "pad_plate"})
    got = sorted((p["shape"], p["width"], p["length"], p["height"], p["corner_radius"]) for p in data["pads"])
    assert [g[0] for g in got] == ["obround", "rectangle", "regular"] and all(g[3] == 6 for g in got), got
    assert got[0][1:3] == (12, 30) and got[1][1:3] == (20, 30) and got[1][4] == 3, got
    assert "pads: 1 x rectangle 30 x 20 along +X r=3 height 6 +Z at (-35, 0, 5)" in text, text
    assert "pads: 1 x obround 30 x 12 along +Y height 6 +Z at (40, 0, 5)" in text, text
    assert "pads: 1 x hex 17.3205 across flats height 6 +Z at (5, 0, 5)" in text, text
    assert data["fillets"] == [] and data["bosses"] == [], text

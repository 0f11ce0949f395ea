"""What each tool's result looks like to the assistant, and the request rules a schema does not hold.

Pure functions, no jail: content blocks (launcher/tools/content.py), the family renderers,
render_request (launcher/tools/cad.py) and the format rules of exports and inputs.
"""
from __future__ import annotations

import base64

import pytest

from launcher.files import exports, inputs
from launcher.tools import content, get, render_text
from launcher.tools.cad import CadError, render_request

BOX = {"name": "b", "type": "Box", "kind": "shape", "volume": 24.0, "area": 52.0,
       "bbox": {"min": [-1, -1.5, -2], "max": [1, 1.5, 2], "size": [2, 3, 4]},
       "counts": {"solids": 1, "faces": 6, "edges": 12}, "valid": True}


def test_blocks_and_their_text():
    assert content.text("hi") == {"type": "text", "text": "hi"}
    png = base64.b64encode(b"\x89PNG" + b"\0" * 95).decode()  # 99 bytes
    assert content.image(png) == {"type": "image", "data": png, "mimeType": "image/png"}
    assert content.as_text([content.text("a"), content.image(png)]) == "a\n[image image/png, 99 bytes]"


@pytest.mark.parametrize("result,error", [({"ok": True}, False), ({}, False), ({"ok": False}, True),
                                          ({"error": "x"}, True), ({"error": 5}, False), (None, True), ([], True)])
def test_is_error(result, error):
    assert content.is_error(result) is error


def test_render_text_of_errors_and_unknown_tools():
    assert render_text("measure", {"error": "bad arguments for measure: x"}) == "Error: bad arguments for measure: x"
    assert render_text("nope", {"error": "unknown tool 'nope'"}) == "Error: unknown tool 'nope'"
    assert render_text("nope", None) == "Error: invalid result"
    assert render_text("nope", {"a": 1}) == '{\n "a": 1\n}'
    from launcher.tools import TOOLS
    assert all(t.renderer is not None for t in TOOLS)  # every tool words its reply: no JSON dump (issue 22)


def test_session_state_uses_the_one_summary_renderer():
    objs = [BOX, {"name": "n", "type": "int", "kind": "scalar", "repr": "3"},
            {"name": "f", "type": "function", "kind": "function"},
            {"name": "...", "type": "", "kind": "omitted", "count": 7}]
    text = render_text("session_state", {"objects": objs})
    assert text.splitlines() == [
        "objects:",
        "  b: Box  volume 24  area 52  bbox 2x3x4 [-1,-1.5,-2 .. 1,1.5,2]  1 solid, 6 faces, 12 edges  valid",
        "  n: int  3",
        "  f: function",
        "  ... and 7 more names not shown"]
    assert render_text("session_state", {"objects": []}) == "objects:\n(no objects)"


def test_last_error_and_snapshots():
    assert render_text("last_error", {"last_error": None}) == "No error in this session yet."
    e = {"type": "ZeroDivisionError", "message": "division by zero", "line": 2, "source_line": "1/0"}
    assert render_text("last_error", {"last_error": e}) == "ZeroDivisionError at line 2: division by zero\n    1/0"
    assert render_text("list_snapshots", {"snapshots": []}) == "snapshots: none"
    assert render_text("list_snapshots", {"snapshots": [{"name": "a"}, {"name": "b"}]}) == "snapshots: a, b"
    assert render_text("save_snapshot", {"name": "b", "snapshots": ["a", "b"]}) == "saved snapshot 'b'; snapshots: a, b"
    assert render_text("restore_snapshot", {"restored": "a"}).startswith("restored snapshot 'a': the session is as")
    assert render_text("delete_snapshot", {"deleted": "a", "snapshots": []}) == \
        "deleted snapshot 'a'; snapshots left: none"
    t = render_text("reset", {"reset": True, "session": "s7"})
    assert t == "reset: a new, empty session; the old one's names, history and snapshots are gone", t


STEP_REPLY = {"path": "/home/u/build123d-out/v2/part.step", "size": 12700, "format": "step",
              "sha256": "252ec8f3641964b92d1389e619f5a4f48419f3a2722ccd061f73d7136faa618c", "volume": 40000.0,
              "bbox": {"min": [0, 0, 0], "max": [40, 20, 50], "size": [40, 20, 50]}, "solids": 1,
              "checked": "re-read in a fresh jailed process that ran no session code", "object": "part",
              "session_claims": {"volume": 39999.5, "bbox": {"min": [0, 0, 0], "max": [40, 20, 50],
                                                              "size": [40, 20, 50]}}}


def test_export_reply_is_two_lines_of_facts():
    """Issue 22: an export reply was 46 lines of JSON; now what was written, where, the verifier's
    numbers, and the session's claims labelled as the session's."""
    lines = render_text("export", STEP_REPLY).splitlines()
    assert len(lines) == 2, lines
    assert lines[0] == ("exported part to /home/u/build123d-out/v2/part.step (STEP, 12.4 KiB, sha256 252ec8f3641964b9...); "
                        "re-read in a fresh jailed process that ran no session code: 1 solid, volume 40000 mm^3, "
                        "bbox 40x20x50 [0,0,0 .. 40,20,50]"), lines[0]
    assert lines[1] == "the session's own claim (not checked): volume 39999.5 mm^3, bbox 40x20x50 [0,0,0 .. 40,20,50]"
    svg = {"path": "/o/p.svg", "size": 900, "format": "svg", "sha256": "ab" * 32, "shapes": 20, "object": "p",
           "checked": "re-read", "view": "isometric projection, hidden lines dotted"}
    t = render_text("export", svg)
    assert t == ("exported p to /o/p.svg (SVG, 900 bytes, sha256 abababababababab...), view: isometric projection, "
                 "hidden lines dotted; re-read: 20 shapes"), t
    py = {"path": "/o/d.py", "size": 20, "format": "py", "sha256": "cd" * 32, "lines": 3, "checked": "re-read",
          "changes": ["call 1: identifier '\\u0430' written as _u0430"]}
    lines = render_text("export", py).splitlines()
    assert lines[0].startswith("exported the session's script to /o/d.py (PY, 20 bytes") and "3 lines" in lines[0]
    assert lines[1].startswith("changed by the launcher") and "written as _u0430" in lines[1], lines
    assert render_text("export", {"error": "'p.step' already exists"}) == "Error: 'p.step' already exists"


def test_cad_contents():
    png = base64.b64encode(b"png").decode()
    blocks = get("render").content({"ok": True, "caption": "top view", "png_b64": png})
    assert blocks == [content.text("top view"), content.image(png)]
    assert render_text("render", {"ok": False, "error": "no shapes"}) == "Error: no shapes"
    m = {"name": "b", "counts": {"solids": 1, "shells": 1, "faces": 6, "edges": 12, "vertices": 8}, "volume": 24.0,
         "bbox": {"min": [0, 0, 0], "max": [2, 3, 4], "size": [2, 3, 4], "center": [1, 1.5, 2]},
         "center_of_mass": [1, 1.5, 2],
         "cylinders": [{"diameter": 8.0, "faces": 4, "hole": True, "full": True, "area": 1.0},
                       {"diameter": 10.0, "faces": 4, "hole": False, "full": False, "area": 1.0},
                       {"diameter": 6.0, "faces": 4, "hole": True, "full": False, "area": 1.0},
                       {"diameter": 12.0, "faces": 1, "hole": False, "full": True, "area": 1.0},
                       {"diameter": 2.0, "faces": 1, "hole": None, "full": True, "area": 1.0},
                       {"diameter": 20.0, "faces": 1, "hole": True, "full": False, "over_half": True, "area": 1.0},
                       {"diameter": 9.0, "faces": 1, "hole": False, "full": False, "over_half": True, "area": 1.0},
                       {"diameter": 7.0, "faces": 1, "hole": True, "full": False, "over_half": None, "area": 1.0}],
         "valid": True, "closed": True, "manifold": True}
    t = render_text("measure", {"ok": True, "measure": m}).splitlines()
    assert t[0] == "b: 1 solid, 1 shell, 6 faces, 12 edges, 8 vertices" and t[1] == "volume: 24 mm^3"
    assert ("cylinders: d=8 x4 hole, d=10 x4 rounded edge, d=6 x4 fillet/slot end, d=12 x1 shaft/boss, d=2 x1, "
            "d=20 x1 partial hole, d=9 x1 partial shaft, d=7 x1 fillet/slot end" in t
            and t[-1] == "valid=True closed=True manifold=True")
    del m["valid"]  # measure's default (issue 22): the full check is validate's (or check=true)
    t = render_text("measure", {"ok": True, "measure": m}).splitlines()
    assert t[-1] == "validity: not checked (call validate) closed=True manifold=True"
    d = {"a": "a", "b": "b", "distance": 0.0, "point_a": [0, 0, 0], "point_b": [0, 0, 0], "intersect": True,
         "overlap_volume": 500.0}
    assert render_text("distance", {"ok": True, "distance": d}).endswith("they intersect: overlap volume 500 mm^3")
    del d["overlap_volume"]  # a solid and a sketch that cross: no volume (it read "overlap volume ? mm^3")
    assert render_text("distance", {"ok": True, "distance": d}).endswith(
        "they touch or cross (not both solids: no overlap volume)")
    v = {"name": "s", "status": "FAIL", "reasons": ["no solid"], "warnings": [], "checks": [
        {"check": "valid", "ok": True, "detail": "BRepCheck"}]}
    assert render_text("validate", {"ok": True, "validate": v}) == "s: FAIL\n  FAIL: no solid\n  ok: valid: BRepCheck"


def test_file_contents():
    listing = {"input_dir": "/in", "files": [{"name": "a.step", "format": "step", "size": 10}],
               "skipped": [{"name": "l", "why": "a symlink"}], "truncated": True}
    assert render_text("list_inputs", listing).splitlines() == [
        "input directory /in:", "  a.step  (step, 10 bytes)", "  skipped l: a symlink", "  [listing cut]"]
    imported = {"ok": True, "wall_ms": 12, "objects": [dict(BOX, name="box", change="added")],
                "imported": {"filename": "a.step", "format": "step", "size": 10, "name": "box"}}
    t = render_text("import_file", imported).splitlines()
    assert t[0] == "Imported 'a.step' (STEP, 10 bytes) as box: OK (12 ms)" and t[1].startswith("+ box: Box")
    assert len(t) == 2, t
    failed = dict(imported, ok=False, error={"type": "ImportError", "message": "not STEP"})
    assert render_text("import_file", failed).startswith("Import of 'a.step' failed.\nImportError: not STEP")
    t = render_text("script", {"script": "x = 1\n", "calls": 1, "imports": 0, "bytes": 6})
    assert t.startswith("UNTRUSTED code written by this AI session") and "build123d-launcher run FILE" in t, t
    assert t.endswith("1 call(s), 0 import(s), 6 bytes:\n\nx = 1\n"), t
    t = render_text("script", {"script": "x = 1\n", "calls": 1, "imports": 0, "bytes": 6,
                               "changes": ["call 1: identifier '\\u0430' written as _u0430"]})
    assert "Changed by the launcher" in t and "written as _u0430" in t, t


def test_script_never_hides_lines_silently():
    """Past the cap, the reply says exactly which lines it does not show (issue 20)."""
    from launcher.tools.files import MAX_SHOWN
    long = render_text("script", {"script": "#" * 300_000, "calls": 1, "imports": 0, "bytes": 300_000})
    assert "lines 1\u20131 of 1 are not shown" in long and len(long) < 5000, long[:500]
    lines = [f"x{i} = {i}  # " + "y" * 90 for i in range(4000)]
    text = "\n".join(lines)
    t = render_text("script", {"script": text, "calls": 4000, "imports": 0, "bytes": len(text)})
    shown = [ln for ln in t.split("\n") if ln.startswith("x")]
    k = len(shown)
    assert 0 < k < 4000 and shown == lines[:k]
    assert t.count(f"lines {k + 1}\u20134000 of 4000 are not shown") == 2, t[:400]  # at the top and at the end
    assert len(t.encode()) < MAX_SHOWN + 4096


def test_render_request_rules_beyond_the_schema():
    assert render_request() == {"t": "render", "objects": None, "view": "iso", "width": 800, "height": 600,
                                "section": None, "azimuth": None, "elevation": None}
    r = render_request(["a"], "front", 30, None, 64, 64, {"axis": "y"})
    assert r["section"] == {"axis": "y", "offset": 0.0} and r["azimuth"] == 30.0
    assert render_request(section={"normal": [1, 0, 2]})["section"] == {"point": [0.0, 0.0, 0.0],
                                                                          "normal": [1.0, 0.0, 2.0]}
    # a normal along an axis: that axis' plane through the point (world coordinates on the axes)
    assert render_request(section={"normal": [0, 0, 2]})["section"] == {"axis": "z", "offset": 0.0}
    assert render_request(section={"point": [4, 5, 6], "normal": [0, -1e-3, 0]})["section"] == \
        {"axis": "y", "offset": 5.0}
    for kw, msg in [({"section": {"axis": "z", "normal": [0, 0, 1]}}, "not both"),
                    ({"section": {"point": [0, 0, 0]}}, "needs axis (+ offset) or normal"),
                    ({"section": {}}, "needs axis (+ offset) or normal"),
                    ({"section": {"normal": [0, 0, 0]}}, "normal must not be zero"),
                    ({"view": "section"}, "needs a section plane"),
                    ({"view": "sheet", "azimuth": 10}, "do not apply to view 'sheet'"),
                    ({"view": "section", "section": {"axis": "z"}, "elevation": 10}, "do not apply")]:
        with pytest.raises(CadError, match=msg.replace("(", r"\(").replace(")", r"\)").replace("+", r"\+")):
            render_request(**kw)


def test_format_rules():
    assert exports.canonical_format("STP") == "step" and exports.canonical_format(".BRP") == "brep"
    assert exports.canonical_format("obj") == "obj" and exports.canonical_format(".") == "." \
        and exports.canonical_format(3) == 3
    assert exports.resolve_format("v2/a.STP", "") == "step" and exports.resolve_format("a.py", "py") == "py"
    with pytest.raises(exports.ExportError, match="does not match format 'step'"):
        exports.resolve_format("a.stl", "step")
    with pytest.raises(exports.ExportError, match="cannot tell the format"):
        exports.resolve_format("noext", "")
    assert exports.FORMATS[-1] == "py" and set(exports.FORMATS) - {"py"} == set(inputs.FORMATS)
    assert inputs.resolve_format("a.stp", "") == "step" and inputs.resolve_format("a.STEP", "stp") == "step"
    with pytest.raises(inputs.InputError, match="not a CAD file"):
        inputs.resolve_format("a.obj", "")
    with pytest.raises(inputs.InputError, match="not a CAD file"):  # format= never makes a file importable
        inputs.resolve_format("a.x", "stp")


def test_a_box_shows_tolerance_noise_as_zero():
    """OCCT's boxes carry the shapes' tolerance: a flat spline read "bbox 11.25x11.25x2e-07 [-1e-07,..,
    -1e-07 .. ..,1e-07]". Under a millionth of the box's largest size a figure shows as 0; a thin plate
    far from the origin keeps its thickness, a micro part its sizes."""
    from launcher.tools.text import _bbox
    assert _bbox({"min": [-1e-07, -1.25, -1e-07], "max": [11.25, 10, 1e-07], "size": [11.25, 11.25, 2e-07]}) == \
        "bbox 11.25x11.25x0 [0,-1.25,0 .. 11.25,10,0]"
    assert _bbox({"min": [1e6, 0, 0], "max": [1e6 + 100, 100, 0.5], "size": [100, 100, 0.5]}).startswith(
        "bbox 100x100x0.5 [")
    assert _bbox({"min": [0, 0, 0], "max": [0.001, 0.002, 1e-8], "size": [0.001, 0.002, 1e-8]}) == \
        "bbox 0.001x0.002x1e-08 [0,0,0 .. 0.001,0.002,1e-08]"

"""Issue 14's pieces in process: jail/hints.py, jail/api.py, jail/history.py, the launcher's
head+tail cut and partial-reply rebuild (launcher/replies.py) and the reply text (launcher/reply_text.py)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from jail.cad import api

from jail.cad import hints

from jail.cad import history

from jail.cad import runner
from launcher.replies import validate as replies
from launcher.tools import text as reply_text


@pytest.fixture(scope="module", autouse=True)
def _exports():
    runner.new_namespace(["build123d"], [], True)  # fills the star-export cache api.py reads


# ------------------------------------------------------------------ hints
@pytest.mark.parametrize("type_,msg,src,rule,text,needle", [
    ("RuntimeError", "Failed to write STEP file", "export_step(part, 'x.step')", None, None, "`export` tool"),
    ("PermissionError", "x", "part.export_stl('a.stl')", None, None, "`export` tool"),
    ("FileNotFoundError", "user.step", "b = import_step('user.step')", None, None, "`import_file`"),
    ("NameError", "name 'show' is not defined", "show(b)", None, None, "`render` tool"),
    ("PolicyError", "import of 'ocp_vscode' is not allowed", "import ocp_vscode", "import", "import ocp_vscode",
     "`render` tool"),
    ("PolicyError", "call to 'dir' is not allowed", "dir(b)", "blocked-call", "dir", "`api` tool"),
    ("NameError", "name 'help' is not defined", "help(Box)", None, None, "help() is not available in the jail"),
    ("FileNotFoundError", "[Errno 2] No such file or directory in the scratch directory: 'n.txt'", "open('n.txt')",
     None, None, "only the files list_inputs offers"),
    ("FileNotFoundError", "n.txt", "data = Path('n.txt').read_text()", None, None, "scratch directory"),
    ("MemoryError", "", "b = bytearray(10**10)", None, None, "memory_mb of address space (RLIMIT_AS)"),
    ("PolicyError", "dunder", "Box.__doc__", "dunder-attribute", "Box.__doc__", "`api` tool"),
    ("PolicyError", "call to 'hasattr'", "hasattr(b, 'x')", "blocked-call", "hasattr", "attribute directly"),
    ("PolicyError", "dunder", "type(b).__name__", "dunder-attribute", "type(b).__name__", "isinstance"),
    ("PolicyError", "call to 'open'", "open('f')", "blocked-call", "open", "`export` tool"),
    ("PolicyError", "import of 'cadquery'", "import cadquery as cq", "import", "import cadquery", "not CadQuery"),
    ("AttributeError", "'BuildSketch' object has no attribute 'area'", "sk.area", None, None, ".sketch"),
    ("ValueError", "Failed creating a fillet with radius of 40", "fillet(e, 40)", None, None, "smaller radius"),
    ("ValueError", "Null TopoDS_Shape object", "o = offset(b, amount=-2)", None, None,
     "for offset/shell a smaller amount (inwards it must fit the thinnest wall)"),
    ("AttributeError", "'ShapeList' object has no attribute 'fillet'", "b.edges().fillet(1)", None, None,
     "fillet takes the edges as its first argument: fillet(part.edges().filter_by(Axis.Z), radius=1)"),
    ("AttributeError", "'ShapeList' object has no attribute 'chamfer'", "b.edges().chamfer(1)", None, None,
     "chamfer(part.edges().filter_by(Axis.Z), length=1), or part.chamfer(1, None, edges)"),
    ("AttributeError", "'ShapeList' object has no attribute 'center_x'", "b.faces().center_x", None, None,
     "a ShapeList is a list of shapes: pick one"),
    ("TypeError", "Mixin3D.fillet() missing 1 required positional argument: 'edge_list'", "b.fillet(1)", None, None,
     "api(name='Part.fillet')"),
    ("TypeError", "extrude() got an unexpected keyword argument 'height'", "extrude(s, height=2)", None, None,
     "api(name='extrude')"),
    ("TypeError", "Box.__init__() takes from 4 to 7 positional arguments but 8 were given", "Box(1, 2, 3, 4, 5, 6, 7)",
     None, None, "Box() was called with arguments its signature does not take: the `api` tool shows it, "
                 "e.g. api(name='Box')"),
])
def test_hint_for_each_known_mistake(type_, msg, src, rule, text, needle):
    h = hints.hint(type_, msg, src, rule=rule, text=text)
    assert h and needle in h, h


@pytest.mark.parametrize("args", [("ZeroDivisionError", "division by zero", "1/0"),
                                  ("TypeError", "unsupported operand type(s) for +: 'int' and 'str'", "1 + 'a'"),
                                  ("NameError", "name 'x' is not defined", "x + 1"),
                                  (None, None, None), (5, b"x", ["y"])])
def test_no_hint_for_ordinary_or_odd_errors(args):
    assert hints.hint(*args) is None


# ------------------------------------------------------------------ api
def test_api_lookup_search_versions():
    r = api.lookup("Box")
    assert r["ok"] and r["kind"] == "class" and r["signature"].startswith("(length:") and "edges" in r["methods"]
    assert api.lookup("Part.volume")["kind"] == "property"
    assert api.lookup("Axis.Z")["ok"]
    s = api.search("FILLET")
    assert {m["name"] for m in s["matches"]} >= {"fillet"} and any(m["name"] == "Part.fillet" for m in s["members"])
    v = api.versions()
    assert v["build123d"] != "?" and v["OCP"] != "?"
    miss = api.lookup("Cylnder")
    assert miss["ok"] is False and "Cylinder" in miss["did_you_mean"]


def test_api_lists_enum_members_and_class_attributes():
    r = api.lookup("Align")
    assert r["enum_members"][:3] == ["MIN", "CENTER", "MAX"] and r["enum_members_total"] >= 3
    t = reply_text.api_text(r)
    assert t.startswith("Align (enum)\n") and "members: Align.MIN, Align.CENTER, Align.MAX" in t, t
    r = api.lookup("Box")
    assert "build123d_type = 'Part'" in r["attributes"] and "order = 4.0" in r["attributes"], r["attributes"]
    assert not set(a.split(" ")[0] for a in r["attributes"]) & set(r["methods"] + r["properties"])
    assert len(r["attributes"]) <= api.ATTRS_MAX and r["attributes_total"] >= len(r["attributes"])
    assert "\nclass attributes: build123d_type = 'Part', order = 4.0" in reply_text.api_text(r)


def test_no_did_you_mean_for_a_removed_builtin():
    from jail.cad import error_report
    assert error_report._removed_builtin("help") and error_report._removed_builtin("exit")
    assert not error_report._removed_builtin("Bxo") and not error_report._removed_builtin(None)
    try:
        exec("help(1)", {"__builtins__": {}, "Shell": 1})
    except NameError as e:
        assert error_report.did_you_mean(e) is None  # the jail's reply: test_replies_mcp.py


def test_the_launcher_words_the_hint_from_its_own_profile():
    from launcher.profile import load_profile
    from launcher.replies import hints as launcher_hints
    strict = load_profile("strict")
    err = {"type": "MemoryError", "message": "the limit is 1 MiB", "line": 1, "hint": "FORGED"}
    h = launcher_hints.reworded(err, strict)["hint"]
    assert f"of profile 'strict': memory_mb = {strict.limits.memory_mb} MiB" in h and "FORGED" not in h, h
    assert "hint" not in launcher_hints.reworded({"type": "ZeroDivisionError", "message": "x", "hint": "FORGED"})
    same = launcher_hints.reworded({"type": "PolicyError", "message": "call to 'open'", "source_line": "open('f')",
                                    "rule": "blocked-call", "text": "open", "hint": "FORGED"}, strict)
    assert "`export` tool" in same["hint"], same  # the strict profile's refusal keeps its hint
    assert "hint" not in launcher_hints.reworded({"type": "MemoryError", "reported": True, "hint": "x"}, strict)


EXPORT_MISTAKES = [  # (type, message, source line): an exporter misused in code
    ("AttributeError", "'Box' object has no attribute 'export_stl'", "b.export_stl('b.stl')"),
    ("TypeError", "export_stl() missing 1 required positional argument: 'file_path'", "export_stl(b)"),
    ("PermissionError", "[Errno 13] '/tmp/x.step' is outside the scratch directory", "export_step(b, '/tmp/x.step')"),
    ("RuntimeError", "Failed to write STEP file", "export_step(b, 'b.step')"),
]


@pytest.mark.parametrize("type_,msg,src", EXPORT_MISTAKES)
def test_an_exporter_hint_says_what_the_profile_lets_code_write(type_, msg, src):
    """Where code writes files (default: the scratch directory) the hint shows the exporters as
    functions writing a plain name; only where it writes none (strict: open blocked; os_only: no
    builtins layer, a read-only file system) does it say so and point to the export tool."""
    from launcher.profile import load_profile
    from launcher.replies import hints as launcher_hints
    err = {"type": type_, "message": msg, "source_line": src, "line": 1}
    os_only = str(Path(__file__).resolve().parents[1] / "profiles" / "os_only.toml")
    for name, writes in (("default", True), ("strict", False), (os_only, False)):
        prof = load_profile(name)
        assert launcher_hints.writes_files(prof) is writes, name
        h = launcher_hints.reworded(err, prof)["hint"]
        note = launcher_hints.noted({"ok": True, "note": "FORGED"}, src, prof)["note"]
        for text in (h, note):
            assert ("write no files" in text) is not writes, (name, text)
            assert ("export_stl(part, 'part.stl')" in text and "scratch directory" in text) is writes, (name, text)
            assert "`export` tool" in text and "FORGED" not in text, (name, text)
        assert note.startswith("nothing was written: "), note


@pytest.mark.parametrize("bad", [None, 3, ["Box"], "", "a" * 201, "__import__", "Box.__init__", "Box._x",
                                 "Box.", ".Box", "a.b.c.d.e", "Box\x00", "os.system", "1x"])
def test_api_refuses_hostile_names(bad):
    if bad is None or bad == "" or bad == "os.system":
        r = api.lookup(bad) if bad else None
        assert r is None or r["ok"] is False
        return
    with pytest.raises(ValueError):
        api.lookup(bad)


def test_api_caps_a_patched_docstring():
    import build123d
    orig = build123d.Box.__doc__
    try:
        build123d.Box.__doc__ = "x" * 100_000
        r = api.lookup("Box")
        assert len(r["doc"]) <= api.DOC_CAP and len(json.dumps(r)) < 20_000
    finally:
        build123d.Box.__doc__ = orig


# ------------------------------------------------------------------ history
def test_history_numbers_and_lines():
    saved = list(history._ENTRIES)
    try:
        history._ENTRIES.clear()
        assert history.next_call_no() == 1
        assert history.record("a = 1\nb = 2\n") == 1 and history.record(5) == 2
        assert history.source_line(1, 2) == "b = 2" and history.source_line(1, 9) is None
        assert history.source_line(7, 1) is None and history.source_line(1, "1") is None
        assert history.call_no_of("<execute-12>") == 12
        assert history.call_no_of("<execute-x>") is None and history.call_no_of(b"<execute-1>") is None
        assert [e["call"] for e in history.entries()] == [1, 2]
    finally:
        history._ENTRIES[:] = saved


# ------------------------------------------------------------------ launcher side
def test_head_tail_keeps_both_ends_and_counts():
    s = "".join(f"{i}\n" for i in range(10000))
    out, cut = replies.head_tail(s, 200)
    assert out.startswith("0\n1\n") and out.endswith("9998\n9999\n") and cut > 40000
    assert f"[... {cut} bytes not shown ...]" in out
    assert replies.head_tail("short", 200) == ("short", 0)
    out, _ = replies.head_tail("é" * 1000, 101)  # never half a character
    out.encode("utf-8")


def test_partial_rebuilt_strictly():
    p = replies.partial({"stdout": "\x1b[2J" + "a" * 50000, "stderr": ["x"], "line": -1, "function": "f\nx",
                         "source_line": 5, "context": ["ok", 3, "\x1b]0;t\x07"] * 10,
                         "origin": {"call": True, "line": 2 ** 60}}, max_output_bytes=1000)
    assert "\x1b" not in p["stdout"] and len(p["stdout"].encode()) < 1100 and p["stderr"] == ""
    assert p["line"] is None and p["source_line"] is None and p["function"] is None  # not an identifier
    assert len(p["context"]) <= replies.CONTEXT_MAX and all("\x1b" not in c and "\x07" not in c
                                                             for c in p["context"])
    assert p["origin"]["call"] is None and p["origin"]["line"] is None


def test_execute_text_layout():
    r = {"ok": True, "wall_ms": 12.3, "stdout": "hi\n", "stderr": "", "value": {"kind": "number", "repr": "6000.0"},
         "objects": [{"name": "b", "type": "Box", "kind": "shape", "volume": 6000.0, "change": "added",
                      "bbox": {"min": [0, 0, 0], "max": [10, 20, 30], "size": [10, 20, 30]},
                      "counts": {"solids": 1, "faces": 6, "edges": 12}, "valid": True},
                     {"name": "f", "type": "function", "kind": "function", "change": "changed"}],
         "deleted": ["old"]}
    assert reply_text.execute_text(r).splitlines() == [
        "OK (12 ms)", "stdout:", "hi", "= 6000.0",
        "+ b: Box  volume 6000  bbox 10x20x30 [0,0,0 .. 10,20,30]  1 solid, 6 faces, 12 edges  valid",
        "~ f: function", "- old (deleted)"]
    e = {"ok": False, "stdout": "", "stderr": "", "error": {
        "type": "ZeroDivisionError", "message": "division by zero", "line": 1, "source_line": "r = f(3)",
        "context": [], "origin": {"call": 2, "line": 3, "function": "f", "source_line": "return 1/0",
                                  "context": ["  2 |     y = 1", "> 3 |     return 1/0"]},
        "hint": None}}
    assert reply_text.execute_text(e).splitlines() == [
        "ZeroDivisionError at line 1: division by zero", "    r = f(3)", "in f(), defined in call 2, line 3:",
        "    2 |     y = 1", "  > 3 |     return 1/0", "The session is unchanged."]


@pytest.mark.parametrize("msg,src,has,lacks", [
    ("Failed creating a fillet with radius of 20, try a smaller value", "fillet(bp.edges(), 20)",
     "smaller radius", ("offset/shell", "booleans")),
    ("Null TopoDS_Shape object", "o = offset(b, amount=-2)", "thinnest wall", ("fillet", "booleans")),
    ("BRep_API: command not done", "c = a - b", "booleans", ()),  # nothing named: every clause
])
def test_an_occt_failure_gets_only_the_advice_for_its_operation(msg, src, has, lacks):
    h = hints.hint("ValueError", msg, src)
    assert h.startswith("OCCT could not do this operation: ") and has in h, h
    assert not any(x in h for x in lacks), h


def test_a_signature_hint_echoes_only_names_of_its_own_list():
    """The session chooses a TypeError's words: a name outside the hint's fixed list (or an owner it
    does not know) gets the generic sentence, so no session-chosen word reaches the Hint line."""
    for msg in ("IgnoreAllPreviousInstructions() missing 1 required positional argument: 'x'",
                "Evil.fillet() missing 1 required positional argument: 'x'",
                "Mixin3D.run_this_now() got an unexpected keyword argument 'x'"):
        h = hints.hint("TypeError", msg, "x")
        assert h.startswith("the arguments do not fit the signature of what was called"), h
        assert "Ignore" not in h and "Evil" not in h and "run_this" not in h, h


def test_import_stl_note_is_the_launchers_sentence():
    from launcher.replies import hints as launcher_hints
    for code in ("mesh = import_stl('part.stl')", "m = import_stl ('a.stl')\nprint(m.area)"):
        note = launcher_hints.noted({"ok": True, "note": "FORGED"}, code)["note"]
        assert note == hints.STL_NOTE and "Mesher().read" in note and "`import_file`" in note, note
    assert hints.success_note("m = import_step('part.step')") is None
    assert hints.success_note("import_stl_helper = 1") is None  # a name, not a call

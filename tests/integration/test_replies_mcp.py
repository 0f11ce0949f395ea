"""Replies an assistant can act on (issue 14), through the real ``mcp`` SDK client over stdio.

Each test asserts on the reply *text* the model reads: only the names a call
changed, the trailing expression's value, head and tail of long output, Python's
"Did you mean", a hint for each known mistake, source lines around the failing
line and the call that defined a failing function, the ``api`` tool, the quick
reference resource, and a timeout that names the running line and keeps the
output printed before it (the session unchanged afterwards).
"""
from __future__ import annotations

import re

import pytest


import mcpclient


class Client(mcpclient.Client):
    def text(self, name: str, args: dict | None = None, *, error: bool = False) -> str:
        res = self.call(name, args)
        assert res.is_error is error, res
        assert len(res.content) == 1 and res.content[0].type == "text", res  # nothing sent twice
        assert getattr(res, "structured_content", None) in (None, {}), res
        return res.content[0].text

    def ok(self, code: str) -> str:
        t = self.text("execute", {"code": code})
        assert t.startswith("OK"), t
        return t

    def fails(self, code: str, **args) -> str:
        return self.text("execute", {"code": code, **args}, error=True)


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    d = tmp_path_factory.mktemp("replies")
    with mcpclient.running(d / "out", d / "server-stderr.log", cls=Client) as c:
        c.text("reset")
        yield c


# ------------------------------------------------------------------ changed names only
def test_reply_lists_only_changed_names(client):
    client.text("reset")
    t = client.ok("base = Box(40, 30, 10)\nboss = Cylinder(5, 20)\nk = 3")
    assert re.search(r"^\+ base: Box  volume 12000  bbox 40x30x10", t, re.M), t
    assert "+ boss: Cylinder" in t and "+ k: int  3" in t, t
    t = client.ok("def helper(x):\n    return x * 2\n")
    assert "+ helper: function" in t, t
    assert "base" not in t and "boss" not in t and "k:" not in t, t      # unchanged names are not repeated
    t = client.ok("base = base - boss\ndel k")
    assert re.search(r"^~ base: Part  volume", t, re.M), t
    assert "- k (deleted)" in t and "boss" not in t and "helper" not in t, t
    t = client.ok("y = 1\ny = 1")  # rebinding to an equal small int: unchanged for the second call
    t = client.ok("pass")
    assert "(no names added, changed or deleted)" in t, t
    state = client.text("session_state")  # the full list is still there
    assert "base" in state and "boss" in state and "helper" in state and "y" in state, state


def test_in_place_change_is_reported(client):
    client.ok("pts = [1, 2]")
    t = client.ok("pts.append(3)")
    assert "~ pts: list  len 3" in t, t


def test_list_of_shapes_summarised(client):
    t = client.ok("cubes = [Box(1, 1, 1).moved(Location((2 * i, 0, 0))) for i in range(50)]")
    assert "+ cubes: list  50 shapes: 50 Box  total volume 50  bbox 99x1x1" in t, t
    assert "0x" not in t, t  # no object addresses
    t = client.ok("named = {'a': Box(1, 1, 1), 'b': Cylinder(1, 2)}\nmixed = {'a': Box(1, 1, 1), 'n': 5}")
    assert re.search(r"^\+ named: dict  2 shapes: 1 Box, 1 Cylinder  total volume 7\.28\d*  bbox 2x2x2 ", t, re.M), t
    assert re.search(r"^\+ mixed: dict  len 2  \{'a': Box", t, re.M), t  # not only shapes: its repr


# ------------------------------------------------------------------ trailing value
def test_trailing_expression_value_shown(client):
    t = client.ok("b = Box(10, 20, 30)\nb.volume")
    assert re.search(r"^= 6000(\.0)?$", t, re.M), t
    t = client.ok("Cylinder(1, 2)")
    assert re.search(r"^= Cylinder: volume 6\.28319  bbox 2x2x2", t, re.M), t
    t = client.ok("print('x')")  # None is not shown
    assert "= None" not in t, t


# ------------------------------------------------------------------ output head + tail
def test_long_output_keeps_head_and_tail(client):
    t = client.ok("print(list(range(200000)))")
    assert "[0, 1, 2, 3, 4, 5" in t and "199998, 199999]" in t, t[:300] + "..." + t[-300:]
    m = re.search(r"\[\.\.\. (\d+) bytes not shown \.\.\.\]", t)
    assert m and int(m.group(1)) > 1_000_000, t[:200]
    assert len(t) < 20_000, len(t)   # the profile's 16 KiB cap, not 1.3 MB
    t = client.ok("print('\\n'.join(f'line {i}' for i in range(20000)))")
    assert "line 0\n" in t and "line 19999" in t and "lines not shown" in t, t[-300:]


# ------------------------------------------------------------------ errors
def test_did_you_mean_kept(client):
    t = client.fails("c = Cylnder(1, 2)")
    assert "NameError at line 1: name 'Cylnder' is not defined. Did you mean: 'Cylinder'?" in t, t
    client.ok("bx = Box(1, 2, 3)")
    t = client.fails("bx.volme")
    assert "Did you mean: 'volume'?" in t, t
    assert t.count("The session is unchanged") == 1, t


def test_error_shows_source_around_line(client):
    t = client.fails("a = 1\nb = 2\nc = 1 / 0\nd = 4\ne = 5\nf = 6")
    assert "ZeroDivisionError at line 3: division by zero" in t, t
    assert ">  3 | c = 1 / 0" in t.replace("> 3", ">  3") or "> 3 | c = 1 / 0" in t, t
    assert "1 | a = 1" in t and "5 | e = 5" in t and "6 | f = 6" not in t, t


def test_error_in_function_from_earlier_call(client):
    n = client.ok("def ratio(x):\n    y = x + 1\n    return y / (x - x)\n")
    assert "+ ratio: function" in n
    t = client.fails("r = ratio(3)")
    assert "ZeroDivisionError at line 1" in t and "r = ratio(3)" in t, t
    m = re.search(r"in ratio\(\), defined in call (\d+), line 3:", t)
    assert m, t
    assert "return y / (x - x)" in t, t


HINTS = [
    ("import_step('user.step')", "`import_file` tool"),
    ("help(Box)", "help() is not available in the jail: call the `api` tool"),
    ("x = Box(1, 1, 1)\nhelp(x)", "e.g. api(name='Box')"),
    ("open('notes.txt').read()", "only the files list_inputs offers, each named by a string literal"),
    ("b = bytearray(10**13)", "memory_mb = "),
    ("import cadquery as cq", "not CadQuery"),
    ("import yacv_server", "show()"),
    ("with BuildPart() as bp:\n    Box(4, 4, 4)\nbp.part.fillet(3, bp.part.edges())", "smaller radius"),
]


@pytest.mark.parametrize("code,needle", HINTS, ids=[h[0].split("(")[0].split("\n")[-1][:24] for h in HINTS])
def test_hint_for_known_mistake(client, code, needle):
    t = client.fails(code)
    assert "Hint: " in t and needle in t, t
    assert "Did you mean" not in t, t  # not "Did you mean: 'Shell'?" for help (issue 22)


def test_memory_error_names_the_limit(client):
    """A failed allocation says which limit it hit, with the profile's own number (the launcher's words)."""
    t = client.fails("b = bytearray(10**13)")
    assert t.startswith("MemoryError at line 1\n"), t  # no dangling ": " for an empty message
    mb = re.search(r"^Hint: an allocation exceeded the per-process memory limit of profile '\w+': "
                   r"memory_mb = (\d+) MiB of address space \(RLIMIT_AS\)", t, re.M)
    assert mb and int(mb.group(1)) > 0 and "ask the user for a profile with a larger memory_mb" in t, t
    assert "memory_mb = " in client.text("last_error")


# ------------------------------------------------------------------ short replies (issue 22)
def test_export_and_snapshot_replies_are_short(client):
    client.ok("short_part = Box(40, 20, 10)")
    t = client.text("export", {"object_name": "short_part", "filename": "short/part.step"})
    lines = t.splitlines()
    assert len(lines) == 2, t  # was 46 lines of JSON
    m = re.match(r"exported short_part to (/\S+/short/part\.step) \(STEP, [0-9.]+ KiB, sha256 [0-9a-f]{16}\.\.\.\); "
                 r"re-read in a fresh jailed process that ran no session code: 1 solid, volume 8000 mm\^3, "
                 r"bbox 40x20x10 \[-20,-10,-5 \.\. 20,10,5\]$", lines[0])
    assert m and open(m.group(1), "rb").read(13) == b"ISO-10303-21;", t
    assert lines[1] == "the session's own claim (not checked): volume 8000 mm^3, bbox 40x20x10 [-20,-10,-5 .. 20,10,5]"
    t = client.text("export", {"object_name": "script", "filename": "short/design.py"})
    assert t.startswith("exported the session's script to /") and len(t.splitlines()) <= 2, t
    for tool, args, want in [("save_snapshot", {"name": "short1"}, "saved snapshot 'short1'; snapshots: "),
                             ("restore_snapshot", {"name": "short1"}, "restored snapshot 'short1': the session is as"),
                             ("delete_snapshot", {"name": "short1"}, "deleted snapshot 'short1'; snapshots left: "),
                             ("reset", {}, "reset: a new, empty session; ")]:
        t = client.text(tool, args)
        assert t.startswith(want) and "\n" not in t and "{" not in t, (tool, t)


# code that needed a hint before the default profile ran real build123d code as written (issue 21)
AS_WRITTEN = ["export_step(Box(1, 1, 1), 'x.step')", "from ocp_vscode import show\nshow(Box(1, 1, 1))",
              "from ocp_vscode import show_object\nshow_object(Box(1, 1, 1))",
              "import ocp_vscode", "print(dir(Box)[:3])", "print(Box.__doc__[:20])", "hasattr(Box, 'x')",
              "type(Box(1, 1, 1)).__name__", "open('x.txt', 'w').write('hi')"]


@pytest.mark.parametrize("code", AS_WRITTEN, ids=[c.split("(")[0].split("\n")[-1][:24] for c in AS_WRITTEN])
def test_former_mistakes_run_as_written(client, code):
    res = client.call("execute", {"code": code})
    assert not res.is_error and res.content[0].text.startswith("OK"), res  # show(): + an image block


def test_exporter_in_code_writes_and_gets_no_nothing_written_note(client):
    t = client.ok("ok = export_stl(Box(1, 1, 1), 'a.stl')\nok")
    assert "nothing was written" not in t and "a.stl" in t, t  # delivered, and the reply lists it


def test_exporter_hints_show_exporters_writing_the_scratch_directory(client):
    """The default profile lets code write files: a misused exporter's hint shows the functions and
    a plain file name, never that code writes no files; so does the note of one that never ran."""
    assert client.ok("b = Box(1, 2, 3)")
    for code in ("b.export_stl('b.stl')", "export_step(b, '/tmp/b.step')"):
        t = client.text("execute", {"code": code}, error=True)
        assert "Hint: build123d's exporters are functions" in t and "export_stl(part, 'part.stl')" in t, t
        assert "write no files" not in t, t
    t = client.ok("if b is None:\n    export_step(b, 'b.step')")
    assert "Note: nothing was written: build123d's exporters are functions" in t and "write no files" not in t, t


def test_a_call_that_does_not_fit_its_signature_points_to_the_api_tool(client):
    assert client.ok("sig = Box(2, 2, 2)")
    t = client.text("execute", {"code": "sig.fillet(0.5)"}, error=True)
    assert "Hint: fillet() was called with arguments its signature does not take" in t, t
    assert "api(name='Part.fillet')" in t, t
    t = client.text("api", {"name": "Part.fillet"})  # the name the hint gives is one the tool knows
    assert t.startswith("Part.fillet(self, radius") and "edge_list" in t, t
    t = client.text("execute", {"code": "sig.edges().filter_by(Axis.Z).fillet(0.5)"}, error=True)
    assert "Hint: fillet takes the edges as its first argument: fillet(part.edges().filter_by(Axis.Z)" in t, t
    for code in ("a = fillet(sig.edges().filter_by(Axis.Z), radius=0.5)",  # the hint's two forms run
                 "c = chamfer(sig.edges().filter_by(Axis.Z), length=0.5)\nd = sig.chamfer(0.5, None, sig.edges())"):
        assert client.ok(code), code


# ------------------------------------------------------------------ api tool
def test_api_lookup_and_search(client):
    t = client.text("api", {"name": "fillet"})
    assert t.startswith("fillet(objects") and "radius: float" in t, t
    t = client.text("api", {"name": "Box"})
    assert t.startswith("Box(length: 'float', width: 'float', height: 'float'") and "methods:" in t, t
    t = client.text("api", {"name": "Align"})
    assert "members: Align.MIN, Align.CENTER, Align.MAX" in t, t
    t = client.text("api", {"name": "Box"})
    assert re.search(r"^class attributes: .*build123d_type = 'Part'.*order = 4\.0", t, re.M), t
    t = client.text("api", {"name": "Part.edges"})
    assert "Part.edges(self, select" in t and "ShapeList[Edge]" in t, t
    t = client.text("api", {"query": "fillet"})
    assert "fillet (function)" in t and "Part.fillet" in t, t
    t = client.text("api")
    assert re.search(r"build123d \d+\.\d+", t) and "OCP" in t, t
    t = client.error("api", {"name": "Cylnder"}) if hasattr(client, "error") else \
        client.text("api", {"name": "Cylnder"}, error=True)
    assert "Cylinder" in t, t


def test_api_refuses_hostile_names(client):
    for bad in ["__import__", "Box.__init__", "Box.__class__.__mro__", "a" * 5000, "os.system", "Box._private",
                "Box..x", "1Box"]:
        res = client.call("api", {"name": bad})
        assert res.is_error, (bad, res)
    res = client.call("api", {"name": 5})
    assert res.is_error
    res = client.call("api", {"query": "x" * 201})
    assert res.is_error


# ------------------------------------------------------------------ resources, instructions
def test_quickref_resource_and_instructions(client):
    ins = client.init.instructions or ""
    assert re.search(r"build123d \d+\.\d+", ins) and "OCP" in ins, ins
    assert "build123d://quickref" in ins and "api" in ins, ins
    res = client.portal.call(client.session.list_resources)
    uris = [str(r.uri) for r in res.resources]
    assert "build123d://quickref" in uris, uris
    body = client.portal.call(lambda: client.session.read_resource("build123d://quickref"))
    text = body.contents[0].text
    assert "BuildPart" in text and "fillet" in text and "export" in text, text[:300]


# ------------------------------------------------------------------ timeouts that say where
def test_timeout_names_line_and_keeps_output(client):
    client.ok("keep = 41")
    client.ok("def spin():\n    n = 0\n    while True:\n        pass\n")
    t = client.fails("print('before the loop')\nkeep = 42\nspin()")
    assert t.startswith("ExecutionTimeout: execution exceeded"), t  # the launcher's words first
    assert "it was at line 3" in t, t        # the line of this call that is running (the session's report)
    assert "before the loop" in t, t
    assert "> 3 | spin()" in t, t
    assert re.search(r"in spin\(\), defined in call \d+, line [34]:", t), t
    assert "while True" in t or "pass" in t, t
    assert t.count("session is unchanged") == 1, t
    assert "= 41" in client.ok("keep")  # the session is exactly as before the call


def test_timeout_in_current_call_loop(client):
    # 4 s: the child is asked where it is 1 s before the limit (launcher.session.calls.grace)
    t = client.fails("print('tick')\nx = 0\nwhile True:\n    x += 1\n", timeout_s=4)
    assert "ExecutionTimeout" in t and "tick" in t and re.search(r"it was at line [34]\b", t), t
    t = client.fails("def loop():\n    while True:\n        pass\nloop()", timeout_s=4)
    assert re.search(r"it was at line [23] in loop\(\)", t), t   # a function of this call


# ------------------------------------------------------------------ history and changes follow the session state
def test_changes_and_call_numbers_follow_snapshots_and_failures(client):
    client.text("reset")
    client.ok("def f():\n    return 1 / 0\n")                     # call 1
    client.text("save_snapshot", {"name": "h1"})
    client.ok("x = 5")                                             # call 2 (only after the snapshot)
    client.fails("x = 6\nraise ValueError('no')")                  # discarded: no call number, x stays 5
    t = client.ok("x")
    assert re.search(r"^= 5$", t, re.M) and "~ x" not in t, t
    client.text("restore_snapshot", {"name": "h1"})
    t = client.fails("f()")
    assert "in f(), defined in call 1, line 2:" in t and "return 1 / 0" in t, t
    t = client.ok("y = 1")
    assert "+ y: int  1" in t and "x" not in t, t                 # diffed against the snapshot's state
    t = client.ok("def g():\n    raise KeyError('k')\n")
    assert "+ g: function" in t
    t = client.fails("g()")
    assert "in g(), defined in call 3, line 2:" in t, t           # call 2 is y = 1 in this branch

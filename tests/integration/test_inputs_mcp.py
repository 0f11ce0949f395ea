"""The user's own files and the design as a script, end to end over MCP stdio (issue 15).

``python -m launcher mcp --embedded --input-dir IN --output-dir OUT`` driven by the real ``mcp``
SDK client: a part is exported as STEP/STL/3MF/BREP, the files are copied into the input
directory, imported in a fresh session, and their volumes compared with the original within the
format's tolerance (exact B-rep formats: 1e-6 relative; meshes: the tessellation's 1e-2); the
script of a session with failed and restored-away calls is run in a fresh session and rebuilds
the same volumes; a failed import leaves the session unchanged; a server without an input
directory says how to set one. Issue 20: dot files (``.env``, ``.git/config``) and non-CAD files
beside the CAD files are never listed (not even by name) nor imported, whatever ``format`` says,
and a parse error never quotes the file: as root, unprivileged and through the daemon.
"""
from __future__ import annotations

import math
import os
import re
import shutil
import sys

import pytest

from tests.helpers.cli import REPO, TEST_PROFILE, launcher_env

import mcpclient
from mcp import StdioServerParameters

PART = """\
with BuildPart() as bp:
    Box(40, 30, 12)
    fillet(bp.edges().filter_by(Axis.Z), radius=4)
    with Locations((8, 5, 0)):
        Hole(radius=5)
part = bp.part
"""
TOLERANCE = {"step": 1e-6, "brep": 1e-6, "stl": 1e-2, "3mf": 1e-2}
KEY = os.urandom(12).hex()
CREDS = f"AWS_SECRET_ACCESS_KEY={KEY}\n".encode()
#: beside the CAD files: what a user's project holds (secrets under dot names, other files)
BESIDE = {".env": CREDS, ".git/config": b"[credential]\n" + CREDS, "notes.txt": CREDS,
          "creds.dxf": b"0\nSECTION\n2\nENTITIES\n0\nLINE\n10\n" + CREDS + b"0\nENDSEC\n"}
REFUSED = [(".env", "step"), (".git/config", "dxf"), ("notes.txt", "svg"), (".env", "")]


def plant(indir) -> None:
    for name, data in BESIDE.items():
        (indir / name).parent.mkdir(parents=True, exist_ok=True)
        (indir / name).write_bytes(data)


def any_text(c, tool: str, args: dict) -> str:
    """The reply's text, failed or not (a refusal and a failed import are isError replies)."""
    res = c.call(tool, args)
    assert res.is_error is (tool == "import_file"), res
    return res.content[0].text


def check_refusals(call) -> None:
    """``call(tool, args) -> text``: dot and non-CAD files are neither listed nor imported, and the
    DXF's parse error says where, not what."""
    listing = call("list_inputs", {})
    assert ".env" not in listing and ".git" not in listing and "notes.txt" not in listing, listing
    assert "creds.dxf" in listing and KEY not in listing, listing
    for name, fmt in REFUSED:
        t = call("import_file", {"filename": name, "name": "leak", "format": fmt})
        assert "list_inputs offers" in t and KEY not in t, t
    t = call("import_file", {"filename": "creds.dxf", "name": "leak"})
    assert "'creds.dxf' (DXF) has a malformed number at line 8" in t and KEY not in t, t
    assert KEY not in call("last_error", {})


class Client(mcpclient.Client):
    def value(self, expr: str) -> float:
        """A number computed in the session (printed with repr: exact)."""
        t = self.text("execute", {"code": f"print(repr(float({expr})))"})
        m = re.search(r"stdout:\n(\S+)", t)
        assert m, t
        return float(m.group(1))


@pytest.fixture(scope="module")
def dirs(tmp_path_factory):
    d = tmp_path_factory.mktemp("inputs-mcp")
    (d / "in").mkdir()
    return d


def _client(dirs, name, with_input):
    extra = ("--input-dir", str(dirs / "in")) if with_input else ()
    with mcpclient.running(dirs / f"out-{name}", dirs / f"{name}-stderr.log", *extra, cls=Client) as c:
        yield c


@pytest.fixture(scope="module")
def client(dirs):
    yield from _client(dirs, "main", True)


@pytest.fixture(scope="module")
def exported(client, dirs):
    """The part's true volume and bbox; its exports copied into the input directory."""
    assert client.text("execute", {"code": PART}).startswith("OK")
    vol = client.value("part.volume")
    size = [client.value(f"part.bounding_box().size.{a}") for a in "XYZ"]
    for fmt in TOLERANCE:
        t = client.text("export", {"object_name": "part", "filename": f"part.{fmt}"})
        assert "Error" not in t, t
        shutil.copy(dirs / "out-main" / f"part.{fmt}", dirs / "in" / f"part.{fmt}")
    (dirs / "in" / "garbage.step").write_bytes(b"ISO-10303-21;\nthis is not STEP\n")
    plant(dirs / "in")
    return vol, size


def test_tools_are_listed(client):
    tools = {t.name: t for t in client.portal.call(client.session.list_tools).tools}
    assert {"list_inputs", "import_file", "script"} <= set(tools)
    assert tools["import_file"].input_schema["required"] == ["filename", "name"]
    assert "py" in tools["export"].input_schema["properties"]["format"]["enum"]


def test_list_inputs(client, exported):
    t = client.text("list_inputs")
    for fmt in TOLERANCE:
        assert f"part.{fmt}  ({fmt}," in t, t


def test_dot_and_foreign_files_are_neither_listed_nor_imported(client, exported):
    client.text("reset")
    assert client.text("execute", {"code": "keep = Box(1, 2, 3)"}).startswith("OK")
    state = client.text("session_state")
    check_refusals(lambda tool, args: any_text(client, tool, args))
    assert client.text("session_state") == state


def test_import_stl_in_code_notes_it_is_a_mesh(client, exported):
    """build123d's import_stl gives one triangulated Face, which the summary truthfully calls INVALID:
    the reply says why, and what gives a Solid (both shown to work)."""
    t = client.text("execute", {"code": "mesh = import_stl('part.stl')"})
    assert re.search(r"^\+ mesh: Face .* INVALID$", t, re.M), t
    assert "Note: import_stl gives one triangulated Face: a mesh, not a valid B-rep" in t, t
    t = client.text("execute", {"code": "solids = Mesher().read('part.stl')"})
    assert "+ solids: list  1 shape: 1 Solid" in t and "Note:" not in t, t
    t = client.text("import_file", {"filename": "part.stl", "name": "imported_stl"})
    assert re.search(r"^\+ imported_stl: Solid .* valid$", t, re.M), t
    # the mesh itself: drawn (framed by its triangles), and refused with the reason by what needs a B-rep
    r = client.call("render", {"objects": ["mesh"], "view": "iso", "width": 200, "height": 150})
    assert not r.is_error and any(b.type == "image" for b in r.content), r
    for tool in ("features", "measure"):
        t = client.error(tool, {"object_name": "mesh"})
        assert f"is a mesh (faces of triangles with no surface, as import_stl gives): {tool} needs" in t, t


@pytest.mark.parametrize("fmt", sorted(TOLERANCE))
def test_round_trip_volume(client, exported, fmt):
    vol, size = exported
    assert "reset" in client.text("reset").lower() or True
    t = client.text("import_file", {"filename": f"part.{fmt}", "name": "imported"})
    assert t.startswith(f"Imported 'part.{fmt}' ({fmt.upper()}"), t
    assert "imported: Solid" in t, t
    got = client.value("imported.volume")
    assert math.isclose(got, vol, rel_tol=TOLERANCE[fmt]), (fmt, got, vol)
    for axis, want in zip("XYZ", size):
        assert math.isclose(client.value(f"imported.bounding_box().size.{axis}"), want, rel_tol=TOLERANCE[fmt],
                            abs_tol=1e-6)
    # the imported object is a normal session object: it can be modelled with (a boolean on a mesh of
    # a thousand faces takes seconds, more than this profile's 2 s: meshes are only moved)
    if fmt in ("step", "brep"):
        assert client.text("execute", {"code": "cut = imported - Box(5, 5, 100)"}).startswith("OK")
        assert client.value("cut.volume") < got
    else:
        assert client.text("execute", {"code": "moved = imported.moved(Location((100, 0, 0)))"}).startswith("OK")
        assert client.value("moved.bounding_box().min.X") == pytest.approx(80, abs=1e-6)


@pytest.mark.parametrize("fmt", ["svg", "dxf"])
def test_2d_round_trip(client, exported, dirs, fmt):
    """The top face exported as a drawing comes back as edges with the same extent."""
    client.text("reset")
    assert client.text("execute", {"code": PART + "top = part.faces().sort_by(Axis.Z)[-1]"}).startswith("OK")
    t = client.text("export", {"object_name": "top", "filename": f"top.{fmt}"})
    assert "Error" not in t, t
    shutil.copy(dirs / "out-main" / f"top.{fmt}", dirs / "in" / f"top.{fmt}")
    client.text("reset")
    t = client.text("import_file", {"filename": f"top.{fmt}", "name": "drawing"})
    assert t.startswith(f"Imported 'top.{fmt}'") and "drawing: Compound" in t, t
    assert client.value("len(drawing.edges())") >= 5  # 4 lines + 4 fillet arcs + the hole
    if fmt == "dxf":  # DXF keeps circles and arcs as such (SVG paths come back as curves of their own)
        assert client.value("len([e for e in drawing.edges() if e.geom_type == GeomType.CIRCLE])") >= 5
    size = sorted([client.value(f"drawing.bounding_box().size.{a}") for a in "XY"])
    assert math.isclose(size[0], 30, rel_tol=1e-3) and math.isclose(size[1], 40, rel_tol=1e-3), size


def test_failed_import_leaves_session_unchanged(client, exported):
    client.text("reset")
    assert client.text("execute", {"code": "keep = Box(1, 2, 3)"}).startswith("OK")
    assert client.text("import_file", {"filename": "part.step", "name": "good"}).startswith("Imported")
    state, script = client.text("session_state"), client.text("script")
    err = client.error("import_file", {"filename": "garbage.step", "name": "bad"})
    assert "not a readable STEP file" in err and "unchanged" in err, err
    err = client.error("import_file", {"filename": "../out-main/part.step", "name": "bad"})
    assert "'..' is refused" in err, err
    err = client.error("import_file", {"filename": "missing.step", "name": "bad"})
    assert "does not exist" in err, err
    assert client.text("session_state") == state
    assert client.text("script") == script


def _script_of(text: str) -> str:
    head, _, body = text.partition("\n\n")
    assert "call(s)" in head, text
    return body


def test_script_rebuilds_the_same_volumes(client, exported):
    client.text("reset")
    assert client.text("execute", {"code": PART}).startswith("OK")
    client.error("execute", {"code": "broken = Box(1, 1, 1)\nraise ValueError('boom-7')"})
    assert client.text("execute", {"code": "plate = Box(10, 10, 2) - Cylinder(2, 2)\nn = 3"}).startswith("OK")
    client.text("save_snapshot", {"name": "before-x"})
    assert client.text("execute", {"code": "restored_away = Sphere(4)"}).startswith("OK")
    client.text("restore_snapshot", {"name": "before-x"})
    want = [client.value("part.volume"), client.value("plate.volume")]
    script = _script_of(client.text("script"))
    assert script.startswith("# UNTRUSTED CODE") and "from build123d import *" in script
    assert "Hole(radius=5)" in script and "plate = Box(10, 10, 2)" in script
    assert "boom-7" not in script and "broken" not in script and "restored_away" not in script
    # the same text exported as a .py file
    t = client.text("export", {"object_name": "script", "filename": "design.py"})
    assert "design.py" in t, t
    path = re.match(r"exported the session's script to (/\S+design\.py) \(PY, ", t).group(1)
    assert open(path).read() == script
    # run in a fresh session with its guard removed (as a user who read it would): same volumes
    from launcher.files.script import GUARD
    client.text("reset")
    assert script.count(GUARD + "\n") == 1
    r = client.text("execute", {"code": script.replace(GUARD + "\n", "")})
    assert r.startswith("OK"), r
    assert [client.value("part.volume"), client.value("plate.volume")] == want
    assert client.error("execute", {"code": "restored_away"}).startswith("NameError")


def test_script_notes_imports(client, exported):
    client.text("reset")
    client.text("import_file", {"filename": "part.step", "name": "base"})
    t = client.text("execute", {"code": "holed = base - Cylinder(1, 50)"})
    assert t.startswith("OK") and "holed: Solid" in t and "base:" not in t, t  # the import is not a change of this call
    script = _script_of(client.text("script"))
    assert "INPUT_DIR = " in script
    assert "# --- call 1: import_file: part.step\n" in script
    assert "base = import_step(INPUT_DIR + '/part.step')" in script
    assert "holed = base - Cylinder(1, 50)" in script


@pytest.fixture(scope="module")
def no_input(dirs):
    yield from _client(dirs, "noinput", False)


def test_without_input_dir_the_tools_say_how_to_set_it(no_input):
    for tool, args in (("list_inputs", {}), ("import_file", {"filename": "part.step", "name": "x"})):
        err = no_input.error(tool, args)
        assert "--input-dir" in err and "[inputs]" in err, err
    t = no_input.text("script")
    assert t.startswith("UNTRUSTED") and "\n0 call(s)" in t, t


# ------------------------------------------------------------------ unprivileged
from test_unprivileged import AS_ROOT, user_env  # noqa: E402,F401 - the fixture: run as uid 65533 (or self)


def test_import_as_unprivileged_user(user_env):
    """The launcher run by an ordinary user reads its input directory and the jail parses the file."""
    import io
    import os
    from build123d import Box, export_step
    prefix, env, home, uid = user_env
    indir = home / "cad-in"
    indir.mkdir()
    b = io.BytesIO()
    export_step(Box(10, 20, 30), b)
    (indir / "box.step").write_bytes(b.getvalue())
    plant(indir)
    if AS_ROOT:
        for root, dnames, fnames in os.walk(indir):
            for n in [root, *(os.path.join(root, f) for f in dnames + fnames)]:
                os.chown(n, uid, uid)
    params = StdioServerParameters(
        command=prefix[0] if prefix else sys.executable,
        args=(prefix[1:] + [sys.executable] if prefix else []) + [
            "-m", "launcher", "mcp", "--embedded", "--profile", TEST_PROFILE, "--output-dir", str(home / "out"),
            "--input-dir", str(indir)],
        env=env, cwd=str(home))
    with mcpclient.running(None, home / "mcp-stderr.log", cls=Client, params=params) as c:
        assert "box.step  (step," in c.text("list_inputs")
        t = c.text("import_file", {"filename": "box.step", "name": "box"})
        assert "box: Solid" in t, t
        assert c.value("box.volume") == pytest.approx(6000, rel=1e-9)
        check_refusals(lambda tool, args: any_text(c, tool, args))


# ------------------------------------------------------------------ daemon
def test_import_and_script_through_the_daemon(tmp_path):
    """`serve --input-dir`: the daemon's clients list, import and get the script (JSON-able results)."""
    import io
    import subprocess
    from build123d import Box, export_step
    from test_daemon import _private_dir, stop, wait_ready
    d = _private_dir("b123d-inputs-daemon-")
    indir = d / "in"
    indir.mkdir()
    b = io.BytesIO()
    export_step(Box(10, 20, 30), b)
    (indir / "box.step").write_bytes(b.getvalue())
    plant(indir)
    with open(d / "daemon.log", "w") as log:
        p = subprocess.Popen([sys.executable, "-m", "launcher", "serve", "--profile", TEST_PROFILE, "--output-dir",
                              str(d / "out"), "--input-dir", str(indir), "--socket", str(d / "d.sock")],
                             cwd=str(REPO), env=launcher_env(), stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    try:
        backend = wait_ready(d / "d.sock", p)
        try:
            assert [f["name"] for f in backend.call("list_inputs", {})["files"]] == ["box.step", "creds.dxf"]
            for name, fmt in REFUSED:
                r = backend.call("import_file", {"filename": name, "name": "leak", "format": fmt})
                assert "list_inputs offers" in r["error"] and KEY not in repr(r), r
            r = backend.call("import_file", {"filename": "creds.dxf", "name": "leak"})
            assert "malformed number at line 8" in r["error"]["message"] and KEY not in repr(r), r
            r = backend.call("import_file", {"filename": "box.step", "name": "box"})
            assert r["ok"] and r["objects"][0]["volume"] == pytest.approx(6000), r
            assert backend.call("execute", {"code": "half = box.volume / 2"})["ok"]
            s = backend.call("script", {})
            assert s["calls"] == 2 and s["imports"] == 1, s
            assert "box = import_step(INPUT_DIR + '/box.step')" in s["script"] and "half = box.volume / 2" in s["script"]
            r = backend.call("import_file", {"filename": "/etc/passwd", "name": "x"})
            assert "absolute paths are refused" in r["error"], r
        finally:
            backend.close()
    finally:
        stop(p)
        shutil.rmtree(d, ignore_errors=True)

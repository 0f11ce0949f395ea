"""export(): every format is re-read by the launcher's verifier (a fresh jailed process); the
launcher writes only under the output directory, never through a symlink, never over a file.

Real jailed sessions (one launcher per module), real files in a temp dir.
"""
from __future__ import annotations

import math
import os
import sys
from pathlib import Path

import pytest

from tests.helpers import zygotes
from tests.helpers.cli import TEST_PROFILE

from launcher.tools import render_text
from tests.helpers.toolcalls import ToolCalls

MODEL = """\
with BuildPart() as bracket:
    Box(40, 20, 10)
    with Locations((10, 0, 5)):
        Hole(4)
    fillet(bracket.edges().filter_by(Axis.Z), radius=2)
part = bracket.part
with BuildSketch() as profile:
    Rectangle(30, 10)
    Circle(3, mode=Mode.SUBTRACT)
ring = Circle(5) - Circle(2)
number = 42
"""


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    base = tmp_path_factory.mktemp("exports")
    out = base / "out"            # does not exist yet: export must create it 0700
    outside = base / "outside"    # symlink targets: nothing may ever appear here
    outside.mkdir()
    L = zygotes.on_shared_zygote(TEST_PROFILE, output_dir=out)
    ts = ToolCalls(L)
    r = ts.execute(MODEL)
    assert r["ok"], r
    try:
        yield {"ts": ts, "out": out, "outside": outside, "launcher": L,
               "objects": {o["name"]: o for o in r["objects"]}}
    finally:
        ts.close()
        L.close()


def _nothing_outside(env):
    assert list(env["outside"].iterdir()) == []


def _no_temp_files(env):
    left = [p for p in env["out"].rglob(".*.tmp")] if env["out"].exists() else []
    assert left == []


# ------------------------------------------------------------------ formats
@pytest.mark.parametrize("fmt,rel_tol", [("step", 1e-6), ("brep", 1e-9), ("stl", 0.01), ("3mf", 0.01)])
def test_3d_formats_reimport_to_the_same_volume(env, fmt, rel_tol):
    ts = env["ts"]
    res = ts.export("part", f"solid/part.{fmt}", "")
    assert "error" not in res, res
    assert res["format"] == fmt
    p = Path(res["path"])
    assert p == env["out"].absolute() / "solid" / f"part.{fmt}"
    assert p.stat().st_size == res["size"] > 0
    expected = env["objects"]["part"]["volume"]
    assert math.isclose(res["session_claims"]["volume"], expected, rel_tol=1e-9)
    assert res["checked"].startswith("re-read in a fresh jailed process")
    assert math.isclose(res["volume"], expected, rel_tol=rel_tol), (res["volume"], expected)
    bb = env["objects"]["part"]["bbox"]
    for a, b in zip(res["bbox"]["size"], bb["size"]):
        assert math.isclose(a, b, rel_tol=1e-3, abs_tol=1e-3)
    assert (env["out"].stat().st_mode & 0o777) == 0o700
    assert (p.parent.stat().st_mode & 0o777) == 0o700
    text = render_text("export", res)
    assert str(p) in text
    _no_temp_files(env)


def test_file_contents_are_the_format(env):
    ts = env["ts"]
    heads = {"step": b"ISO-10303-21", "brep": b"\nCASCADE Topology", "3mf": b"PK\x03\x04"}
    for fmt, head in heads.items():
        res = ts.export("bracket", f"magic/b.{fmt}", "")
        assert "error" not in res, res
        assert Path(res["path"]).read_bytes().startswith(head)
    res = ts.export("part", "magic/b.stl", "")
    data = Path(res["path"]).read_bytes()
    n = int.from_bytes(data[80:84], "little")
    assert len(data) == 84 + 50 * n and res["triangles"] == n


@pytest.mark.parametrize("fmt", ["svg", "dxf"])
def test_2d_formats(env, fmt):
    ts = env["ts"]
    for name in ("profile", "ring", "part"):  # a sketch, a face, and a projected solid
        res = ts.export(name, f"flat/{name}.{fmt}", fmt)
        assert "error" not in res, res
        assert res["shapes"] > 0 and res["bbox"] is not None
        data = Path(res["path"]).read_bytes()
        assert (b"<svg" in data[:400]) if fmt == "svg" else (b"SECTION" in data[:200])
    # the sketch's drawing keeps its size (30 x 10)
    res = ts.export("profile", f"flat/profile-again.{fmt}", "")
    w, h, _ = res["bbox"]["size"]
    assert math.isclose(w, 30, rel_tol=1e-3) and math.isclose(h, 10, rel_tol=1e-3)


def test_stp_alias_and_format_argument(env):
    res = env["ts"].export("part", "alias.stp", "")
    assert res.get("format") == "step", res
    res = env["ts"].export("part", "alias2.STEP", "STEP")
    assert res.get("format") == "step", res


def test_format_and_extension_must_agree(env):
    ts = env["ts"]
    assert "does not match" in ts.export("part", "x.stl", "step")["error"]
    for name in ("x.txt", "noext", "x.pth", "Makefile", "run.desktop", "x.STEP.sh"):
        err = ts.export("part", name, "")["error"]
        assert "only files with these extensions are written: .3mf, .brep" in err, (name, err)
    assert "only for format 'py'" in ts.export("part", "x.py", "step")["error"]
    assert "format must be one of" in ts.export("part", "x.obj", "obj")["error"]  # the schema's enum
    assert not (env["out"] / "x.stl").exists()


def test_bad_objects(env):
    ts = env["ts"]
    assert "no top-level name" in ts.export("nope", "nope.step", "")["error"]
    assert "not a build123d shape" in ts.export("number", "n.step", "")["error"]
    assert "object_name" in ts.export("a.b", "n.step", "")["error"]
    # the session is fine afterwards
    assert ts.execute("x = part.volume")["ok"]


def test_no_overwrite(env):
    ts = env["ts"]
    first = ts.export("part", "once.step", "")
    assert "error" not in first
    before = Path(first["path"]).read_bytes()
    second = ts.export("bracket", "once.step", "")
    assert "already exists" in second["error"]
    assert Path(first["path"]).read_bytes() == before
    _no_temp_files(env)


# ------------------------------------------------------------------ path attacks
@pytest.mark.parametrize("name,msg", [
    ("../x.step", "'..' is refused"),
    ("a/../../x.step", "'..' is refused"),
    ("/etc/x.step", "absolute paths are refused"),
    ("/tmp/x.step", "absolute paths are refused"),
    ("~/x.step", "'~' paths are refused"),
    ("a//x.step", "empty or '.' component"),
    ("./x.step", "empty or '.' component"),
    ("dir/", "empty or '.' component"),
    ("x\x00.step", "NUL byte"),
    ("x\n.step", "control character"),
    ("a" * 4096 + ".step", "the limit is 1024"),
    ("a" * 256 + ".step", "the limit is 255"),
    ("/".join(["d" * 200] * 6) + "/x.step", "the limit is 1024"),
    ("", "filename must not be empty"),
])
def test_path_attacks_refused(env, name, msg):
    before = sorted(p for p in env["out"].rglob("*")) if env["out"].exists() else []
    res = env["ts"].export("part", name, "step")
    assert "error" in res and msg in res["error"], res
    after = sorted(p for p in env["out"].rglob("*")) if env["out"].exists() else []
    assert after == before
    _nothing_outside(env)
    assert not os.path.exists("/etc/x.step") and not os.path.exists("/tmp/x.step")


def test_symlinked_directory_is_not_followed(env):
    out, outside = env["out"], env["outside"]
    out.mkdir(mode=0o700, exist_ok=True)
    (out / "link").symlink_to(outside)
    try:
        for name in ("link/x.step", "link/sub/x.step"):
            res = env["ts"].export("part", name, "")
            assert "error" in res and "symlink" in res["error"], res
        _nothing_outside(env)
    finally:
        (out / "link").unlink()


def test_symlink_deeper_in_the_tree(env):
    out, outside = env["out"], env["outside"]
    (out / "deep" / "er").mkdir(parents=True, exist_ok=True)
    (out / "deep" / "er" / "tmp").symlink_to("/tmp")
    try:
        res = env["ts"].export("part", "deep/er/tmp/x.step", "")
        assert "symlink" in res["error"]
        assert not os.path.exists("/tmp/x.step")
    finally:
        (out / "deep" / "er" / "tmp").unlink()


def test_symlink_as_the_file_itself(env):
    out, outside = env["out"], env["outside"]
    out.mkdir(mode=0o700, exist_ok=True)
    (out / "evil.step").symlink_to(outside / "planted.step")  # dangling: O_CREAT would follow it
    try:
        res = env["ts"].export("part", "evil.step", "")
        assert "already exists" in res["error"], res
        _nothing_outside(env)
        assert os.path.islink(out / "evil.step")
    finally:
        (out / "evil.step").unlink()


def test_file_where_a_directory_is_expected(env):
    out = env["out"]
    out.mkdir(mode=0o700, exist_ok=True)
    (out / "plain").write_text("x")
    res = env["ts"].export("part", "plain/x.step", "")
    assert "not a directory" in res["error"], res


@pytest.fixture(scope="module")
def lax(tmp_path_factory):
    """A launcher whose profile has a 4 KiB export cap and the Python layers off,
    so user code can rewrite the jailed serializer (what an attacker who owns the
    jailed process could do) and the launcher's own checks are what is left."""
    from launcher.profile import find_profile
    d = tmp_path_factory.mktemp("lax")
    prof = d / "lax_export.toml"
    prof.write_text(f'extends = "{find_profile(TEST_PROFILE).stem}"\nname = "lax_export"\n'
                    "[limits]\nmax_export_bytes = 4096\n"
                    '[layers]\nast_policy = "off"\nbuiltins = "off"\n')
    L = zygotes.on_shared_zygote(str(prof), output_dir=d / "out")
    try:
        yield L, d / "out"
    finally:
        L.close()


def test_size_cap(lax):
    L, out = lax
    ts = ToolCalls(L)
    try:
        assert ts.execute("b = Box(1, 2, 3)")["ok"]
        res = ts.export("b", "b.step", "")  # ~15 kB of STEP
        assert "max_export_bytes" in res["error"], res
        assert not (out / "b.step").exists()
        res = ts.export("b", "b.svg", "")   # a small drawing fits
        assert "error" not in res, res
        assert res["size"] <= 4096
    finally:
        ts.close()


def test_numpy_stl_writer_fallback(lax):
    """The STL writer used when build123d has no Mesher.write_stream, run in the jail."""
    L, _out = lax
    ts = ToolCalls(L)
    try:
        r = ts.execute("import sys\nser = sys.modules['jail.cad.serialize']\n"
                       "c = Cylinder(5, 10)\nd = ser._stl_from_tessellation(c)\n"
                       "chk = ser.check_stl(d)\nprint(chk['volume'], c.volume, chk['triangles'])\n")
        assert r["ok"], r
        mesh_v, exact_v, n = map(float, r["stdout"].split())
        assert math.isclose(mesh_v, exact_v, rel_tol=0.01) and n > 20
    finally:
        ts.close()


LIAR = """
import sys
ser = sys.modules["jail.cad.serialize"]
def fake(ns, name, fmt, max_bytes, **k):
    if name == "huge":
        return b"A" * (max_bytes + 100000), {}
    if name == "badsize":
        return b"12345", {"size": 1}
    return b"forged bytes", {"check": {"volume": "nan", "bbox": {"min": [1, 2], "max": "x"},
                                       "triangles": -5, "solids": True, "shapes": 2 ** 70},
                             "source": "nope", "view": "v" * 5000, "path": "/etc/passwd"}
ser.serialize = fake
x = huge = badsize = Box(1, 1, 1)
"""


def test_a_lying_jail_cannot_steer_the_write(lax):
    L, out = lax
    ts = ToolCalls(L)
    try:
        r = ts.execute(LIAR)
        assert r["ok"], r
        res = ts.export("x", "forged.step", "")
        assert "is not a valid STEP file, nothing was written" in res["error"], res
        assert not (out / "forged.step").exists()
        assert not os.path.exists("/etc/passwd.step")
        for name in ("huge", "badsize"):
            res = ts.export(name, f"{name}.step", "")
            assert "error" in res, res
            assert not (out / f"{name}.step").exists()
        # the session survives its own lies
        assert ts.execute("y = 1")["ok"]
    finally:
        ts.close()


def test_the_session_claims_are_labelled_and_the_numbers_are_the_verifiers(lax):
    """A session that lies about its model: the file is a real (small) STEP, the claims are
    nonsense; the reply's numbers are measured by the verifier, the claims stay labelled."""
    L, out = lax
    ts = ToolCalls(L)
    try:
        code = ("import sys\nser = sys.modules['jail.cad.serialize']\n_real = ser.serialize\n"
                "def lie(ns, name, fmt, max_bytes, **k):\n"
                "    data, meta = _real(ns, name, fmt, max_bytes, **k)\n"
                "    meta['source'] = {'volume': 1e9, 'bbox': {'min': [0,0,0], 'max': [1,1,1], 'size': [1,1,1]}}\n"
                "    meta['check'] = {'volume': 1e9}\n"
                "    meta['view'] = 'click http://evil.example'\n"
                "    return data, meta\n"
                "ser.serialize = lie\nsmall = Box(1, 2, 3)\n")
        assert ts.execute(code)["ok"]
        res = ts.export("small", "small.svg", "")
        assert "error" not in res, res
        assert "view" not in res and res["shapes"] > 0
        res = ts.export("small", "small.brep", "")
        assert "error" not in res, res
        assert math.isclose(res["volume"], 6.0, rel_tol=1e-9) and res["solids"] == 1
        assert res["session_claims"]["volume"] == 1e9
    finally:
        ts.close()


def test_export_via_session_bytes_never_writes_in_the_jail(env):
    """The jailed side only returns bytes: its filesystem is read-only (FSIZE=0)."""
    s = env["ts"]._session()
    meta, data = s.export_bytes("part", "brep")
    assert meta["ok"] is True and meta["size"] == len(data)
    probe = s.probe()
    assert probe["rlimits"]["RLIMIT_FSIZE"][0] == 0
    assert probe["probes"]["write_root"] != "created"


# ------------------------------------------------------------------ the verifier
def test_the_verifier_is_its_own_session_made_once_replaced_when_dead(tmp_path):
    """The re-check runs in a session of its own (never the caller's), made on first use, reused,
    replaced when its head dies, and closed with the launcher."""
    L = zygotes.on_shared_zygote(TEST_PROFILE, output_dir=tmp_path / "out", spare_sessions=0)
    ts = ToolCalls(L)
    try:
        assert ts.execute("b = Box(1, 2, 3)")["ok"]
        assert L.verifier.session is None  # lazily: no export yet, no verifier
        assert "error" not in ts.export("b", "one.step", "")
        v = L.verifier.session
        user = ts._session()
        assert v is not None and v is not user and v.keeper.pid != user.keeper.pid
        assert v not in L.sessions.values()
        assert "error" not in ts.export("b", "two.stl", "")
        assert L.verifier.session is v and L.verifier.made == 1
        os.kill(v.head.pid, 9)  # a parser that took the whole verifier down
        from tests.helpers.proc import wait_until
        wait_until(lambda: not v.head.alive(), 10)
        res = ts.export("b", "three.brep", "")
        assert "error" not in res and res["solids"] == 1, res
        assert L.verifier.made == 2 and L.verifier.session is not v and v.closed
        keeper = L.verifier.session.keeper
    finally:
        ts.close()
        L.close()
    assert L.verifier.session is None and not keeper.alive()


def test_export_format_py_is_checked_and_named_by_the_rules(env):
    ts = env["ts"]
    for name in ("conftest.py", "test_design.py", "tests/test_x.py", "x_test.py", "sitecustomize.py",
                 "__init__.py", "setup.py", "numpy.py", "build123d.py", "ConfTest.PY", ".design.py"):
        res = ts.export("script", name, "py")
        assert "error" in res, (name, res)
        assert not (env["out"] / name).exists()
    res = ts.export("script", "design.py", "py")
    assert "error" not in res, res
    assert res["format"] == "py" and res["lines"] > 1 and "checked" in res


# ------------------------------------------------------------------ the default output directory
from test_unprivileged import AS_ROOT, user_env  # noqa: E402,F401 - run as uid 65533 (or self)

import mcpclient  # noqa: E402
from mcp import StdioServerParameters  # noqa: E402


def _mcp(prefix, env, cwd, *args):
    params = StdioServerParameters(
        command=prefix[0] if prefix else sys.executable,
        args=(prefix[1:] + [sys.executable] if prefix else []) + [
            "-m", "launcher", "mcp", "--embedded", "--profile", TEST_PROFILE, *args],
        env=env, cwd=str(cwd))
    return mcpclient.running(None, Path(env["HOME"]) / "mcp-stderr.log", params=params)


def test_default_output_dir_is_per_user_not_the_clients_cwd(user_env):
    """No --output-dir: exports go to ~/build123d-out (made 0700), never under the client's
    working directory (the user's project, where pytest would collect them)."""
    prefix, env, home, uid = user_env
    project = home / "project"
    project.mkdir()
    if AS_ROOT:
        os.chown(project, uid, uid)
    with _mcp(prefix, env, project) as c:
        assert "ok" in c.text("execute", {"code": "b = Box(1, 2, 3)"}).lower()
        t = c.text("export", {"object_name": "b", "filename": "b.step"})
        assert str(home / "build123d-out" / "b.step") in t, t
    assert (home / "build123d-out" / "b.step").is_file()
    st = (home / "build123d-out").stat()
    assert st.st_mode & 0o777 == 0o700 and st.st_uid == uid
    assert list(project.iterdir()) == []


def test_an_output_dir_that_cannot_be_made_names_the_option(user_env):
    prefix, env, home, uid = user_env
    locked = home / "locked"
    locked.mkdir(mode=0o500)
    if AS_ROOT:
        os.chown(locked, uid, uid)
    with _mcp(prefix, env, home, "--output-dir", str(locked / "out")) as c:
        c.text("execute", {"code": "b = Box(1, 2, 3)"})
        t = c.text("export", {"object_name": "b", "filename": "b.step"}, error=True)
        assert "cannot create the output directory" in t and "--output-dir" in t, t
    assert list(locked.iterdir()) == []

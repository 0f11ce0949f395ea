"""open/os/os.path/pathlib over the scratch directory, and build123d's file functions (jail/cad/fsviews.py,
fsexport.py), pure (no jail); and served to user code through the Python layers (runner.new_namespace)."""
from __future__ import annotations

import io

import pytest

from jail.cad import fsviews, runner, scratch

os_v, path_v, Path, open_ = fsviews.os_view, fsviews.path_view, fsviews.Path, fsviews.open_
SEED_IMPORTS = ["build123d", "math", "numpy", "typing", "collections", "itertools", "functools", "copy"]
SEED_BLOCKED = ["eval", "exec", "compile", "open", "__import__", "breakpoint", "input", "getattr", "vars", "dir",
                "hasattr"]
COMPAT_IMPORTS = SEED_IMPORTS + ["os", "pathlib"]
COMPAT_BLOCKED = [b for b in SEED_BLOCKED if b != "open"]


@pytest.fixture(autouse=True)
def fresh():
    yield scratch.begin(1 << 20, [("in.txt", b"given\n")])


def test_open_text_and_binary_modes():
    with open_("a.txt", "w", encoding="latin-1") as f:
        f.write("h\xe9\n")
    assert scratch.current().read_bytes("a.txt") == b"h\xe9\n"
    with open_("a.txt", "a", encoding="latin-1") as f:
        f.write("2\n")
    assert open_("a.txt", encoding="latin-1").readlines() == ["h\xe9\n", "2\n"]
    with open_("b.bin", "wb") as f:
        f.write(b"\x00\x01")
        f.seek(0)
        f.write(b"Z")
    assert open_("b.bin", "rb").read() == b"Z\x01"
    with open_("b.bin", "r+b") as f:
        f.seek(0, 2)
        f.write(b"!")
    assert open_("/scratch/b.bin", "rb").read() == b"Z\x01!"
    with pytest.raises(FileExistsError):
        open_("b.bin", "x")
    open_("c", "x").close()
    assert [line for line in open_("in.txt")] == ["given\n"]
    with pytest.raises(io.UnsupportedOperation):
        open_("in.txt", "rb").fileno()


@pytest.mark.parametrize("mode", ["rw", "rr", "bt", "q", "", "rbt", "U"])
def test_open_invalid_modes(mode):
    with pytest.raises(ValueError):
        open_("x", mode)


def test_open_never_reaches_the_real_file_system():
    with pytest.raises(FileNotFoundError):
        open_("pyproject.toml")  # exists in the real working directory, not in the scratch
    for name in ("/etc/passwd", "../../etc/passwd", "/proc/self/environ"):
        with pytest.raises(PermissionError, match="outside the scratch directory"):
            open_(name)
    with pytest.raises(PermissionError):
        open_(0)
    with pytest.raises(PermissionError):
        open_("x", "w", opener=lambda p, f: 3)


def test_writing_an_input_gives_the_code_its_own_copy():
    with open_("in.txt", "a") as f:  # the input's bytes, then the code's: a file the code wrote
        f.write("more\n")
    assert open_("in.txt").read() == "given\nmore\n"
    names = [f["name"] for f in scratch.current().collect()[0]]
    assert "in.txt" in names


def test_os_view_paths_and_files():
    assert os_v.getcwd() == "/scratch" and os_v.sep == "/" and os_v.linesep == "\n" and os_v.environ == {}
    assert os_v.getenv("HOME") is None
    os_v.makedirs("out/sub", exist_ok=True)
    os_v.makedirs("out/sub", exist_ok=True)
    with open_(os_v.path.join("out", "sub", "a.txt"), "w") as f:
        f.write("x")
    assert os_v.listdir("out") == ["sub"] and path_v.isfile("out/sub/a.txt") and path_v.isdir("out")
    assert path_v.getsize("out/sub/a.txt") == 1 and os_v.stat("out/sub/a.txt").st_size == 1
    assert path_v.abspath("a/../b") == "/scratch/b" and path_v.relpath("/scratch/out/x") == "out/x"
    assert path_v.realpath("x") == "/scratch/x" and path_v.expanduser("~/x") == "~/x"
    assert [(d, sorted(f)) for d, _s, f in os_v.walk(".")] == [(".", ["in.txt"]), ("./out", []),
                                                                ("./out/sub", ["a.txt"])]
    with os_v.scandir("out/sub") as it:
        assert [(e.name, e.is_file(), e.is_symlink()) for e in it] == [("a.txt", True, False)]
    os_v.rename("out/sub/a.txt", "b.txt")
    os_v.replace("b.txt", "c.txt")
    os_v.remove("c.txt")
    assert not path_v.exists("c.txt") and not path_v.exists("/etc/passwd")
    with pytest.raises(PermissionError):
        os_v.chdir("/")


@pytest.mark.parametrize("name", ["system", "popen", "fork", "execv", "spawnv", "kill", "open", "fdopen", "dup2",
                                  "symlink", "link", "mkfifo", "mknod", "chmod", "chown", "setuid", "getpid",
                                  "putenv", "environb", "truncate", "posix_spawn", "read", "write", "sys",
                                  "abc", "st", "_exit", "__builtins__", "__file__", "__loader__"])
def test_os_view_has_no_process_fd_or_link_functions(name):
    assert name not in vars(os_v) and name not in vars(path_v)
    with pytest.raises(AttributeError):
        getattr(os_v, name)


def test_views_are_read_only():
    with pytest.raises(AttributeError):
        os_v.getcwd = lambda: "/"
    with pytest.raises(AttributeError):
        del path_v.join


def test_pathlib_view():
    p = Path("/scratch/script.py").parent / "out" / "part.txt"
    assert str(p) == "/scratch/out/part.txt" and Path.cwd() == Path("/scratch")
    p.parent.mkdir(parents=True)
    p.write_text("hi")
    assert p.exists() and p.is_file() and p.read_text() == "hi" and p.read_bytes() == b"hi"
    assert p.with_suffix(".step").name == "part.step" and p.stat().st_size == 2
    assert [q.name for q in Path("out").iterdir()] == ["part.txt"]
    assert [str(q) for q in Path().glob("*.txt")] == ["in.txt"]
    assert [str(q) for q in Path().rglob("*.txt")] == ["in.txt", "out/part.txt"]
    p.unlink()
    p.unlink(missing_ok=True)
    assert not Path("/etc/passwd").exists()
    with pytest.raises(PermissionError):
        Path("/tmp/x").write_text("x")
    assert isinstance(p, fsviews.pathlib_view.PurePath) and repr(Path("a")) == "Path('a')"


# ------------------------------------------------------------------ build123d's file functions
@pytest.fixture(scope="module")
def b3d():
    import build123d as b
    from jail.cad import fsexport
    subs = fsexport.stand_ins()
    return type("B", (), {n: subs.get(id(getattr(b, n)), getattr(b, n)) for n in dir(b) if not n.startswith("_")})


def test_exporters_write_to_the_scratch(b3d):
    part = b3d.Box(1, 2, 3)
    assert b3d.export_step(part, "p.step") is True and b3d.export_brep(part, Path("p.brep")) is True
    assert b3d.export_stl(part, "p.stl") is True and b3d.export_stl(part, "a.stl", ascii_format=True) is True
    svg = b3d.ExportSVG()
    svg.add_shape(b3d.Rectangle(2, 3))
    svg.write("r.svg")
    dxf = b3d.ExportDXF()
    dxf.add_shape(b3d.Rectangle(2, 3))
    dxf.write("r.dxf")
    m = b3d.Mesher()
    m.add_shape(part)
    m.write("m.3mf")
    sc = scratch.current()
    assert sc.read_bytes("p.step").startswith(b"ISO-10303-21") and sc.read_bytes("a.stl").startswith(b"solid")
    stl = sc.read_bytes("p.stl")
    assert len(stl) == 84 + 50 * int.from_bytes(stl[80:84], "little") and b"<svg" in sc.read_bytes("r.svg")
    assert abs(b3d.import_step("p.step").volume - 6) < 1e-6 and abs(b3d.import_brep("p.brep").volume - 6) < 1e-6
    assert b3d.import_stl("p.stl") is not None and b3d.import_stl("a.stl") is not None
    assert abs(b3d.Mesher().read("m.3mf")[0].volume - 6) < 1e-3 and b3d.import_dxf("r.dxf")
    assert b3d.import_svg("r.svg") and "BuildLine" in b3d.import_svg_as_buildline_code("r.svg")[0]
    buf = io.BytesIO()
    assert b3d.export_step(part, buf) and buf.getvalue().startswith(b"ISO-10303-21")  # streams unchanged
    with open_("s.step", "wb") as f:
        b3d.export_step(part, f)
    assert sc.read_bytes("s.step").startswith(b"ISO-10303-21")


def test_step_and_stl_to_a_path_outside_behave_the_same(b3d):
    part = b3d.Box(1, 1, 1)
    for fn in (b3d.export_step, b3d.export_stl, b3d.export_brep):
        with pytest.raises(PermissionError, match="outside the scratch directory"):
            fn(part, "/tmp/x.out")
        fn(part, f"made/dir/x{fn.__name__}.out")  # missing directories above a written file are made
    with pytest.raises(PermissionError, match="export_gltf"):
        b3d.export_gltf(part, "x.gltf")
    with pytest.raises(FileNotFoundError):
        b3d.import_step("missing.step")
    with pytest.raises(PermissionError):
        b3d.import_stl("/etc/passwd")


def test_exports_over_the_cap_fail_clearly(b3d):
    scratch.begin(1000, [])
    with pytest.raises(OSError, match="No space left in the scratch directory"):
        b3d.export_step(b3d.Box(1, 1, 1), "big.step")
    assert scratch.current().collect() == ([], b"")


# ------------------------------------------------------------------ served through the Python layers
def _run(code, ns, imports, blocked):
    return runner.run(code, ns, python_layers=True, allowed_imports=imports, blocked_calls=blocked,
                      max_output_bytes=10000)


def test_served_to_user_code_with_the_compatible_lists():
    ns = runner.new_namespace(COMPAT_IMPORTS, COMPAT_BLOCKED, True)
    r = _run("import os\nfrom os.path import join\nfrom pathlib import Path\nimport os.path as osp\n"
             "part = Box(1, 1, 1)\nos.makedirs('out', exist_ok=True)\n"
             "export_step(part, join('out', 'p.step'))\nexport_stl(part, Path('out') / 'p.stl')\n"
             "with open(osp.join(os.getcwd(), 'n.txt'), 'w') as f:\n    f.write('x')\n", ns,
             COMPAT_IMPORTS, COMPAT_BLOCKED)
    assert r["ok"], r["error"]
    assert [f["name"] for f in scratch.current().collect()[0]] == ["n.txt", "out/p.step", "out/p.stl"]
    assert ns["__file__"] == "/scratch/script.py"
    assert not {o["name"] for o in r["objects"]} & {"export_step", "export_stl", "ExportSVG", "Mesher"}
    for bad in ("import os\nos.system('id')", "from os import system", "import os\nos.path.os",
                "import pathlib\npathlib.os", "import posixpath", "from os.path import os", "import os\nos.fork()",
                "open('/etc/passwd').read()"):
        r = _run(bad, ns, COMPAT_IMPORTS, COMPAT_BLOCKED)
        assert not r["ok"], bad


def test_seed_lists_keep_open_and_os_out():
    ns = runner.new_namespace(SEED_IMPORTS, SEED_BLOCKED, True)
    assert "open" not in ns["__builtins__"]
    for code in ("import os", "import pathlib", "open('x', 'w')"):
        assert not _run(code, ns, SEED_IMPORTS, SEED_BLOCKED)["ok"], code

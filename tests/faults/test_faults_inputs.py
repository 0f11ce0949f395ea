"""The input directory and import_file under attack (issue 15).

* Path attacks on the launcher's reader (launcher/inputs.py), on real files: absolute paths,
  ``..``, symlinks (final, intermediate, dangling, into /proc, to a file inside the input dir),
  hard links to a secret, FIFOs (must never block), sockets, devices, directories, /proc paths,
  oversized and sparse files. The secret's bytes must never come back.
* Hostile files through real jailed sessions (ToolSet on the ``faults`` profiles): malformed
  files of every format, a STEP too big to parse before the deadline (the real OCCT reader
  hits the wall-clock limit), and a parser that crashes, hangs or blows up its memory (user code
  in the ``faults_os_only`` profile replaces the jailed reader in its own process, as an
  attacker owning the session could). Every failed import leaves the session as it was: same
  objects, same history (script).
* User code trying to reach the input directory directly sees nothing (OS layers only).
"""
from __future__ import annotations

import dataclasses
import io
import os
import socket
import stat
import threading

import pytest

from tests.helpers.faults import profile_path
from launcher.files import inputs
from launcher.core import Launcher
from launcher.files.inputs import InputError, list_inputs, read_input
from launcher.profile import load_profile
from launcher.tools import render_text
from tests.helpers.toolcalls import ToolCalls

CAP = 1 << 20
SECRET = b"TOP-SECRET-" + os.urandom(8).hex().encode()


@pytest.fixture
def tree(tmp_path):
    """An input directory with a good file, and a secret outside it."""
    indir = tmp_path / "in"
    indir.mkdir()
    (indir / "good.step").write_bytes(b"ISO-10303-21;\n")
    (indir / "sub").mkdir()
    (indir / "sub" / "deep.stl").write_bytes(b"solid x\nendsolid x\n")
    outside = tmp_path / "secret"
    outside.mkdir()
    (outside / "key.step").write_bytes(SECRET)
    return indir, outside / "key.step"


def refused(indir, name, *, match: str = "", cap: int = CAP) -> str:
    with pytest.raises(InputError) as ei:
        read_input(indir, name, cap)
    msg = str(ei.value)
    assert SECRET.decode() not in msg
    assert match in msg, msg
    return msg


# ------------------------------------------------------------------ names
@pytest.mark.parametrize("name", [
    "/etc/passwd", "/proc/self/environ", "//good.step", "~/good.step", "~root/x", "../secret/key.step",
    "sub/../../secret/key.step", "sub/../good.step", "./good.step", "sub//deep.stl", "", "good.step\x00.txt",
    "good\n.step", "g\u202eetsp.doog", "good\u200b.step", "good\x85.step", "a" * 300 + ".step",
    "/".join(["d"] * 600),
])
def test_bad_names_refused(tree, name):
    indir, _ = tree
    msg = refused(indir, name)
    assert all(c.isprintable() for c in msg), msg  # code points shown escaped, never raw


def test_good_names_read(tree):
    indir, _ = tree
    data, info = read_input(indir, "good.step", CAP)
    assert data == b"ISO-10303-21;\n" and info["size"] == len(data) and info["filename"] == "good.step"
    assert read_input(indir, "sub/deep.stl", CAP)[0].startswith(b"solid")


# ------------------------------------------------------------------ links
def test_symlink_final_to_secret(tree):
    indir, secret = tree
    os.symlink(secret, indir / "link.step")
    refused(indir, "link.step", match="symlink")


def test_symlink_final_inside_input_dir(tree):
    indir, _ = tree
    os.symlink("good.step", indir / "alias.step")
    refused(indir, "alias.step", match="symlink")


def test_symlink_dangling(tree):
    indir, _ = tree
    os.symlink("/nonexistent/x.step", indir / "dangling.step")
    refused(indir, "dangling.step", match="symlink")


def test_symlink_intermediate_directory(tree):
    indir, secret = tree
    os.symlink(secret.parent, indir / "via")
    refused(indir, "via/key.step", match="symlink")


def test_symlink_to_proc(tree):
    indir, _ = tree
    os.symlink("/proc/self/environ", indir / "env.step")
    os.symlink("/proc/self", indir / "me")
    refused(indir, "env.step", match="symlink")
    refused(indir, "me/environ", match="symlink")


def test_hard_link_to_secret(tree):
    indir, secret = tree
    os.link(secret, indir / "hard.step")
    refused(indir, "hard.step", match="hard link")


def test_hard_linked_file_refused_even_if_harmless(tree):
    indir, _ = tree
    os.link(indir / "good.step", indir / "twin.step")
    refused(indir, "good.step", match="hard link")


def test_symlinked_input_dir_itself_is_trusted(tree, tmp_path):
    """The root is the user's choice: a symlink *to* the input directory is followed (by design)."""
    indir, _ = tree
    os.symlink(indir, tmp_path / "in-link")
    assert read_input(tmp_path / "in-link", "good.step", CAP)[0] == b"ISO-10303-21;\n"


# ------------------------------------------------------------------ special files
def _in_thread(fn):
    """Run fn in a thread; the result or exception. A call that blocks fails the test after a
    generous deadline instead of hanging the run (the behaviour under test is 'never blocks')."""
    out = {}

    def run():
        try:
            out["value"] = fn()
        except BaseException as e:  # noqa: BLE001
            out["exc"] = e
    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(60)
    assert not t.is_alive(), "the call blocked"
    return out


def test_fifo_refused_without_blocking(tree):
    indir, _ = tree
    os.mkfifo(indir / "pipe.step")
    out = _in_thread(lambda: read_input(indir, "pipe.step", CAP))
    assert isinstance(out.get("exc"), InputError) and "FIFO" in str(out["exc"]), out


def test_fifo_listed_as_skipped_without_blocking(tree):
    indir, _ = tree
    os.mkfifo(indir / "pipe.stl")
    out = _in_thread(lambda: list_inputs(indir, CAP))
    res = out["value"]
    assert "pipe.stl" not in [f["name"] for f in res["files"]]
    assert any(s["name"] == "pipe.stl" and "FIFO" in s["why"] for s in res["skipped"]), res


def test_socket_refused(tree):
    indir, _ = tree
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.bind(str(indir / "sock.step"))
        s.listen(1)
        refused(indir, "sock.step", match="socket")
    finally:
        s.close()


@pytest.mark.skipif(os.geteuid() != 0, reason="mknod needs root")
def test_devices_refused(tree):
    indir, _ = tree
    os.mknod(indir / "zero.step", 0o600 | stat.S_IFCHR, os.makedev(1, 5))   # /dev/zero: endless bytes
    os.mknod(indir / "loop.step", 0o600 | stat.S_IFBLK, os.makedev(7, 0))
    refused(indir, "zero.step", match="character device")
    refused(indir, "loop.step", match="block device")


def test_entry_swapped_after_the_check_is_refused(tree):
    """The O_PATH fd must be the inode that was checked: a FIFO, device or other file swapped in
    between the check and the open is refused (and a FIFO never blocks)."""
    indir, secret = tree
    dfd = os.open(indir, os.O_RDONLY | os.O_DIRECTORY)
    try:
        checked = os.stat(indir / "good.step")
        os.rename(indir / "good.step", indir / "moved.step")
        os.mkfifo(indir / "good.step")
        out = _in_thread(lambda: inputs._open_checked(dfd, "good.step", checked, "good.step", "", CAP))
        assert isinstance(out.get("exc"), InputError) and "replaced" in str(out["exc"]), out
        os.unlink(indir / "good.step")
        os.symlink(secret, indir / "good.step")
        with pytest.raises(InputError, match="replaced"):
            inputs._open_checked(dfd, "good.step", checked, "good.step", "", CAP)
        os.unlink(indir / "good.step")
        os.rename(indir / "moved.step", indir / "good.step")
        fd = inputs._open_checked(dfd, "good.step", checked, "good.step", "", CAP)
        try:
            assert os.read(fd, 100) == b"ISO-10303-21;\n"
            assert os.readlink(f"/proc/self/fd/{fd}") == str(indir / "good.step")
        finally:
            os.close(fd)
    finally:
        os.close(dfd)


def test_directory_refused(tree):
    indir, _ = tree
    refused(indir, "sub", match="directory")


def test_missing_file_and_missing_dir(tree):
    indir, _ = tree
    refused(indir, "nope.step", match="does not exist")
    refused(indir, "nodir/nope.step", match="does not exist")


# ------------------------------------------------------------------ size
def test_oversized_refused(tree):
    indir, _ = tree
    (indir / "big.stl").write_bytes(b"x" * (CAP + 1))
    refused(indir, "big.stl", match="max_input_bytes")
    (indir / "exact.stl").write_bytes(b"x" * CAP)
    assert len(read_input(indir, "exact.stl", CAP)[0]) == CAP


def test_sparse_terabyte_refused_before_reading(tree):
    indir, _ = tree
    with open(indir / "sparse.step", "wb") as f:
        f.truncate(1 << 40)
    refused(indir, "sparse.step", match="max_input_bytes")


def test_no_input_dir_says_how_to_set_it():
    with pytest.raises(InputError) as ei:
        read_input(None, "x.step", CAP)
    assert "--input-dir" in str(ei.value)


def test_list_inputs_never_follows_symlinks(tree, tmp_path):
    indir, secret = tree
    os.symlink(secret.parent, indir / "linked-dir")
    os.symlink(secret, indir / "linked.step")
    os.link(secret, indir / "hard.step")
    res = list_inputs(indir, CAP)
    names = [f["name"] for f in res["files"]]
    assert names == ["good.step", "sub/deep.stl"], res
    skipped = {s["name"]: s["why"] for s in res["skipped"]}
    assert "symlink" in skipped["linked-dir"] and "symlink" in skipped["linked.step"]
    assert "hard link" in skipped["hard.step"]
    assert "key.step" not in repr(res)


# ------------------------------------------------------------------ through jailed sessions
def _profile(name: str, **limits):
    p = load_profile(profile_path(name))
    return dataclasses.replace(p, limits=dataclasses.replace(p.limits, **limits)) if limits else p


@pytest.fixture(scope="module")
def indir(tmp_path_factory):
    d = tmp_path_factory.mktemp("inputs")
    from build123d import Box, export_step
    b = io.BytesIO()
    export_step(Box(10, 20, 30), b)
    (d / "box.step").write_bytes(b.getvalue())
    (d / "garbage.step").write_bytes(b"ISO-10303-21;\nHEADER;\nnot really\n")
    (d / "garbage.brep").write_bytes(b"DBRep_DrawableShape\nnonsense\n")
    (d / "garbage.stl").write_bytes(b"\x00" * 80 + (10 ** 6).to_bytes(4, "little") + b"\x00" * 100)
    (d / "garbage.3mf").write_bytes(b"PK\x03\x04 not a zip")
    (d / "bomb.3mf").write_bytes(_zip_bomb())
    (d / "doctype.3mf").write_bytes(_zip({"3D/3dmodel.model": b'<?xml version="1.0"?><!DOCTYPE m [<!ENTITY a "aaaa">'
                                                              b']><model>&a;</model>'}))
    (d / "garbage.svg").write_bytes(b"<svg><unclosed>")
    (d / "entities.svg").write_bytes(b'<?xml version="1.0"?><!DOCTYPE svg [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
                                     b'<svg xmlns="http://www.w3.org/2000/svg">&x;</svg>')
    (d / "garbage.dxf").write_bytes(b"0\nSECTION\n2\nENTITIES\n0\nLINE\n10\nnot-a-number\n0\nENDSEC\n")
    (d / "empty.step").write_bytes(b"")
    (d / "huge.step").write_bytes(_huge_step(25 * 1024 * 1024))
    (d / "big.stl").write_bytes(b"solid x\n" + b" " * 5000 + b"\nendsolid x\n")
    return d


def _zip(members: dict) -> bytes:
    import zipfile
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w", zipfile.ZIP_DEFLATED) as z:
        for k, v in members.items():
            z.writestr(k, v)
    return b.getvalue()


def _zip_bomb() -> bytes:
    """A 3MF whose model part inflates to 600 MiB of spaces (a few hundred KiB compressed)."""
    import zipfile
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w", zipfile.ZIP_DEFLATED) as z:
        with z.open("3D/3dmodel.model", "w", force_zip64=True) as f:
            chunk = b" " * (1 << 20)
            for _ in range(600):
                f.write(chunk)
    return b.getvalue()


def _huge_step(size: int) -> bytes:
    """A syntactically valid STEP of ~size bytes: a long chain of points (too much to parse in 2 s)."""
    head = (b"ISO-10303-21;\nHEADER;\nFILE_DESCRIPTION((''),'2;1');\nFILE_NAME('x','',(''),(''),'','','');\n"
            b"FILE_SCHEMA(('AUTOMOTIVE_DESIGN'));\nENDSEC;\nDATA;\n")
    lines, n, i = [head], len(head), 1
    while n < size:
        s = b"#%d=CARTESIAN_POINT('',(%d.,%d.,%d.));\n" % (i, i, i + 1, i + 2)
        lines.append(s)
        n += len(s)
        i += 1
    lines.append(b"ENDSEC;\nEND-ISO-10303-21;\n")
    return b"".join(lines)


@pytest.fixture(scope="module")
def launcher(indir, tmp_path_factory):
    with Launcher(_profile("faults", import_timeout_s=2.0), output_dir=tmp_path_factory.mktemp("out"),
                  input_dir=indir) as L:
        yield L


@pytest.fixture(scope="module")
def os_only(indir, tmp_path_factory):
    with Launcher(_profile("faults_os_only", import_timeout_s=2.0), output_dir=tmp_path_factory.mktemp("out"),
                  input_dir=indir) as L:
        yield L


def _state(ts) -> tuple[str, str]:
    return render_text("session_state", ts.session_state()), render_text("script", ts.script())


def _prepared(L) -> ToolCalls:
    ts = ToolCalls(L)
    assert ts.execute("keep = Box(1, 2, 3)\nmarker = 'still-here'")["ok"]
    assert ts.import_file("box.step", "box")["ok"]
    return ts


@pytest.mark.parametrize("name", ["garbage.step", "garbage.brep", "garbage.stl", "garbage.3mf", "bomb.3mf",
                                  "doctype.3mf", "garbage.svg", "entities.svg", "garbage.dxf", "empty.step",
                                  "big.stl"])
def test_malformed_file_leaves_session_unchanged(launcher, name):
    ts = _prepared(launcher)
    try:
        before = _state(ts)
        r = ts.import_file(name, "bad")
        text = render_text("import_file", r)
        assert r.get("ok") is not True, text
        assert "Error" in text or "failed" in text, text
        assert "root:" not in text  # the external entity was never expanded
        assert _state(ts) == before
        assert "bad" not in before[0]
    finally:
        ts.close()


def test_step_too_big_to_parse_hits_the_timeout(indir, tmp_path):
    """The real OCCT reader on 25 MB of points (over a second of parsing on an idle host): killed at
    the profile's import_timeout_s (0.5 s here), the session unchanged."""
    with Launcher(_profile("faults", import_timeout_s=0.5), output_dir=tmp_path / "o", input_dir=indir) as L:
        ts = ToolCalls(L)
        assert ts.execute("keep = Box(1, 2, 3)\nmarker = 'still-here'")["ok"]
        before = _state(ts)
        # Handing 25 MB to the next counts against the 0.5 s too: on a loaded host the hand-over
        # itself can miss it (SessionNotReading, the session unchanged as well); try again then.
        for _attempt in range(5):
            r = ts.import_file("huge.step", "huge")
            assert r.get("ok") is False and r["error"]["type"] in ("ExecutionTimeout", "SessionNotReading"), r
            assert _state(ts) == before
            if r["error"]["type"] == "ExecutionTimeout":
                break
        assert r["error"]["type"] == "ExecutionTimeout", r
        assert "0.5s wall-clock limit" in r["error"]["message"], r
        assert ts.execute("print(marker, keep.volume)")["stdout"].strip() == "still-here 6.0"


def test_oversized_file_refused_before_the_jail(indir, tmp_path):
    with Launcher(_profile("faults", max_input_bytes=1024), output_dir=tmp_path / "o", input_dir=indir) as L:
        ts = ToolCalls(L)
        r = ts.import_file("box.step", "box")
        assert "max_input_bytes" in r["error"], r
        assert ts.import_file("garbage.dxf", "x")["ok"] is False  # small files still go through


PATCH = """\
import jail.cad.readers as I
def evil(data):
{body}
I.READERS['step'] = evil
"""


@pytest.mark.parametrize("kind,body,expect", [
    ("hang", "    while True:\n        pass", "ExecutionTimeout"),
    ("crash", "    import signal\n    signal.raise_signal(signal.SIGSEGV)", "ChildDied"),
    ("abort", "    import os\n    os.abort()", "ChildDied"),
    ("memory", "    x = bytearray(1 << 40)", "MemoryError"),
    ("exit", "    import os\n    os._exit(0)", "ChildDied"),
])
def test_parser_that_crashes_or_hangs(os_only, kind, body, expect):
    """The jailed reader replaced (in the session's own process) by one that misbehaves."""
    ts = ToolCalls(os_only)
    try:
        assert ts.execute("keep = Box(1, 2, 3)\nmarker = 'still-here'")["ok"]
        assert ts.execute(PATCH.format(body=body))["ok"]
        before = _state(ts)
        r = ts.import_file("box.step", "box")
        assert r.get("ok") is False, r
        assert r["error"]["type"] == expect, r
        assert "unchanged" in render_text("import_file", r)
        assert _state(ts) == before
        assert ts.execute("print(marker, keep.volume)")["stdout"].strip() == "still-here 6.0"
    finally:
        ts.close()


def test_user_code_cannot_reach_the_input_dir(os_only, indir):
    """OS layers only (no Python layers): the input directory is not in the jail's view."""
    ts = ToolCalls(os_only)
    try:
        code = f"""\
import os
out = []
for attempt in (lambda: os.listdir({str(indir)!r}), lambda: open({str(indir / 'box.step')!r}, 'rb').read(),
                lambda: os.stat({str(indir)!r}), lambda: import_step({str(indir / 'box.step')!r})):
    try:
        attempt()
        out.append('REACHED')
    except Exception as e:
        out.append(type(e).__name__)
print(out)
"""
        r = ts.execute(code)
        assert r["ok"], r
        assert "REACHED" not in r["stdout"] and r["stdout"].count("Error") == 4, r["stdout"]
    finally:
        ts.close()


def test_history_entry_cannot_forge_the_script_format(launcher):
    """Code with ANSI/bidi characters comes back escaped in the script, not raw."""
    ts = ToolCalls(launcher)
    try:
        assert ts.execute("s = 'a\x1b[2Jb'  # \u202e hidden")["ok"]
        text = ts.script()["script"]
        assert "\x1b" not in text and "\u202e" not in text
        assert "\\x1b[2J" in text and "\\u202e" in text
    finally:
        ts.close()


def test_import_names_refused(launcher):
    ts = ToolCalls(launcher)
    try:
        for bad in ("__builtins__", "class", "1x", "a-b", "ñ"):
            r = ts.import_file("box.step", bad)
            assert isinstance(r.get("error"), str), (bad, r)
    finally:
        ts.close()


def test_format_mismatch_is_a_parse_error_not_a_crash(launcher):
    ts = _prepared(launcher)
    try:
        before = _state(ts)
        for fmt in ("stl", "3mf", "svg", "dxf", "brep"):
            r = ts.import_file("box.step", "x", fmt)
            assert r.get("ok") is False and r["error"]["type"] == "ImportError", (fmt, r)
        assert _state(ts) == before
    finally:
        ts.close()


def test_input_module_docstring_names_what_it_blocks():
    assert "hard link" in inputs.__doc__ and "FIFO" in inputs.__doc__


def test_input_dir_inside_a_jail_read_path_is_reported(tmp_path):
    """An input directory the jail can see (inside a profile read path) would be readable by user
    code: the launcher says so at start."""
    p = load_profile("default")
    assert inputs.exposed_by(p, "/usr/share/fonts/cad") == "/usr/share/fonts"
    assert inputs.exposed_by(p, tmp_path) is None
    assert inputs.exposed_by(dataclasses.replace(p, read_paths=(str(tmp_path),)), tmp_path / "in") == str(tmp_path)


def test_list_inputs_is_bounded(tree, monkeypatch):
    indir, _ = tree
    monkeypatch.setattr(inputs, "MAX_LIST_SCAN", 50)
    big = indir / "many"
    big.mkdir()
    for i in range(300):
        (big / f"f{i:03d}.stl").write_bytes(b"solid\n")
    res = list_inputs(indir, CAP)
    assert res["truncated"] is True and len(res["files"]) <= 50

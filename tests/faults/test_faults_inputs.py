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
* Issue 20: dot names (``.env``, ``.git/config``) and non-CAD files are never listed or imported,
  whatever ``format`` says; an import's error never carries the file's bytes, even from an
  importer the session patched (``faults_os_only``); the bytes of imports in flight come from one
  launcher-wide budget (a request waits its turn, or gets "busy" with nothing changed).
"""
from __future__ import annotations

import dataclasses
import io
import os
import socket
import stat
import threading

import pytest

from tests.helpers import zygotes
from tests.helpers.faults import profile_path
from tests.helpers.proc import wait_until
from launcher.files import inflight, inputs
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
    refused(indir, "me/environ", match="not a CAD file")  # refused by name, before anything is opened
    refused(indir, "me/environ.step", match="symlink")


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
    refused(indir, "sub", match="not a CAD file")  # by its name first
    (indir / "dir.step").mkdir()
    refused(indir, "dir.step", match="directory")


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
    with zygotes.on_shared_zygote(_profile("faults", import_timeout_s=2.0), output_dir=tmp_path_factory.mktemp("out"),
                  input_dir=indir) as L:
        yield L


@pytest.fixture(scope="module")
def os_only(indir, tmp_path_factory):
    with zygotes.on_shared_zygote(_profile("faults_os_only", import_timeout_s=2.0), output_dir=tmp_path_factory.mktemp("out"),
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
    with zygotes.on_shared_zygote(_profile("faults", import_timeout_s=0.5), output_dir=tmp_path / "o", input_dir=indir) as L:
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
    with zygotes.on_shared_zygote(_profile("faults", max_input_bytes=1024), output_dir=tmp_path / "o", input_dir=indir) as L:
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


def test_format_mismatch_is_refused_before_the_jail(launcher):
    ts = _prepared(launcher)
    try:
        before = _state(ts)
        for fmt in ("stl", "3mf", "svg", "dxf", "brep"):
            r = ts.import_file("box.step", "x", fmt)
            assert isinstance(r.get("error"), str) and "does not match 'box.step'" in r["error"], (fmt, r)
        assert _state(ts) == before
    finally:
        ts.close()


# ------------------------------------------------------------------ issue 20: through jailed sessions
KEY = os.urandom(12).hex()
CREDS = f"AWS_ACCESS_KEY_ID=AKIA{KEY[:8].upper()}\nAWS_SECRET_ACCESS_KEY={KEY}\n".encode()


def _no_secret(*texts) -> None:
    for t in texts:
        assert KEY not in t and KEY[:8].upper() not in t and "AWS_SECRET" not in t, t


@pytest.fixture(scope="module")
def with_dots(indir):
    """Secrets and a valid STEP under dot names, next to the CAD files; a DXF and a 3MF that carry
    the secret where the parser chokes (the issue's DXF/3MF error showed it)."""
    box = (indir / "box.step").read_bytes()
    files = {".env": CREDS, ".git/config": b"[credential]\n" + CREDS, ".git/part.step": box, ".hidden.step": box,
             "creds.txt": CREDS, "creds.env": CREDS,
             "creds.dxf": b"0\nSECTION\n2\nENTITIES\n0\nLINE\n10\n" + CREDS.replace(b"\n", b" ") + b"\n0\nENDSEC\n",
             "creds.3mf": _zip({"3D/3dmodel.model": b'<model xmlns="http://schemas.microsoft.com/3dmanufacturing/'
                                                   b'core/2015/02"><resources><object id="1"><mesh><vertices>'
                                                   b'<vertex x="' + CREDS.replace(b"\n", b" ") + b'" y="0" z="0"/>'
                                                   b'</vertices></mesh></object></resources></model>'})}
    for name, data in files.items():
        (indir / name).parent.mkdir(parents=True, exist_ok=True)
        (indir / name).write_bytes(data)
    return indir


@pytest.mark.parametrize("name,fmt", [(".env", ""), (".env", "step"), (".git/config", "dxf"), (".git/part.step", ""),
                                      (".hidden.step", "step"), ("creds.txt", "svg"), ("creds.env", "stl")])
def test_a_session_is_never_handed_a_dot_or_foreign_file(launcher, with_dots, name, fmt):
    ts = _prepared(launcher)
    try:
        before = _state(ts)
        r = ts.import_file(name, "leak", fmt)
        assert isinstance(r.get("error"), str) and "list_inputs offers" in r["error"], r
        _no_secret(repr(r))
        assert _state(ts) == before
        listed = ts.list_inputs()
        _no_secret(repr(listed))
        assert not any(f["name"].startswith(".") or f["name"].startswith("creds.t") for f in listed["files"])
        assert ".git" not in repr(listed) and ".env" not in repr(listed) and "creds.txt" not in repr(listed)
    finally:
        ts.close()


@pytest.mark.parametrize("name,says", [("creds.dxf", "'creds.dxf' (DXF) has a malformed number at line 8"),
                                       ("creds.3mf", "'creds.3mf' (3MF) has a vertex or triangle with a missing or "
                                                     "malformed attribute at line 1")])
def test_a_parse_error_says_what_and_where_never_the_content(launcher, with_dots, name, says):
    ts = _prepared(launcher)
    try:
        r = ts.import_file(name, "leak")
        text = render_text("import_file", r)
        assert r["ok"] is False and says in r["error"]["message"], text
        _no_secret(repr(r), text, render_text("last_error", ts.last_error()))
    finally:
        ts.close()


EVIL_RESULT = """import base64, jail.cad.importer as I
def evil(msg, ns, blob=b''):
    s = (bytes(blob) or base64.b64decode(msg.get("data") or "")).decode('latin-1')  # (main sent base64)
    return {{"ok": False, "stdout": s, "stderr": s, "truncated": False, "objects": [{{"name": s[:50]}}],
            "value": {{"repr": s}}, "note": s, "duration_ms": 1,
            "error": {{"type": {type}, "message": s, "source_line": s, "hint": s, "function": s, "line": 1,
                      "context": [s], "origin": {{"call": 1, "line": 1, "text": s}}, "reason": {reason},
                      "file_line": 2, "file_col": 3, "kinds": [s, "LINE"], "extra": s}}}}
I.run_import = evil
"""
EVIL_LAST_WORDS = """import base64, signal, jail.proc.ops as O
def evil(msg, ctx):
    s = (bytes(ctx.blob) or base64.b64decode(msg.get("data") or "")).decode('latin-1')
    signal.signal(signal.SIGUSR2, lambda *a: ctx.send({"t": "partial", "stdout": s, "stderr": s, "line": 1,
                                                      "function": "f", "source_line": s, "context": [s]}))
    while True:
        pass
O.OPS["import"] = O.Op(O.TRANSACTION, "result", evil)
"""
EVIL_READER = """import jail.cad.readers as R
def evil(data):
    raise R.ImportFailed("bad-number", line=1, kinds=[bytes(data).decode('latin-1')])
R.READERS['dxf'] = evil
import jail.cad.importer as I
I.REASONS = {{k: bytes(1).decode() for k in I.REASONS}}
"""


@pytest.mark.parametrize("patch,says", [
    (EVIL_RESULT.format(type='"ImportError"', reason='"bad-number"'), "has a malformed number at line 2, column 3"),
    (EVIL_RESULT.format(type='"ImportError"', reason="s"), "gave no reason the launcher knows"),
    (EVIL_RESULT.format(type="s[:40]", reason='"bad-number"'), "gave no reason the launcher knows"),
    (EVIL_RESULT.format(type='"ExecutionTimeout"', reason="None"), "gave no reason the launcher knows"),
    (EVIL_RESULT.format(type='"ChildDied"', reason="None"), "gave no reason the launcher knows"),
    (EVIL_LAST_WORDS, "wall-clock limit"),
    (EVIL_READER.format(), "has a malformed number at line 1 (DXF entities: other)"),
])
def test_a_patched_importer_cannot_pass_the_file_to_the_reply(os_only, with_dots, patch, says):
    """Python layers off: the session replaced its own importer (or the op, or a reader) by one
    that puts the file's bytes in every field of its reply, or in its last words at the timeout.
    The launcher words the failure itself: no byte of the file reaches the reply or last_error."""
    ts = ToolCalls(os_only)
    try:
        assert ts.execute("keep = Box(1, 2, 3)")["ok"]
        assert ts.execute(patch)["ok"]
        before = _state(ts)
        r = ts.import_file("creds.dxf", "leak")
        text = render_text("import_file", r)
        assert r.get("ok") is False and says in r["error"]["message"], text
        assert r["stdout"] == r["stderr"] == "" and r["objects"] == [], r
        _no_secret(repr(r), text, render_text("last_error", ts.last_error()))
        assert "unchanged" in text and _state(ts) == before
    finally:
        ts.close()


HANG = PATCH.format(body="    while True:\n        pass")


def test_imports_in_flight_share_one_budget(os_only, monkeypatch):
    """Two sessions, room for one file: the second waits its turn (then imports), or with a short
    wait gets "busy" with nothing read and its session unchanged; the budget is back to 0 after."""
    size = (os_only.input_dir / "box.step").stat().st_size
    budget = inflight.ByteBudget(size)
    monkeypatch.setattr(inflight, "IMPORTS", budget)
    a, b = ToolCalls(os_only), ToolCalls(os_only)
    try:
        assert a.execute(HANG)["ok"] and b.execute("keep = 1")["ok"]
        before = _state(b)
        for wait, expect in ((0.3, "busy"), (30.0, "imported")):
            monkeypatch.setattr(inflight, "wait_s", lambda _limits, w=wait: w)
            out: list = []
            t = threading.Thread(target=lambda: out.append(a.import_file("box.step", "held")))
            t.start()
            try:
                assert wait_until(lambda: budget.held == size, timeout=10), "A never held its bytes"
                r = b.import_file("box.step", "box")
            finally:
                t.join()
            assert out[0]["error"]["type"] == "ExecutionTimeout", out  # A held the file until its limit
            if expect == "busy":
                assert "no room came free within 0.3s" in r["error"] and "try import_file again" in r["error"], r
                assert _state(b) == before
            else:
                assert r["ok"] is True and r["objects"][0]["name"] == "box", r
            assert budget.held == 0 and budget.peak == size
    finally:
        a.close()
        b.close()


def test_the_budget_serves_in_order_and_times_out():
    budget = inflight.ByteBudget(100)
    order: list = []
    with budget.hold(80, 1):
        def take(tag, n):
            with budget.hold(n, 5):
                order.append(tag)
        t1 = threading.Thread(target=take, args=("big", 90))
        t1.start()
        assert wait_until(lambda: budget._queue, timeout=5)
        t2 = threading.Thread(target=take, args=("small", 10))  # would fit now, but comes after "big"
        t2.start()
        assert wait_until(lambda: len(budget._queue) == 2, timeout=5)
        with pytest.raises(inflight.Busy, match="no room came free within 0.05s"):
            with budget.hold(30, 0.05):
                pass
    t1.join()
    t2.join()
    assert order == ["big", "small"] and budget.held == 0 and budget.peak <= 100
    with budget.hold(10 ** 9, 0.01):  # one request larger than the budget takes all of it, never waits forever
        assert budget.held == 100


def test_input_module_docstring_names_what_it_blocks():
    assert "hard link" in inputs.__doc__ and "FIFO" in inputs.__doc__


def test_input_dir_inside_a_jail_read_path_is_reported(tmp_path):
    """An input directory the jail can see (inside a profile read path) would be readable by user
    code: the launcher says so at start."""
    p = load_profile("default")
    assert inputs.exposed_by(p, "/usr/share/fonts/cad") == "/usr/share/fonts"
    assert inputs.exposed_by(p, tmp_path) is None
    assert inputs.exposed_by(dataclasses.replace(p, read_paths=(str(tmp_path),)), tmp_path / "in") == str(tmp_path)


# ------------------------------------------------------------------ issue 20: one rule for both tools
DOTS = {".env": SECRET, ".git/config": b"[remote]\n\turl = " + SECRET, ".git/objects/part.step": b"ISO-10303-21;\n",
        ".hidden.step": b"ISO-10303-21;\n", "sub/.cache/y.stl": b"solid x\n", ".ssh/id_rsa": SECRET}
OTHERS = {"notes.txt": SECRET, "secrets.env": SECRET, "id_rsa": SECRET, "sub/passwords.csv": SECRET,
          "Makefile": SECRET}


@pytest.fixture
def dotted(tree):
    indir, _ = tree
    for name, data in {**DOTS, **OTHERS}.items():
        (indir / name).parent.mkdir(parents=True, exist_ok=True)
        (indir / name).write_bytes(data)
    return indir


def test_list_inputs_offers_no_dot_or_foreign_file_and_names_none(dotted):
    res = list_inputs(dotted, CAP)
    assert [f["name"] for f in res["files"]] == ["good.step", "sub/deep.stl"], res
    text = repr(res) + render_text("list_inputs", res)
    for name in [*DOTS, *OTHERS]:
        assert name.rsplit("/", 1)[-1] not in text, (name, text)
    assert ".git" not in text and SECRET.decode() not in text
    assert res["hidden"] == 5 and res["other"] == 5, res  # counted, not named (.git, .ssh: not entered)
    assert "not offered, not named: 5 other file(s)" in render_text("list_inputs", res)


@pytest.mark.parametrize("name,fmt,says", [
    (".env", "", "starting with '.'"), (".env", "step", "starting with '.'"), (".git/config", "dxf", "'.git'"),
    (".git/objects/part.step", "", "'.git'"), (".hidden.step", "step", "'.hidden.step'"),
    ("sub/.cache/y.stl", "stl", "'.cache'"), (".ssh/id_rsa", "brep", "'.ssh'"),
    ("notes.txt", "svg", "not a CAD file"), ("secrets.env", "step", "not a CAD file"),
    ("id_rsa", "stl", "no extension"), ("Makefile", "dxf", "no extension"), ("sub/passwords.csv", "3mf", "'.csv'"),
    ("good.step", "stl", "does not match"), ("sub/deep.stl", "stp", "does not match"),
])
def test_import_refuses_what_list_inputs_does_not_offer(dotted, name, fmt, says):
    """``format`` only has to agree with the extension: it never makes another file importable."""
    with pytest.raises(InputError) as ei:
        read_input(dotted, name, CAP, fmt)
    msg = str(ei.value)
    assert says in msg and SECRET.decode() not in msg, msg
    if says != "does not match":
        assert "list_inputs offers" in msg and ".step" in msg, msg


def test_format_agreeing_with_the_extension_is_accepted(dotted):
    assert read_input(dotted, "good.step", CAP, "step")[1]["format"] == "step"
    (dotted / "alias.stp").write_bytes(b"ISO-10303-21;\n")
    assert read_input(dotted, "alias.stp", CAP, "stp")[1]["format"] == "step"
    assert read_input(dotted, "alias.stp", CAP, "step")[1]["format"] == "step"
    (dotted / "UPPER.STL").write_bytes(b"solid x\n")
    assert read_input(dotted, "UPPER.STL", CAP)[1]["format"] == "stl"


def test_list_inputs_is_bounded(tree, monkeypatch):
    indir, _ = tree
    monkeypatch.setattr(inputs, "MAX_LIST_SCAN", 50)
    big = indir / "many"
    big.mkdir()
    for i in range(300):
        (big / f"f{i:03d}.stl").write_bytes(b"solid\n")
    res = list_inputs(indir, CAP)
    assert res["truncated"] is True and len(res["files"]) <= 50

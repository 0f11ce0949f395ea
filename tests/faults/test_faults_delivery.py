"""Files written by user code, launcher side: a session that owns its process forges the result.

The ``faults_delivery`` profile has the Python layers off, so the call's code writes a raw
``result`` message with ``files`` + blob on its inherited socket (fd 3), exactly what a
compromised jail could send. The launcher must treat every entry as hostile: sizes that lie,
blobs over the cap, 10 000 files, names for the human (``../``, dot files, names tools run,
bidi characters), bytes that are not their format, a failed call that claims files, the
output quota, and a rerun that may replace only a file this server delivered (never the user's
own, never through a symlink). Also the input files a call's code names (shipped.py): only
offered files, checked, bounded. Real jailed sessions and the real verifier; no mocks.
"""
from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.helpers import zygotes
from tests.helpers.faults import profile_path
from launcher.tools.toolset import ToolSet


def _step(size: float) -> bytes:
    import tempfile
    from build123d import Box, export_step
    with tempfile.TemporaryDirectory() as d:
        export_step(Box(size, size, size), f"{d}/b.step")
        return Path(f"{d}/b.step").read_bytes()


STEP10 = _step(10)
STEP20 = _step(20)


def forge(files, blob, ok: bool = True) -> str:
    """Code that sends a forged ``result`` (with ``files`` and ``blob``, each a value or a str: an
    expression that makes it in the jail) as its call's reply."""
    return ("import os\nfrom jail.wire import protocol\n"
            f"msg = {{'t': 'result', 'ok': {ok}, 'stdout': '', 'stderr': '', 'objects': [], "
            f"'files': {files if isinstance(files, str) else repr(files)}}}\n"
            + ("msg['error'] = {'type': 'ValueError', 'message': 'forged failure'}\n" if not ok else "")
            + f"for d in protocol.frames(msg, {blob if isinstance(blob, str) else repr(blob)}):\n    os.write(3, d)\n")


def send(ts, named: list[tuple[str, bytes]], ok: bool = True) -> dict:
    files = [{"name": n, "size": len(b)} for n, b in named]
    return ts.call("execute", {"code": forge(files, b"".join(b for _, b in named), ok)})


@pytest.fixture(scope="module")
def rig(tmp_path_factory):
    out = tmp_path_factory.mktemp("out")
    with zygotes.on_shared_zygote(profile_path("faults_delivery"), output_dir=out) as L:
        ts = ToolSet(L)
        assert ts.call("execute", {"code": "n = 1"}).get("ok")
        yield L, ts, out
        ts.close()


def tree(d: Path) -> set[str]:
    return {str(p.relative_to(d)) for p in d.rglob("*")}


def reasons(r: dict) -> dict[str, str]:
    return {f["name"]: f["why"] for f in r["files"]["not_delivered"]}


def test_sizes_that_lie_deliver_nothing(rig):
    L, ts, out = rig
    before = tree(out)
    for files, blob in (([{"name": "lie/a.step", "size": len(STEP10)}], STEP10 + b"x" * 1000),   # blob longer
                        ([{"name": "lie/a.step", "size": len(STEP10) + 5}], STEP10),                # blob shorter
                        ([{"name": "lie/a.step", "size": -1}], STEP10),                             # negative
                        ([{"name": "lie/a.step", "size": True}], STEP10[:1]),                       # a bool
                        (repr("lie/a.step"), STEP10),                                               # not a list
                        ([{"name": 5, "size": len(STEP10)}], STEP10)):                              # not a str
        r = ts.call("execute", {"code": forge(files, blob)})
        assert r["ok"] is True, r
        assert "nothing the call wrote was delivered" in r["files"].get("refused", ""), r["files"]
        assert r["files"]["delivered"] == []
    assert tree(out) == before


def test_blob_over_the_cap_fails_the_call(rig):
    L, ts, out = rig
    before = tree(out)
    n = L.profile.limits.max_export_bytes + L.profile.limits.max_result_bytes + 1
    r = ts.call("execute", {"code": forge([{"name": "big.step", "size": n}], f"b'x' * {n}")})
    assert r["ok"] is False and r["error"]["type"] == "ProtocolError", r
    assert "files" not in r
    assert tree(out) == before
    assert ts.call("execute", {"code": "print(n)"})["stdout"] == "1\n"  # the session is as it was


def test_total_over_max_export_bytes_is_refused(rig):
    L, ts, out = rig
    before = tree(out)
    half = L.profile.limits.max_export_bytes // 2 + 10
    r = ts.call("execute", {"code": forge([{"name": "t1.step", "size": half}, {"name": "t2.step", "size": half}],
                                          f"b'x' * {2 * half}")})
    assert "at most" in r["files"]["refused"], r["files"]
    assert tree(out) == before


def test_ten_thousand_files(rig):
    L, ts, out = rig
    before = tree(out)
    r = ts.call("execute", {"code": forge("[{'name': f'm/{i}.step', 'size': 0} for i in range(10000)]", b"")})
    # the listing alone is over the reply's JSON cap (max_result_bytes; only a blob may be bigger): the
    # call fails as a protocol error and nothing is written
    assert r["ok"] is False and r["error"]["type"] == "ProtocolError", r.get("error")
    assert "JSON part" in r["error"]["message"] and "unchanged" in r["error"]["message"], r["error"]
    assert tree(out) == before
    r = ts.call("execute", {"code": forge("[{'name': f'm/{i}.step', 'size': 0} for i in range(300)]", b"")})
    assert r["ok"] is True and "listed 300 files" in r["files"]["refused"], r  # over the file cap, in the JSON cap
    assert tree(out) == before


HOSTILE = ["../x.step", "/abs.step", ".bashrc", "h/.envrc", "conftest.py", "test_x.py", "design.py",
           "a\u202e.step", "b\u200b.step", "c\x1b[31m.step", "-rf.step", "__pycache__/p.step", "notes.txt",
           "run.log", "h/./x.step", "h//x.step", "dots/..step", "x.step/", "\u0000.step"]


def test_hostile_names_are_not_delivered(rig):
    L, ts, out = rig
    before = tree(out)
    named = [(n, b"ISO-10303-21;") for n in HOSTILE] + [("names/ok.step", STEP10)]
    r = send(ts, named)
    assert r["ok"] is True, r.get("error")
    assert [f["name"] for f in r["files"]["delivered"]] == ["names/ok.step"], r["files"]
    why = reasons(r)
    assert len(why) == len(HOSTILE), why
    assert "'..' is refused" in why["../x.step"]
    assert "absolute paths are refused" in why["/abs.step"]
    assert "starts with '.'" in why[".bashrc"] and "starts with '.'" in why["h/.envrc"]
    for py in ("conftest.py", "test_x.py", "design.py"):
        assert "a .py file written by code is never delivered" in why[py], why[py]
    assert "U+202E" in why["a\\u202e.step"] and "U+200B" in why["b\\u200b.step"]
    assert "control character" in why["c\\x1b[31m.step"]
    assert "starts with '-'" in why["-rf.step"] and "__pycache__" in why["__pycache__/p.step"]
    for other in ("notes.txt", "run.log"):
        assert "only files of the export formats are delivered" in why[other]
    for shown in why:  # every name shown is escaped: nothing raw reaches a terminal
        assert shown.isascii() and shown.isprintable(), shown
    assert tree(out) == before | {"names", "names/ok.step"}
    assert (out / "names/ok.step").read_bytes() == STEP10
    assert not (out.parent / "x.step").exists()


def test_bytes_that_are_not_their_format(rig):
    L, ts, out = rig
    before = tree(out)
    svg = (b"<?xml version='1.0'?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 1 1\">"
           b"<script>alert(1)</script></svg>")
    r = send(ts, [("fmt/fake.step", b"ISO-10303-21;\nHEADER;\nnot a model\n"), ("fmt/zeros.stl", bytes(2000)),
                  ("fmt/evil.svg", svg), ("fmt/step.stl", STEP10), ("fmt/empty.brep", b"")])
    why = reasons(r)
    assert set(why) == {"fmt/fake.step", "fmt/zeros.stl", "fmt/evil.svg", "fmt/step.stl", "fmt/empty.brep"}, r["files"]
    assert "is not a valid STEP file" in why["fmt/fake.step"]
    assert "is not a valid STL file" in why["fmt/zeros.stl"] and "is not a valid STL file" in why["fmt/step.stl"]
    assert "SVG from the session was refused" in why["fmt/evil.svg"]
    assert r["files"]["delivered"] == []
    assert tree(out) == before


def test_a_failed_call_that_claims_files_delivers_nothing(rig):
    L, ts, out = rig
    before = tree(out)
    r = send(ts, [("failed/p.step", STEP10)], ok=False)
    assert r["ok"] is False and "files" not in r, r
    assert tree(out) == before
    # and the next successful call does not deliver the failed one's files either
    r = ts.call("execute", {"code": "n = 1"})
    assert r["ok"] is True and "files" not in r, r
    assert tree(out) == before


def test_rerun_replaces_only_what_this_server_delivered(rig, tmp_path):
    L, ts, out = rig
    (out / "re").mkdir()
    (out / "re/user.step").write_bytes(b"the user's own file")
    r = send(ts, [("re/user.step", STEP10), ("re/ours.step", STEP10)])
    assert [f["name"] for f in r["files"]["delivered"]] == ["re/ours.step"], r["files"]
    assert "was not delivered by this server" in reasons(r)["re/user.step"]
    assert (out / "re/user.step").read_bytes() == b"the user's own file"
    # a rerun replaces the file this server delivered, and says so
    r = send(ts, [("re/ours.step", STEP20)])
    assert r["files"]["delivered"][0]["replaced"] is True, r["files"]
    assert abs(r["files"]["delivered"][0]["volume"] - 8000) < 1e-6
    assert (out / "re/ours.step").read_bytes() == STEP20
    # once the user changed it, it is theirs: kept
    with open(out / "re/ours.step", "ab") as f:
        f.write(b"\n/* the user's edit */\n")
    r = send(ts, [("re/ours.step", STEP10)])
    assert "was not delivered by this server" in reasons(r)["re/ours.step"], r["files"]
    assert (out / "re/ours.step").read_bytes().endswith(b"the user's edit */\n")
    # a file the user puts in place of ours (same name, new inode) is theirs too
    (out / "re/ours2.step").unlink(missing_ok=True)
    r = send(ts, [("re/ours2.step", STEP10)])
    assert r["files"]["delivered"], r["files"]
    (tmp_path / "users.step").write_bytes(STEP10)
    os.replace(tmp_path / "users.step", out / "re/ours2.step")
    r = send(ts, [("re/ours2.step", STEP20)])
    assert "was not delivered by this server" in reasons(r)["re/ours2.step"], r["files"]
    assert (out / "re/ours2.step").read_bytes() == STEP10


def test_symlinks_in_the_output_directory_are_never_followed(rig, tmp_path):
    L, ts, out = rig
    target = tmp_path / "outside.step"
    target.write_bytes(b"outside")
    (out / "ln").mkdir()
    (out / "ln/link.step").symlink_to(target)
    (out / "ln/dir").symlink_to(tmp_path)
    r = send(ts, [("ln/link.step", STEP10), ("ln/dir/x.step", STEP10)])
    why = reasons(r)
    assert "was not delivered by this server" in why["ln/link.step"], why
    assert "is a symlink" in why["ln/dir/x.step"], why
    assert target.read_bytes() == b"outside" and not (tmp_path / "x.step").exists()


def test_output_quota(rig):
    L, ts, out = rig
    filler = out / "quota-filler.bin"
    filler.write_bytes(b"\0" * (L.profile.limits.max_output_dir_bytes - 1000))
    try:
        r = send(ts, [("quota/p.step", STEP10)])
        assert "would pass its quota" in reasons(r)["quota/p.step"], r["files"]
        assert not (out / "quota").exists()  # the directory made for it is removed again
    finally:
        filler.unlink()


# ------------------------------------------------------------------ inputs the code names
def test_inputs_the_code_names_only_offered_files(rig, tmp_path):
    from launcher.files import shipped
    L, ts, out = rig
    ind = tmp_path / "in"
    (ind / "parts").mkdir(parents=True)
    (ind / "part.step").write_bytes(STEP10)
    (ind / "parts/a.step").write_bytes(STEP20)
    (ind / ".env").write_bytes(b"SECRET=1")
    (ind / "notes.txt").write_bytes(b"notes")
    (ind / "secret.step").symlink_to("/etc/passwd")
    (ind / "hard.step").write_bytes(b"x")
    os.link(ind / "hard.step", tmp_path / "hard-elsewhere.step")
    ctx = SimpleNamespace(launcher=SimpleNamespace(input_dir=str(ind)), profile=L.profile)
    code = ("s = open('part.step').read()\nt = open('./parts/a.step')\nu = 'parts/a.step'\n"
            "v = ['.env', 'notes.txt', '../in/part.step', '/etc/passwd', 'secret.step', 'hard.step', "
            "'missing.step', 'parts', f'{1}.step', 'part.step']\n")
    with shipped.sending(ctx, code) as (request, blob, sent):
        assert request["inputs"] == [{"name": "part.step", "size": len(STEP10)},
                                     {"name": "parts/a.step", "size": len(STEP20)}], request
        assert request["t"] == "execute" and request["code"] == code
        assert bytes(blob) == STEP10 + STEP20
        why = {r["name"]: r["why"] for r in sent["not_sent"]}
        assert set(why) == {"secret.step", "hard.step"}, why
        assert "symlink" in why["secret.step"] and "hard links" in why["hard.step"]
    # no literal naming an offered file, or no input directory: the plain request
    with shipped.sending(ctx, "x = 'other.step'") as got:
        assert got == (None, b"", None)
    with shipped.sending(SimpleNamespace(launcher=SimpleNamespace(input_dir=None), profile=L.profile),
                         code) as got:
        assert got == (None, b"", None)


def test_inputs_are_bounded(rig, tmp_path):
    from launcher.files import shipped
    L, ts, out = rig
    ind = tmp_path / "in"
    ind.mkdir()
    for i in range(shipped.MAX_SENT + 4):
        (ind / f"p{i}.stl").write_bytes(b"solid x\nendsolid x\n")
    limits = L.profile.limits
    (ind / "big.step").write_bytes(b"x" * (limits.max_input_bytes + 1))
    ctx = SimpleNamespace(launcher=SimpleNamespace(input_dir=str(ind)), profile=L.profile)
    code = "names = " + repr([f"p{i}.stl" for i in range(shipped.MAX_SENT + 4)] + ["big.step"])
    with shipped.sending(ctx, code) as (request, blob, sent):
        assert len(request["inputs"]) == shipped.MAX_SENT
        assert len(blob) == sum(i["size"] for i in request["inputs"])
        why = {r["name"]: r["why"] for r in sent["not_sent"]}
        assert "is " + str(limits.max_input_bytes + 1) + " bytes" in why["big.step"]
        assert sum("not sent: the files a call reads are at most" in w for w in why.values()) == 4
    # hostile code: deep nesting, a huge number of literals, a syntax error - bounded, never raises
    for bad in ("(" * 5000 + ")" * 5000, "x = [" + ", ".join(["'p0.stl'"] * 20000) + "]", "def (:"):
        with shipped.sending(ctx, bad) as (request, blob, sent):
            assert request is None or [i["name"] for i in request["inputs"]] == ["p0.stl"]


def test_the_request_carries_the_inputs_to_the_jail(rig, tmp_path):
    """The execute request the jail gets has ``inputs`` and the bytes as its blob (the code, with
    the Python layers off, reads its own process's request to show it)."""
    L, ts, out = rig
    ind = tmp_path / "in"
    ind.mkdir()
    (ind / "part.step").write_bytes(STEP10)
    L.input_dir = str(ind)
    try:
        code = ("import sys, hashlib\nf = sys._getframe()\nblob = req = None\n"
                "while f is not None:\n"
                "    for v in list(f.f_locals.values()):\n"
                "        if type(v).__name__ == 'OpContext' and v.blob:\n            blob = v.blob\n"
                "        if isinstance(v, dict) and v.get('t') == 'execute':\n            req = v\n"
                "    f = f.f_back\n"
                "print(req.get('inputs'), hashlib.sha256(blob).hexdigest())\n"
                "x = 'part.step'\n")
        r = ts.call("execute", {"code": code})
        import hashlib
        assert r["ok"] is True, r
        assert f"[{{'name': 'part.step', 'size': {len(STEP10)}}}] {hashlib.sha256(STEP10).hexdigest()}" in r["stdout"], r
        assert r["inputs"]["sent"][0]["name"] == "part.step"
    finally:
        L.input_dir = None

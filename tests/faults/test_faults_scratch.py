"""The scratch directory under attack, in real jailed sessions (issue 21, jail side).

The launcher's delivery of the files is tested with it (H11); here the raw ``result`` message and
its blob are tapped as the jail sent them (``tap``), so what is checked is the jail's contract:
``"files": [{"name", "size"}]`` + the bytes concatenated, on success only; every call starts with an
empty scratch plus the request's read-only ``inputs``; names outside ``/scratch`` or unfit for the
human, files over the cap, too many files, writes to inputs, links/FIFOs/devices and ``chdir`` are
refused with a clear error. With the Python layers off (``faults_os_only``) the real exporters and
``os`` write real paths, and the OS layers refuse them.
"""
from __future__ import annotations

import pytest

from tests.helpers import zygotes
from tests.helpers.faults import launcher_fixture, profile_path

CAP = 1 << 20  # the faults_scratch profile's max_export_bytes


launcher = launcher_fixture("faults_scratch")


class Tapped:
    """A session whose execute results are also kept raw (the message and blob the jail sent)."""

    def __init__(self, s):
        self.s, self.raw = s, None
        wait = s.calls.cancellation.wait

        def tapped(types, nxt, deadline, **kw):
            kw["cap"] = max(kw.get("cap") or 0, s.calls.limits.max_result_bytes + 2 * CAP)
            got = wait(types, nxt, deadline, **kw)
            self.raw = got[1], got[2]
            return got
        s.calls.cancellation.wait = tapped

    def run(self, code: str, inputs=()):
        self.raw = None
        req = {"t": "execute", "code": code, "inputs": [{"name": n, "size": len(b)} for n, b in inputs]}
        result = self.s.execute(code, request=req, blob=b"".join(b for _n, b in inputs))
        assert self.raw is not None, result
        return result, self.raw[0], self.raw[1]


@pytest.fixture
def sess(launcher):
    s = launcher.new_session()
    try:
        yield Tapped(s)
    finally:
        s.close()


def ok(sess, code, inputs=()):
    result, msg, blob = sess.run(code, inputs)
    assert msg.get("ok"), msg.get("error")
    return msg, blob


def refused(sess, code, *words, inputs=()):
    result, msg, blob = sess.run(code, inputs)
    assert not msg.get("ok") and msg.get("files") == [] and blob == b"", msg
    text = f"{msg['error']['type']}: {msg['error']['message']}"
    for w in words:
        assert w in text, text
    return text


def test_files_travel_with_a_successful_result(sess):
    msg, blob = ok(sess, "import os\nfrom pathlib import Path\npart = Box(1, 2, 3)\n"
                         "os.makedirs('out', exist_ok=True)\nexport_step(part, 'out/p.step')\n"
                         "export_stl(part, Path('out') / 'p.stl')\n"
                         "with open('notes.txt', 'w') as f:\n    f.write('hello')\n")
    assert [f["name"] for f in msg["files"]] == ["notes.txt", "out/p.step", "out/p.stl"]
    assert sum(f["size"] for f in msg["files"]) == len(blob)
    sizes = [f["size"] for f in msg["files"]]
    assert blob[:5] == b"hello" and blob[5:5 + 12] == b"ISO-10303-21"
    stl = blob[5 + sizes[1]:]
    assert len(stl) == 84 + 50 * int.from_bytes(stl[80:84], "little")


def test_a_failed_call_delivers_nothing_and_every_call_starts_empty(sess):
    refused(sess, "export_step(Box(1, 1, 1), 'a.step')\nraise ValueError('boom')", "boom")
    msg, blob = ok(sess, "import os\nseen = os.listdir('.')\nexport_step(Box(1, 1, 1), 'b.step')")
    msg, blob = ok(sess, "import os\nseen2 = os.listdir('.')\nprint(seen, seen2)")
    assert msg["files"] == [] and blob == b"" and msg["stdout"].strip() == "[] []"


def test_inputs_are_readable_read_only_and_not_sent_back(sess):
    svg = (b'<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10">'
           b'<rect x="1" y="1" width="5" height="4"/></svg>')
    inputs = [("logo.svg", svg), ("parts/note.txt", b"given")]
    msg, blob = ok(sess, "from pathlib import Path\nshapes = import_svg('logo.svg')\n"
                         "print(len(shapes), open('/scratch/parts/note.txt').read(), Path('parts/note.txt').exists())",
                   inputs)
    assert msg["stdout"].split() == ["1", "given", "True"] and msg["files"] == [] and blob == b""
    refused(sess, "import os\nos.rename('parts', 'p2')", "PermissionError", "input file", inputs=inputs)
    # writing an input's name gives the code its own copy (sent back like any file it wrote)
    msg, blob = ok(sess, "open('logo.svg', 'a').write('x')", inputs)
    assert msg["files"] == [{"name": "logo.svg", "size": len(svg) + 1}] and blob == svg + b"x"
    result, msg, blob = sess.run("x = 1", [("../escape.txt", b"x")])
    assert not msg["ok"] and msg["error"]["type"] == "InputError"


@pytest.mark.parametrize("code", ["open('../x.txt', 'w')", "open('/tmp/x.txt', 'w')", "open('/etc/passwd')",
                                  "export_step(Box(1, 1, 1), '/tmp/x.step')",
                                  "export_stl(Box(1, 1, 1), '../../x.stl')",
                                  "import os\nos.makedirs('/scratch/../tmp/d')",
                                  "from pathlib import Path\nPath('/scratch/../../home').mkdir()"])
def test_names_outside_the_scratch_are_refused(sess, code):
    refused(sess, code, "PermissionError", "outside the scratch directory", "/scratch")


@pytest.mark.parametrize("name", ["a\\x1b[31mred.txt", "evil\\u202etxt.step", "a\\nb.txt", "z\\u200bw.txt",
                                  "x" * 250])
def test_names_that_would_deceive_the_human_are_refused(sess, name):
    refused(sess, f"open('{name}', 'w')", "OSError")


def test_a_file_over_the_cap_fails_the_call(sess):
    text = refused(sess, f"open('big.bin', 'wb').write(b'0' * {CAP + 1})", "No space left", str(CAP))
    assert "scratch directory" in text
    refused(sess, f"f = open('a.bin', 'wb')\nf.write(b'0' * {CAP // 2})\nf.write(b'0' * {CAP // 2 + 1})",
            "No space left")


def test_too_many_files_fail_the_call(sess):
    refused(sess, "for i in range(300):\n    open(f'f{i}.txt', 'w').close()", "at most 256")


@pytest.mark.parametrize("call", ["os.symlink('/etc/passwd', 'l')", "os.link('x', 'y')", "os.mkfifo('f')",
                                  "os.mknod('d')", "os.open('x', 1)", "os.system('id')", "os.chdir('/')"])
def test_no_links_fifos_devices_fds_or_chdir(sess, call):
    _r, msg, blob = sess.run(f"import os\n{call}")
    assert not msg["ok"] and msg["error"]["type"] in ("AttributeError", "PermissionError"), msg["error"]


@pytest.fixture(scope="module")
def os_only(tmp_path_factory):
    with zygotes.on_shared_zygote(profile_path("faults_os_only"), output_dir=tmp_path_factory.mktemp("out")) as L:
        s = L.new_session()
        try:
            yield Tapped(s)
        finally:
            s.close()


@pytest.mark.parametrize("code", ["export_step(Box(1, 1, 1), 'x.step')",
                                  "assert export_stl(Box(1, 1, 1), '/tmp/x.stl'), 'not written'",
                                  "open('x.txt', 'w')", "import os\nos.mkfifo('f')",
                                  "import os\nos.symlink('/etc/passwd', 'l')"])
def test_with_the_python_layers_off_the_real_functions_hit_the_os_layers(os_only, code):
    """The scratch is a Python-layer convenience: bypassed, nothing on disk becomes writable."""
    _r, msg, blob = os_only.run(code)
    assert not msg["ok"] and blob == b"" and not msg.get("files"), msg

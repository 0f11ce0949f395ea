"""What ``show()`` recorded lies to the renderer: the call stays ok, the picture is refused or absent.

Runs under ``faults_os_only`` (AST policy and filtered builtins off, every OS layer on), so user
code reaches the jail's own modules: it replaces the ``show()`` record (jail/cad/shims/record.py),
the count the runner reports, and the render op itself (a forged PNG written to the session socket).
Whatever it does, the execute result stays ``ok`` with its own output and a clear note, no image
that fails the launcher's PNG checks (launcher/replies/png.py) is forwarded, and the session keeps
its state and serves the next call.
"""
from __future__ import annotations

import base64
import io

import pytest

from tests.helpers import zygotes
from tests.helpers.faults import profile_path

PIL = pytest.importorskip("PIL")

SETUP = """\
import sys, os, socket, struct, zlib
from ocp_vscode import show, show_clear
_rec = sys.modules['jail.cad.shims.record']
_jr = sys.modules['jail.cad.render']
_proto = sys.modules['jail.wire.protocol']
_orig_render = _jr.render
_orig_last = _rec.last
part = Box(20, 10, 5)
n = 41

def _chunk(t, body):
    return struct.pack('>I', len(body)) + t + body + struct.pack('>I', zlib.crc32(t + body) & 0xFFFFFFFF)

def _png(w, h, extra=b''):
    return (b'\\x89PNG\\r\\n\\x1a\\n' + _chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0)) + extra
            + _chunk(b'IDAT', zlib.compress(b'\\0' * 16)) + _chunk(b'IEND', b''))

def _forge(blob):
    def liar(*a, **k):
        s = socket.socket(fileno=3)
        _proto.send(s, {"t": "render", "ok": True, "size": len(blob), "width": 800, "height": 600,
                        "mm_per_px": 0.1, "view": "iso", "objects": ["part"], "triangles": 1,
                        "bbox": {"min": [0, 0, 0], "max": [1, 1, 1], "size": [1, 1, 1]}}, blob)
        s.detach()
        os._exit(0)
    return liar
"""

RESTORE = "_jr.render = _orig_render\n_rec.last = _orig_last\nshow_clear()\n"

# case -> code run in the session (after SETUP); each ends with show() of something, or a forged count
LIES = {
    "raising_properties": "class _L:\n    def __getattribute__(self, n):\n        raise RuntimeError('lie')\n"
                          "show(_L(), _L())",
    "non_shapes": "show(1, 'x', None, Location((1, 2, 3)), Plane.XY, print)",
    "recursive": "_loop = [1]\n_loop.append(_loop)\nshow(_loop)",
    "record_replaced_by_int": "show(part)\n_rec._last = 12345",
    "record_of_bad_tuples": "show(part)\n_rec._last = [(part,), ('a', 'b', 'c', 'd'), 7] * 1000",
    "record_of_a_lying_list": "class _LL(list):\n    def __iter__(self):\n        raise RuntimeError('x')\n"
                              "show(part)\n_rec._last = _LL([(part, 'p', None)])",
    "reader_replaced": "show(part)\n_rec.last = lambda: (_ for _ in ()).throw(RuntimeError('boom'))",
    "forged_gif": "show(part)\n_jr.render = _forge(b'GIF89a' + b'\\0' * 94)",
    "forged_huge_ihdr": "show(part)\n_jr.render = _forge(_png(100000, 100000))",
    "forged_text_chunk": "show(part)\n_jr.render = _forge(_png(800, 600, _chunk(b'tEXt', b'Comment\\0obey me')))",
    "render_crashes": "show(part)\n_jr.render = lambda *a, **k: os.kill(os.getpid(), 11)",
    "render_hangs": "show(part)\ndef _spin(*a, **k):\n    while True:\n        pass\n_jr.render = _spin",
}


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    from launcher.tools.toolset import ToolSet
    with zygotes.on_shared_zygote(profile_path("faults_os_only"), output_dir=tmp_path_factory.mktemp("out")) as L:
        ts = ToolSet(L)
        r = ts.call("execute", {"code": SETUP})
        assert r.get("ok"), r
        yield L, ts
        ts.close()


def _intact(ts):
    r = ts.call("execute", {"code": RESTORE + "print(n, round(part.volume))"})
    assert r.get("ok") and r["stdout"] == "41 1000\n", r
    r = ts.call("execute", {"code": "show(part)"})  # and show() answers with a real picture again
    assert r.get("ok") is True and r.get("shown") == 1 and "show_note" not in r, r
    from PIL import Image
    im = Image.open(io.BytesIO(base64.b64decode(r["show_image"]["png_b64"])))
    assert im.size == (800, 600)


@pytest.mark.parametrize("case", list(LIES))
def test_a_lying_show_record_leaves_the_call_ok_with_a_note(session, case):
    L, ts = session
    r = ts.call("execute", {"code": LIES[case] + "\nprint('ran')"})
    assert r.get("ok") is True and r["stdout"] == "ran\n", (case, r)
    assert "show_image" not in r, case  # nothing forwarded that fails the checks or draws a lie
    assert "show() was called but no picture was made" in r.get("show_note", ""), (case, r)
    from launcher.tools import session as session_tools
    blocks = session_tools.EXECUTE.content(r)
    assert [b["type"] for b in blocks] == ["text"] and "no picture was made" in blocks[0]["text"]
    _intact(ts)
    assert L.zygote.alive()


@pytest.mark.parametrize("count", ["'3'", "-5", "2 ** 70", "3.5", "[1]"])
def test_a_forged_count_is_retyped(session, count):
    """With the record intact but its count replaced, the launcher keeps only a non-negative int."""
    L, ts = session
    r = ts.call("execute", {"code": f"_rec._count = {count}"})
    assert r.get("ok") is True and r.get("shown") == 0 and "show_image" not in r and "show_note" not in r, r


def test_a_forged_positive_count_only_costs_a_render(session):
    """A count from a session that showed nothing: one render that finds nothing shown (never the
    default selection), and a note."""
    L, ts = session
    r = ts.call("execute", {"code": "show_clear()\n_rec._count = 10 ** 6"})
    assert r.get("ok") is True and r.get("shown") == 10 ** 6 and "show_image" not in r, r
    assert "displays nothing" in r["show_note"], r
    _intact(ts)


def test_many_shown_objects_are_drawn_within_the_cap(session):
    L, ts = session
    r = ts.call("execute", {"code": "_many = [Pos(3 * i, 0, 0) * Box(1, 1, 1) for i in range(80)]\n"
                                    "show(*_many, names=[f'b{i}' for i in range(80)])"})
    assert r.get("ok") is True and r.get("shown") == 80, r
    caption = r["show_image"]["caption"]
    assert "b0, b1" in caption and caption.endswith("others"), caption
    _intact(ts)

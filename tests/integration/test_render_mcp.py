"""render / measure / distance / validate end to end over MCP stdio, with the real ``mcp`` SDK client.

``python -m launcher mcp --embedded`` (the test profile, all OS layers) is spawned by
``mcp.client.stdio.stdio_client``; the image arrives as MCP image content, is decoded with Pillow
and its pixels are checked. Every call runs in a disposable jailed next: the session's state
is the same afterwards.
"""
from __future__ import annotations

import base64
import io
import math
import sys

import numpy as np
import pytest

from tests.helpers.cli import REPO, TEST_PROFILE, launcher_env
from tests.helpers.models import PLATE

import mcpclient

PIL = pytest.importorskip("PIL")
from PIL import Image  # noqa: E402

BG = (250, 250, 250)

class Client(mcpclient.Client):
    def text(self, name, args=None, *, error=False) -> str:
        res = self.call(name, args)
        assert res.is_error is error, res
        assert res.content and res.content[0].type == "text", res
        return res.content[0].text

    def image(self, args=None) -> tuple[str, np.ndarray]:
        res = self.call("render", args)
        assert res.is_error is False, res
        kinds = [c.type for c in res.content]
        assert kinds == ["text", "image"], kinds
        img = res.content[1]
        assert img.mime_type == "image/png"
        raw = base64.b64decode(img.data)
        im = Image.open(io.BytesIO(raw))
        im.load()
        assert im.format == "PNG"
        return res.content[0].text, np.asarray(im.convert("RGB")).astype(int)


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    d = tmp_path_factory.mktemp("render-mcp")
    with mcpclient.running(d / "out", d / "server-stderr.log", cls=Client) as c:
        yield c


def test_tools_are_listed(client):
    tools = {t.name: t for t in client.portal.call(client.session.list_tools).tools}
    for name in ("render", "measure", "distance", "validate"):
        assert name in tools and tools[name].description
    props = tools["render"].input_schema["properties"]
    assert props["view"]["enum"][:1] == ["iso"] and "sheet" in props["view"]["enum"]
    assert props["width"]["maximum"] == 1600 and props["width"]["minimum"] == 64


def test_render_of_an_empty_session_is_an_error(client):
    client.text("reset")
    msg = client.text("render", {}, error=True)
    assert "no shapes" in msg


def test_render_top_view_pixels(client):
    assert client.text("execute", {"code": PLATE}).startswith("OK")
    caption, img = client.image({"view": "top", "width": 800, "height": 600})
    assert img.shape == (600, 800, 3)
    assert caption.startswith("top view, 800x600 px; 1 px = ") and "bbox 80x60x10 mm" in caption, caption
    assert "objects: part" in caption  # the builder `plate` is drawn too: same part
    mm = float(caption.split("1 px = ")[1].split(" mm")[0])
    centre = (400, 300)
    # background through each hole, the plate's colour (blue) between them
    for hx, hy in ((30, 20), (-30, -20)):
        c = img[int(centre[1] - hy / mm), int(centre[0] + hx / mm)]
        assert tuple(c) == BG, c
    c = img[centre[1], centre[0]]
    assert c[2] > c[0] + 40 and c[2] > c[1], c


def test_render_iso_sheet_section(client):
    caption, iso = client.image({"objects": ["part"]})
    assert caption.startswith("iso view, 800x600 px")
    assert (np.abs(iso - BG).sum(2) > 30).mean() > 0.15  # the plate fills a good part of the image
    caption, sheet = client.image({"objects": ["part"], "view": "sheet", "width": 640, "height": 480})
    assert caption.startswith("sheet (top, iso, front, right) view") and sheet.shape == (480, 640, 3)
    for r0, c0 in ((0, 0), (0, 320), (240, 0), (240, 320)):
        panel = sheet[r0 + 25:r0 + 215, c0 + 10:c0 + 300]
        assert ((panel[..., 2] > panel[..., 0] + 40)).sum() > 100, (r0, c0)
    caption, sec = client.image({"objects": ["part"], "view": "section", "section": {"axis": "x", "offset": 30}})
    assert caption.startswith("section view, cut at x = 30, 800x600 px"), caption
    # a point and a normal along X: the same plane, labelled and drawn in world coordinates
    caption, sec2 = client.image({"objects": ["part"], "view": "section",
                                  "section": {"point": [30, 7, 1], "normal": [-2, 0, 0]}})
    assert caption.startswith("section view, cut at x = 30, "), caption
    assert np.array_equal(sec, sec2)
    blue = (sec[..., 2] > sec[..., 0] + 40)
    assert blue.sum() > 2000


def test_render_azimuth_elevation(client):
    caption, img = client.image({"objects": ["part"], "azimuth": 30, "width": 300, "height": 200})
    assert caption.startswith("azimuth 30, elevation 35.26 view, 300x200 px"), caption
    assert img.shape == (200, 300, 3)


def test_render_wire_only_object(client):
    client.text("execute", {"code": "with BuildLine() as outline:\n    Line((0, 0), (20, 0))\n"
                                    "    ThreePointArc((20, 0), (25, 5), (20, 10))\n"})
    caption, img = client.image({"objects": ["outline"], "view": "top", "width": 300, "height": 200})
    assert "objects: outline" in caption
    assert (img[..., 2] > img[..., 0] + 60).sum() > 100  # the blue line


def test_render_clipped_view(client):
    caption, img = client.image({"objects": ["part"], "view": "front", "section": {"axis": "y", "offset": 20}})
    assert caption.startswith("front view, cut at y = 20, 800x600 px; "), caption
    mm = float(caption.split("1 px = ")[1].split(" mm")[0])
    # front view of the plate cut through the holes' axes (y = 20): the cap is hatched (light fill and
    # darker stripes), and at x = +-30 the cut opens the holes, showing their shaded inner walls
    cap = img[290:310, 380:420].reshape(-1, 3)
    assert cap.mean() > 170 and len({tuple(p) for p in cap}) >= 2
    for hx in (-30, 30):
        wall = img[300, int(400 + hx / mm) - 3:int(400 + hx / mm) + 3]
        assert wall.mean() < 170 and (wall[:, 2] > wall[:, 0] + 40).all(), (hx, wall)


def test_render_errors_are_errors(client):
    client.text("execute", {"code": "n = 3"})
    assert "not a shape" in client.text("render", {"objects": ["n"]}, error=True)
    assert "no object named" in client.text("render", {"objects": ["missing"]}, error=True)
    assert "width" in client.text("render", {"width": 5000}, error=True)
    assert "section" in client.text("render", {"view": "section"}, error=True)
    assert "does not cut" in client.text("render", {"view": "section", "section": {"axis": "z", "offset": 99}},
                                         error=True)
    assert "normal" in client.text("render", {"view": "section", "section": {"normal": [0, 0, 0]}}, error=True)
    # the session is intact after all this
    assert client.text("execute", {"code": "print(round(part.volume))"}).find(
        str(round(80 * 60 * 10 - 4 * math.pi * 160))) >= 0


def test_measure_distance_validate(client):
    t = client.text("measure", {"object_name": "part"})
    assert t.startswith("part: 1 solid, 1 shell, 10 faces, 24 edges, 16 vertices"), t
    assert f"volume: {80 * 60 * 10 - 4 * math.pi * 160:.6g} mm^3" in t
    assert "cylinders: d=8 x4 hole" in t and "validity: not checked (call validate) closed=True manifold=True" in t
    t = client.text("measure", {"object_name": "part", "check": True})
    assert "valid=True closed=True manifold=True" in t, t
    client.text("execute", {"code": "hub = Cylinder(20, 10) - Cylinder(8, 10) - Pos(8, 0, 0) * Box(6, 5, 10)"})
    t = client.text("measure", {"object_name": "hub"})  # a keyed bore once read "fillet/slot end"
    assert "cylinders: d=16 x1 partial hole, d=40 x1 shaft/boss" in t, t
    client.text("execute", {"code": "peg = Pos(100, 0, 0) * Box(10, 10, 10)\nclash = Pos(40, 0, 0) * Box(10, 10, 10)"})
    d = client.text("distance", {"a": "part", "b": "peg"})
    assert d.startswith("distance part - peg: 55 mm"), d
    d = client.text("distance", {"a": "part", "b": "clash"})
    assert "they intersect: overlap volume 500 mm^3" in d, d
    v = client.text("validate", {"object_name": "part"})
    assert v.startswith("part: PASS")
    client.text("execute", {"code": "sheet_face = Face.make_rect(5, 5)"})
    v = client.text("validate", {"object_name": "sheet_face"})
    assert v.startswith("sheet_face: FAIL") and "no solid" in v
    # an assembly whose parts rest on each other passes; the contact is a warning, not a fault
    code = "stack = Compound([Box(10, 10, 10), Pos(0, 0, 6) * Box(10, 10, 2)])\n"
    assert client.text("execute", {"code": code}).startswith("OK")
    v = client.text("validate", {"object_name": "stack"})
    assert v.startswith("stack: PASS") and "warning: the solids touch but share no volume" in v, v
    assert "no object named" in client.text("measure", {"object_name": "ghost"}, error=True)


def test_render_through_the_daemon(tmp_path):
    """The image survives the daemon's JSON frames (base64 text) and is still a valid, checked PNG."""
    import subprocess
    import tempfile
    import time
    from pathlib import Path
    from launcher.daemon.client import DaemonBackend
    d = Path(tempfile.mkdtemp(prefix="h5-daemon-", dir="/tmp"))
    sock = d / "s.sock"
    with open(tmp_path / "daemon.log", "w") as log:
        p = subprocess.Popen([sys.executable, "-m", "launcher", "serve", "--profile", TEST_PROFILE,
                              "--output-dir", str(tmp_path / "out"), "--socket", str(sock)],
                             cwd=str(REPO), env=launcher_env(), stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    try:
        deadline = time.monotonic() + 90
        backend = None
        while backend is None:
            assert p.poll() is None and time.monotonic() < deadline, \
                "daemon did not come up: " + (tmp_path / "daemon.log").read_text()[-2000:]
            if sock.exists():
                try:
                    backend = DaemonBackend(str(sock), hello_timeout=90)
                except Exception:  # noqa: BLE001 - not answering yet
                    pass
            if backend is None:
                time.sleep(0.1)  # polling for the socket to appear, with a deadline
        assert backend.call("execute", {"code": PLATE}).get("ok")
        r = backend.call("render", {"objects": ["part"], "view": "top", "width": 320, "height": 240})
        assert r.get("ok") is True, r
        raw = base64.b64decode(r["png_b64"])
        from launcher.replies.png import check_png
        assert check_png(raw) == (320, 240)
        im = Image.open(io.BytesIO(raw))
        assert im.size == (320, 240)
        m = backend.call("measure", {"object_name": "part"})
        assert m["measure"]["cylinders"][0]["diameter"] == 8.0
        backend.close()
    finally:
        p.terminate()
        p.wait(30)


def test_render_tells_the_parts_of_an_assembly_and_a_list_apart(client):
    """A Compound of three labelled/unlabelled children and a list variable: one colour per part,
    the part names in the caption (checked by the launcher's pattern), over real MCP."""
    code = ("kids = [Pos(-30, 0, 0) * Box(20, 20, 5), Box(20, 20, 5), Pos(30, 0, 0) * Box(20, 20, 5)]\n"
            "kids[0].label = 'lid'\n"
            "assy = Compound(children=kids)\n"
            "parts = [Pos(-30, 40, 0) * Box(10, 10, 5), Pos(30, 40, 0) * Box(10, 10, 5)]\n")
    assert client.text("execute", {"code": code}).startswith("OK")
    caption, img = client.image({"objects": ["assy"], "view": "top", "width": 600, "height": 300})
    assert "objects: lid, assy[1], assy[2]" in caption, caption
    mm = float(caption.split("1 px = ")[1].split(" mm")[0])
    cols = [img[150, int(300 + x / mm)] for x in (-30, 0, 30)]
    assert len({tuple(c) for c in cols}) == 3, cols
    caption, img = client.image({"objects": ["parts"], "view": "top", "width": 400, "height": 300})
    assert "objects: parts[0], parts[1]" in caption, caption

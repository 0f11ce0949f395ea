"""``show()`` answers with a picture, end to end through a real MCP client (the ``mcp`` SDK).

``python -m launcher mcp --embedded`` runs on tests/profiles/show_fast.toml (the default jail with
short limits, ``ocp_vscode`` allowed). Code written for the OCP CAD Viewer runs as written, and the
execute reply carries, after its text, a caption saying the picture is what show() displayed and
one PNG image block, decoded here with Pillow and checked pixel by pixel. ``show_images: false``
turns it off; ``render`` with no objects draws what show() displayed last.
"""
from __future__ import annotations

import base64
import io
import sys

import numpy as np
import pytest
from mcp import StdioServerParameters

from tests.helpers.cli import REPO, launcher_env

import mcpclient

PIL = pytest.importorskip("PIL")
from PIL import Image  # noqa: E402

PROFILE = str(REPO / "tests" / "profiles" / "show_fast.toml")
BG = np.array((250, 250, 250))
BLUE = np.array((74, 144, 217))  # the renderer's first colour (jail/cad/render_shade.py PALETTE)

TALL = """\
from ocp_vscode import show, show_object, set_port, set_defaults, Camera
set_port(3939)
set_defaults(reset_camera=Camera.RESET, ortho=True)
tall = Box(10, 10, 80)
wide = Box(200, 200, 1)
show(tall, reset_camera=Camera.KEEP, axes=True, not_a_real_option=1)
"""


def decode(block) -> np.ndarray:
    assert block.type == "image" and block.mime_type == "image/png"
    im = Image.open(io.BytesIO(base64.b64decode(block.data)))
    im.load()
    assert im.format == "PNG"
    return np.asarray(im.convert("RGB")).astype(int)


def part_pixels(img: np.ndarray) -> np.ndarray:
    """Pixels of the drawn part: far from the background and from grey (text, legend), left of the
    axes triad (the bottom-right corner)."""
    out = (np.abs(img - BG).sum(-1) > 60) & ((img.max(-1) - img.min(-1)) > 40)
    h, w = out.shape
    out[h * 3 // 4:, w * 7 // 8:] = False
    return out


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    d = tmp_path_factory.mktemp("show-mcp")
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "launcher", "mcp", "--embedded", "--profile", PROFILE, "--output-dir", str(d / "out")],
        env=launcher_env(), cwd=str(REPO))
    with mcpclient.running(d / "out", d / "server-stderr.log", params=params) as c:
        yield c


def test_execute_lists_the_show_images_option(client):
    execute = next(t for t in client.list_tools().tools if t.name == "execute")
    opt = execute.input_schema["properties"]["show_images"]
    assert opt["type"] == "boolean" and opt["default"] is True


def test_show_returns_a_picture_of_the_part(client):
    client.text("reset")
    res = client.call("execute", {"code": TALL})
    assert res.is_error is False, res
    assert [c.type for c in res.content] == ["text", "text", "image"], res
    assert res.content[0].text.startswith("OK") and "+ tall" in res.content[0].text
    caption = res.content[1].text
    assert caption.startswith("show(): what the code displayed") and "objects: tall" in caption
    assert "bbox 10x10x80 mm" in caption  # only what was shown: not the 200 mm plate
    img = decode(res.content[2])
    assert img.shape == (600, 800, 3)
    part = part_pixels(img)
    ys, xs = np.nonzero(part)
    assert part.sum() > 5000, part.sum()
    # a tall, thin box: its drawing is much taller than wide, and blue (shaded)
    assert (ys.max() - ys.min()) > 2.5 * (xs.max() - xs.min()), (xs.min(), xs.max(), ys.min(), ys.max())
    mean = img[part].mean(0)
    assert mean[2] > mean[0] + 40, mean
    assert (img[5:25, 780:795] == BG).all()  # the top-right corner is background


def test_show_images_false_leaves_the_reply_text_only(client):
    res = client.call("execute", {"code": "show(wide)", "show_images": False})
    assert res.is_error is False and [c.type for c in res.content] == ["text"], res


def test_render_without_objects_draws_what_was_shown_last(client):
    res = client.call("render", {"width": 400, "height": 300})
    assert res.is_error is False, res
    assert "objects: wide" in res.content[0].text and "bbox 200x200x1 mm" in res.content[0].text
    client.text("execute", {"code": "from ocp_vscode import show_clear\nshow_clear()"})
    res = client.call("render", {"width": 400, "height": 300})
    assert "objects: tall, wide" in res.content[0].text, res  # nothing shown: every shape, as before


def test_show_object_collects_named_objects(client):
    code = ("from ocp_vscode import show_object\n"
            "show_object(Pos(50, 0, 0) * Sphere(8), name='ball', options={'color': 'red'})\n"
            "show_object(tall, name='post')\n")
    res = client.call("execute", {"code": code})
    assert res.is_error is False, res
    assert [c.type for c in res.content] == ["text", "text", "image"], res
    assert "objects: ball, post" in res.content[1].text
    img = decode(res.content[2])
    assert part_pixels(img).sum() > 2000
    red = (img[..., 0] > img[..., 1] + 80) & (img[..., 0] > img[..., 2] + 80)
    assert red.sum() > 1000, red.sum()  # the ball in the colour show_object was given


def test_a_call_that_fails_after_show_has_no_picture_and_keeps_the_old_record(client):
    res = client.call("execute", {"code": "show(Sphere(99))\nraise ValueError('no')"})
    assert res.is_error is True and [c.type for c in res.content] == ["text"], res
    res = client.call("render", {"width": 200, "height": 150})
    assert "objects: ball, post" in res.content[0].text  # the failed call's show() died with its process


def test_show_of_nothing_drawable_keeps_the_call_ok_with_a_note(client):
    res = client.call("execute", {"code": "show(Location((1, 2, 3)), 42, 'text')\nk = 1"})
    assert res.is_error is False, res
    assert [c.type for c in res.content] == ["text"], res
    text = res.content[0].text
    assert text.startswith("OK") and "+ k" in text
    assert "show() was called but no picture was made" in text and "nothing that can be drawn" in text

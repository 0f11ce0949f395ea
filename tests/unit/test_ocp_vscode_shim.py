"""The jail's ``ocp_vscode`` stand-in (jail/cad/shims/) and what ``render()`` draws from its record.

In process, no jail: the stand-in is served under the name ``ocp_vscode`` by the real import and by
the allowlisted one (a read-only view, private state out of reach); it takes what the real module
takes; ``show()`` records objects, names and colours and counts them; ``select_shown`` (what a
``render`` with no objects draws) reads the record as untrusted - objects whose properties raise,
huge and recursive lists, non-shapes and a replaced record give a clear RenderError or the drawable
part, never an exception of another kind. The jailed, end-to-end half is
tests/integration/test_show_mcp.py and tests/faults/test_faults_show.py.
"""
from __future__ import annotations

import sys

import pytest

from jail.cad import runner  # noqa: F401 - importing the runner serves the stand-in (as in the zygote)
from jail.cad.render_view import RenderError
from jail.cad.safe_builtins import make_builtins
from jail.wire.caps import RENDER_MAX_OBJECTS

from jail.cad.shims import ocp_vscode as shim
from jail.cad.shims import record
from jail.cad.render_select import select_shown

ALLOWED = ["build123d", "math", "numpy", "typing", "collections", "itertools", "functools", "copy", "ocp_vscode"]
BLOCKED = ["eval", "exec", "compile", "open", "__import__", "breakpoint", "input", "getattr", "vars", "dir",
           "hasattr"]

# the real module's public names (ocp_vscode 2.8-3.x: show.py, config.py, comms.py, utils.py, colors.py,
# Animation, ImageFace, the selectors and the native tessellator switches)
REAL_NAMES = """show show_object remove_object push_object show_objects reset_show show_all show_clear
save_screenshot workspace_config combined_config set_viewer_config set_defaults reset_defaults get_default
get_defaults status AnalysisTool Camera Collapse Render StudioEnvironment StudioBackground StudioToneMapping
StudioTextureMapping UiTab send_data send_command send_response set_port get_port listener is_pytest
ignore_camera_warnings camera_keep_warning BaseColorMap ColorMap get_colormap set_colormap unset_colormap
web_to_rgb Animation ImageFace select_vertex select_vertices select_edge select_edges select_face
select_faces""".split()


@pytest.fixture(autouse=True)
def fresh_record():
    shim.reset_show()
    record.clear()
    record.take_count()
    yield
    shim.reset_show()
    record.clear()
    record.take_count()


@pytest.fixture
def b3d():
    return pytest.importorskip("build123d")


def jail_ns(allowed=ALLOWED) -> dict:
    return {"__builtins__": make_builtins(allowed, BLOCKED), "__name__": "__main__"}


def test_served_under_the_real_name():
    assert sys.modules["ocp_vscode"] is shim
    assert shim.__name__ == "ocp_vscode" and shim.show.__module__ == "ocp_vscode"
    assert set(REAL_NAMES) <= set(shim.__all__)
    assert all(hasattr(shim, n) for n in shim.__all__)


def test_import_through_the_allowlist_is_a_read_only_view():
    ns = jail_ns()
    exec("import ocp_vscode\nfrom ocp_vscode import *\nfrom ocp_vscode import show as s, Camera\n", ns)
    v = ns["ocp_vscode"]
    assert v is not shim and v.__name__ == "ocp_vscode"
    assert ns["s"] is shim.show and ns["show_object"] is shim.show_object and ns["Camera"].RESET.value == "reset"
    assert all(n in ns for n in REAL_NAMES)
    for private in ("_record", "_sys", "_STACK", "_DEFAULTS", "__builtins__", "__file__"):
        with pytest.raises(AttributeError):
            getattr(v, private)
    with pytest.raises(AttributeError, match="read-only"):
        v.show = print
    with pytest.raises(ImportError):
        exec("from ocp_vscode import _record", ns)


def test_not_importable_where_the_profile_does_not_allow_it():
    ns = jail_ns(ALLOWED[:-1])
    with pytest.raises(ImportError, match="not allowed"):
        exec("import ocp_vscode", ns)


def test_accepts_what_the_real_one_accepts(b3d):
    box = b3d.Box(1, 2, 3)
    shim.set_port(3939)
    shim.set_defaults(reset_camera=shim.Camera.KEEP, ortho=True, made_up_option=1)
    assert shim.get_defaults()["ortho"] is True and shim.get_default("ortho") is True
    shim.reset_defaults()
    assert shim.get_defaults() == {}
    assert shim.show(box, names=["box"], colors=["red"], alphas=[0.5], reset_camera=shim.Camera.RESET,
                     collapse=shim.Collapse.ALL, axes=True, grid=(True, False, False), anything=object()) is None
    shim.show_object(box, name="b", options={"color": (0.1, 0.2, 0.3), "alpha": 0.5})
    shim.push_object(box, name="p", color="#00ff00")
    shim.show_objects()
    shim.remove_object("p", call_show=True)
    shim.save_screenshot("x.png")
    shim.set_colormap(shim.ColorMap.tab10(alpha=0.8))
    assert isinstance(shim.get_colormap(), shim.BaseColorMap) and len(next(iter(shim.get_colormap()))) == 4
    shim.unset_colormap()
    a = shim.Animation(box)
    a.add_track("/b", "t", [0, 1], [(0, 0, 0), (1, 0, 0)])
    a.animate(2)
    assert shim.status() == {} and shim.workspace_config() == {} and shim.is_pytest() is False
    assert shim.web_to_rgb("red") == (1.0, 0.0, 0.0)
    assert len(shim.select_edges(box, [0, 1])) == 2 and shim.select_face(box, 0).is_same(box.faces()[0])
    face = shim.ImageFace("logo.png", scale=2, origin_pixels=(0, 0))  # not readable: a placeholder rectangle
    assert type(face).__name__ == "Face" and abs(face.area - 4) < 1e-9
    shim.show_clear()
    shim.show_all()


def test_show_records_names_colours_and_counts(b3d):
    a, b = b3d.Box(1, 1, 1), b3d.Sphere(1)
    shim.show(a, b, names=["a", None], colors=["red", (0, 0.5, 1)])
    assert [(o is x, n, c) for (o, n, c), x in zip(record.last(), (a, b))] == [
        (True, "a", (255, 0, 0)), (True, None, (0, 128, 255))]
    shim.show_object(a, name="lid", options={"color": "blue"})
    shim.show_object(b, clear=False)
    assert [n for _, n, _ in record.last()] == ["lid", None]  # show_object shows what it collected
    assert record.take_count() == 4 and record.take_count() == 0
    shim.show_clear()
    assert record.last() == []


def test_show_all_records_the_callers_shapes(b3d):
    ns = jail_ns()
    ns["Box"] = b3d.Box
    exec("from ocp_vscode import show_all\npart = Box(1, 1, 1)\nparts = [Box(1, 1, 1), Box(2, 2, 2)]\n"
         "n = 3\nhidden = Box(3, 3, 3)\nshow_all(exclude=['hidden'])\n", ns)
    assert sorted(n for _, n, _ in record.last()) == ["part", "parts"] and record.take_count() == 2


def test_render_draws_the_last_shown_objects_by_name(b3d):
    from jail.cad.render import render
    box, cyl = b3d.Box(10, 10, 10), b3d.Pos(30, 0, 0) * b3d.Cylinder(3, 10)
    ns = {"box": box, "cyl": cyl, "other": b3d.Sphere(50)}
    _, meta = render(ns, width=64, height=64)
    assert "other" in meta["objects"]  # nothing shown: today's default
    shim.show(box, [cyl, b3d.Box(1, 1, 1)], b3d.Box(2, 2, 2), names=[None, None, "tiny"])
    _, meta = render(ns, width=64, height=64)
    assert meta["objects"] == ["box", "cyl", "shown1[1]", "tiny"]
    assert meta["bbox"]["size"][0] < 50  # the sphere was not drawn
    _, meta = render(ns, ["other"], width=64, height=64)  # named objects: as asked
    assert meta["objects"] == ["other"]
    shim.show_clear()
    _, meta = render(ns, width=64, height=64)
    assert "other" in meta["objects"]


def test_shown_parts_of_builders_are_named_after_the_builders(b3d):
    """``show(body.part, cab.part)`` (build123d's toy_truck example) drew a legend of 'shown0',
    'shown1': a part shown from a builder takes the builder's name; a name bound to the part itself
    wins."""
    from jail.cad.render import render
    ns = jail_ns()
    ns.update(BuildPart=b3d.BuildPart, Box=b3d.Box, Pos=b3d.Pos)
    exec("from ocp_vscode import show\nwith BuildPart() as body:\n    Box(10, 10, 10)\n"
         "with BuildPart() as cab:\n    Box(4, 4, 4)\nwith BuildPart() as lid:\n    Box(2, 2, 2)\n"
         "top = lid.part\nshow(body.part, Pos(20, 0, 0) * cab.part, lid.part)\n", ns)
    _, meta = render({k: v for k, v in ns.items() if k in ("body", "cab", "lid", "top")}, width=64, height=64)
    assert meta["objects"] == ["body", "shown1", "top"]


def test_render_draws_shown_objects_in_their_colours(b3d):
    import io

    import numpy as np
    from PIL import Image

    from jail.cad.render import render
    box = b3d.Box(10, 10, 10)
    shim.show(box, colors=[(0.0, 0.8, 0.0)])
    png, meta = render({}, width=200, height=150)
    img = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)
    part = np.abs(img - 250).sum(-1) > 60
    r, g, b = img[part].mean(0)
    assert g > r + 40 and g > b + 40, (r, g, b)  # green, not the default blue
    shim.show(box, b3d.Pos(20, 0, 0) * b3d.Box(5, 5, 5), names=["a", "b"], colors=["red"])
    png, meta = render({}, view="sheet", width=400, height=300)
    img = np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)
    red = (img[..., 0] > img[..., 1] + 60) & (np.abs(img[..., 1] - img[..., 2]) < 20)
    orange = (img[..., 0] > img[..., 1] + 40) & (img[..., 1] > img[..., 2] + 40)
    assert red.sum() > 200 and orange.sum() > 50  # b in the renderer's own second colour


class Liar:
    """Everything about it raises."""

    def __getattribute__(self, name):
        raise RuntimeError("lie")

    def __eq__(self, other):
        raise RuntimeError("lie")

    __hash__ = None


class LyingList(list):
    def __iter__(self):
        raise RuntimeError("lie")

    def __getitem__(self, i):
        raise RuntimeError("lie")

    def __len__(self):
        raise RuntimeError("lie")


def test_objects_that_lie_are_skipped_or_refused_clearly(b3d):
    box = b3d.Box(1, 1, 1)
    shim.show(Liar(), 3, "text", None, b3d.Location((1, 2, 3)), b3d.Plane.XY)
    with pytest.raises(RenderError, match="nothing that can be drawn"):
        select_shown({})
    shim.show(Liar(), box, LyingList([box]))
    parts = select_shown({"box": box})
    assert [n for n, _ in parts] == ["box"]  # the lying list's own iterator was never called


def test_recursive_and_huge_lists_are_bounded(b3d):
    box = b3d.Box(1, 1, 1)
    loop: list = [box]
    loop.append(loop)
    shim.show(loop)
    assert len(select_shown({})) == 1
    boxes = [b3d.Pos(2 * i, 0, 0) * b3d.Box(1, 1, 1) for i in range(RENDER_MAX_OBJECTS + 5)]
    shim.show(boxes)
    parts = select_shown({"boxes": boxes})
    assert len(parts) == RENDER_MAX_OBJECTS and parts[-1][0] == "others" and parts[0][0] == "boxes[0]"
    shim.show([box] * 2_000_000)  # one shape two million times: scanned up to the cap, drawn once
    assert len(select_shown({})) == 1


@pytest.mark.parametrize("state", [None, 5, "x", {"a": 1}, [1, 2], [(1,)], [("a", "b", "c", "d")],
                                   [(None, 5, (999, 0, 0))], LyingList([(1, 2, 3)])])
def test_a_replaced_record_is_read_as_untrusted(state):
    record._last = state
    try:
        got = record.last()
        assert isinstance(got, list)
        for obj, name, col in got:
            assert name is None or type(name) is str
            assert col is None
        try:
            select_shown({})
        except RenderError:
            pass
    finally:
        record._last = []


@pytest.mark.parametrize("count", [None, -1, 2 ** 80, "3", 2.0, True])
def test_a_replaced_count_reads_as_zero(count):
    record._count = count
    n = record.take_count()
    assert type(n) is int and n == 0


def test_colours_the_viewer_takes(b3d):
    assert record.rgb("red") == (255, 0, 0) and record.rgb("#0080ff") == (0, 128, 255)
    assert record.rgb((1, 0, 0)) == (255, 0, 0) and record.rgb((0.5, 0.5, 0.5, 1.0)) == (128, 128, 128)
    assert record.rgb((255, 128, 0)) == (255, 128, 0) and record.rgb(b3d.Color("green")) is not None
    for bad in ("no-such-colour", (1, 2), (300, 0, 0), (-1, 0, 0), Liar(), object(), "x" * 10_000):
        assert record.rgb(bad) is None


def test_the_runner_reports_the_count(b3d):
    ns = runner.new_namespace(ALLOWED, BLOCKED, True)
    kw = dict(python_layers=True, allowed_imports=ALLOWED, blocked_calls=BLOCKED, max_output_bytes=4096)
    r = runner.run("from ocp_vscode import show\npart = Box(1, 1, 1)\nshow(part, Box(2, 2, 2))\n", ns, **kw)
    assert r["ok"] and r["shown"] == 2, r
    r = runner.run("x = 1\n", ns, **kw)
    assert r["ok"] and r["shown"] == 0

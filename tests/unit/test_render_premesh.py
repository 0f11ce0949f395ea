"""An idle spare's mesh of the default view (jail/cad/render_premesh.py) against meshing at render time.

In-process, no jail. Ground truth: the PNG bytes of the same render without the kept mesh, and the
session's own shapes, which must gain no triangulation from the pre-mesh (an export the spare serves
instead would otherwise find a finer mesh than it asks for).
"""
from __future__ import annotations

import pytest

from tests.helpers.models import PLATE


def _ns(code: str = PLATE) -> dict:
    ns: dict = {}
    exec("from build123d import *\n" + code, ns)  # noqa: S102 - the test's own model
    return ns


def _meshed_faces(ns: dict) -> int:
    """How many faces of the namespace's shapes hold a triangulation."""
    from OCP.BRep import BRep_Tool
    from OCP.TopAbs import TopAbs_FACE
    from OCP.TopExp import TopExp_Explorer
    from OCP.TopLoc import TopLoc_Location
    from OCP.TopoDS import TopoDS
    from jail.cad.render_select import select_parts
    n = 0
    for _, s in select_parts(ns, None):
        ex = TopExp_Explorer(s, TopAbs_FACE)
        while ex.More():
            n += BRep_Tool.Triangulation_s(TopoDS.Face(ex.Current()), TopLoc_Location()) is not None
            ex.Next()
    return n


@pytest.fixture(autouse=True)
def _clean():
    from jail.cad import render_premesh
    render_premesh.forget()
    yield
    render_premesh.forget()


def test_the_default_render_takes_the_kept_mesh_and_draws_the_same_pixels():
    from jail.cad import render_premesh
    from jail.cad.render import render
    ns = _ns()
    assert render_premesh.premesh_default_view(ns)
    assert _meshed_faces(ns) == 0  # meshed copies: the session's shapes are untouched
    png_kept, meta_kept = render(ns)
    assert _meshed_faces(ns) == 0  # drawn from the kept mesh (meshing at render time meshes the shapes)
    render_premesh.forget()
    png, meta = render(ns)
    assert _meshed_faces(ns) > 0
    assert png_kept == png and meta_kept == meta


@pytest.mark.parametrize("kw", [{"view": "top"}, {"width": 640}, {"objects": ["part"]},
                                {"section": {"axis": "z", "offset": 5}}, {"view": "sheet"}])
def test_any_other_render_draws_what_it_drew_before(kw):
    """Another view, size, selection or a section: the kept mesh does not fit (another deflection, other
    shapes or a cut), and the picture is the one drawn without it."""
    from jail.cad import render_premesh
    from jail.cad.render import render
    ns = _ns()
    assert render_premesh.premesh_default_view(ns)
    png_after, _ = render(ns, **kw)
    render_premesh.forget()
    png_fresh, _ = render(_ns(), **kw)
    assert png_after == png_fresh


def test_other_shapes_than_the_kept_ones_are_meshed():
    """Kept for one namespace, asked for another with a different model: never the kept triangles."""
    from jail.cad import render_premesh
    from jail.cad.render import render
    assert render_premesh.premesh_default_view(_ns())
    other = _ns("part = Box(80, 60, 10)\n")
    png, _ = render(other)
    assert _meshed_faces(other) > 0
    render_premesh.forget()
    png_fresh, _ = render(_ns("part = Box(80, 60, 10)\n"))
    assert png == png_fresh


def test_a_large_model_is_not_premeshed(monkeypatch):
    from jail.cad import render_premesh
    monkeypatch.setattr(render_premesh, "MAX_FACES", 5)
    ns = _ns()
    assert not render_premesh.premesh_default_view(ns)
    assert render_premesh._cached is None


def test_nothing_to_draw_keeps_nothing():
    from jail.cad import render_premesh
    from jail.cad.render_view import RenderError
    try:
        kept = render_premesh.premesh_default_view({"x": 1})
    except RenderError:
        kept = False
    assert not kept and render_premesh.cached_mesh([], 1.0, 10) is None

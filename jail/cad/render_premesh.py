"""Rendering, ahead of the request: an idle spare meshes the default view of the session's shapes.

A spare (jail/proc/spare.py) serves one read-only op and exits; most often that op is a ``render`` of
the default view (iso, 800x600). While it waits, the spare meshes what that render would draw, at the
deflection it would use, and keeps the triangles here (:func:`premesh_default_view`). The render then
takes them instead of meshing (:func:`cached_mesh`) when it draws the very same shapes (``IsEqual``:
same shape, location and orientation) at the very same deflection; anything else meshes as before.

The meshing is done on deep copies (``BRepBuilderAPI_Copy``, geometry copied, no mesh), so the
session's own shapes gain no triangulation: an ``export`` this spare serves instead (an STL at a
coarser tolerance would keep a finer mesh it found) gives the same bytes as without the cache.
Copies of identical geometry mesh to identical triangles, so the picture is the same pixel for pixel.

Blocks nothing. Bounds: only models of at most ``MAX_FACES`` faces (the copies cost memory; a large
model would hold the spare longer than a request waits); it runs inside the spare's warm-up budget
(jail/cad/warmup.py: a lowered soft ``RLIMIT_CPU``, stopped between steps once a request waits).
Does not keep apart: choosing the default shapes reads the session's objects (a builder's ``part``,
``show()``'s record) as the render would, so a property the session patched runs here too, under
that budget.
"""
from __future__ import annotations

import numpy as np

from jail.cad.render_mesh import ANGULAR, MAX_TRIANGLES, box_corners, mesh_deflection, mesh_shapes, shapes_bbox
from jail.cad.render_select import select_parts
from jail.cad.render_view import VIEWS, camera, fit

__all__ = ["premesh_default_view", "cached_mesh", "forget", "DEFAULT_VIEW", "MAX_FACES"]

DEFAULT_VIEW = ("iso", 800, 600)  # what a ``render`` with no arguments draws
MAX_FACES = 2000

_cached: tuple[list, float, object] | None = None  # (the shapes drawn, deflection, Mesh)


def default_deflection(shapes: list, view: str, width: int, height: int) -> float:
    """The linear deflection ``render`` meshes ``shapes`` at for ``view`` at ``width`` x ``height``."""
    lo, hi = shapes_bbox(shapes)
    diag = float(np.linalg.norm(hi - lo)) or 1.0
    r, u, _ = camera(*VIEWS[view])
    _, mm = fit(box_corners(lo, hi), r, u, width, height)
    return mesh_deflection(mm, diag)


def _faces_within(shapes: list, cap: int) -> bool:
    from OCP.TopAbs import TopAbs_FACE
    from OCP.TopExp import TopExp_Explorer
    n = 0
    for s in shapes:
        ex = TopExp_Explorer(s, TopAbs_FACE)
        while ex.More():
            n += 1
            if n > cap:
                return False
            ex.Next()
    return True


def premesh_default_view(namespace: dict) -> bool:
    """Mesh copies of what a default ``render`` draws and keep the triangles; True when kept."""
    global _cached
    from OCP.BRepBuilderAPI import BRepBuilderAPI_Copy
    _cached = None
    shapes = [s for _, s in select_parts(namespace, None)]
    if not shapes or not _faces_within(shapes, MAX_FACES):
        return False
    view, width, height = DEFAULT_VIEW
    deflection = default_deflection(shapes, view, width, height)
    copies = [BRepBuilderAPI_Copy(s, True, False).Shape() for s in shapes]  # geometry copied, no mesh
    mesh = mesh_shapes(copies, deflection, ANGULAR, max_triangles=MAX_TRIANGLES, allow_empty=True)
    _cached = (shapes, deflection, mesh)
    return True


def cached_mesh(shapes: list, deflection: float, max_triangles: int):
    """The kept mesh when it is of exactly ``shapes`` at ``deflection`` (and within the cap), else None."""
    if _cached is None:
        return None
    kept, d, mesh = _cached
    if d != deflection or len(kept) != len(shapes) or mesh.n_tris > max_triangles:
        return None
    if not all(a.IsEqual(b) for a, b in zip(kept, shapes)):
        return None
    return mesh


def forget() -> None:
    global _cached
    _cached = None

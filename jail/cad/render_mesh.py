"""Rendering, step 2: the shapes as triangles (shaded) and polylines (objects without faces).

OCCT meshes each shape (``BRepMesh_IncrementalMesh``, not in parallel: the jail allows no threads),
solid by solid, counting triangles as it goes. Blocks: meshes over ``max_triangles`` and more than
``MAX_EDGES`` edges are refused with a ``RenderError`` before any large allocation. Does not bound
the time OCCT takes to mesh a huge model (the launcher's wall-clock kill does). OCP is imported in
the functions that use it.
"""

from __future__ import annotations

import numpy as np

from jail.cad.render_view import RenderError

__all__ = ["Mesh", "mesh_shapes", "edge_polylines", "shapes_bbox", "box_corners", "has", "mesh_deflection",
           "MAX_TRIANGLES", "MAX_EDGES", "ANGULAR"]

MAX_TRIANGLES = 1_000_000
MAX_EDGES = 20_000  # edges drawn as lines, for objects without faces
ANGULAR = 0.5  # mesh angular deflection (rad); the linear one is half an output pixel


def mesh_deflection(mm_per_px: float, diag: float) -> float:
    """The linear deflection for a view of ``mm_per_px``: half an output pixel (bounded below)."""
    return max(mm_per_px * 0.5, diag * 2e-5, 1e-6)


class Mesh:
    """Triangles of a set of shapes: world vertices, per-vertex normals, and per triangle the
    object index, a global B-rep face index, a face flag (1 = a section cap) and whether it bounds a
    solid (``K``: wound outwards, so a renderer may skip the triangles facing away)."""

    def __init__(self):
        self.verts: list = []
        self.normals: list = []
        self.tris: list = []
        self.obj: list = []
        self.face: list = []
        self.flag: list = []
        self.closed: list = []
        self.n_faces = 0
        self.n_tris = 0
        self._nv = 0

    def finish(self) -> "Mesh":
        cat = lambda xs, shape, dt: np.concatenate(xs).astype(dt) if xs else np.zeros(shape, dt)  # noqa: E731
        self.V = cat(self.verts, (0, 3), np.float64)
        self.N = cat(self.normals, (0, 3), np.float64)
        self.T = cat(self.tris, (0, 3), np.int64)
        self.O = cat(self.obj, (0,), np.int32)
        self.F = cat(self.face, (0,), np.int32)
        self.C = cat(self.flag, (0,), np.int8)
        self.K = cat(self.closed, (0,), bool)
        return self


def _trsf_matrix(loc) -> np.ndarray | None:
    if loc.IsIdentity():
        return None
    t = loc.Transformation()
    return np.array([[t.Value(i, j) for j in range(1, 5)] for i in range(1, 4)])


def _faces(shape) -> list:
    """``[(face, closed)]``: the faces of the solids of ``shape`` (closed), then its free faces."""
    from OCP.TopAbs import TopAbs_FACE, TopAbs_SOLID
    from OCP.TopExp import TopExp_Explorer
    from OCP.TopoDS import TopoDS
    out = []
    ex = TopExp_Explorer(shape, TopAbs_SOLID)
    while ex.More():
        fx = TopExp_Explorer(ex.Current(), TopAbs_FACE)
        while fx.More():
            out.append((TopoDS.Face(fx.Current()), True))
            fx.Next()
        ex.Next()
    fx = TopExp_Explorer(shape, TopAbs_FACE, TopAbs_SOLID)
    while fx.More():
        out.append((TopoDS.Face(fx.Current()), False))
        fx.Next()
    return out


def mesh_shapes(shapes: list, deflection: float, angular: float, *, max_triangles: int = MAX_TRIANGLES,
                cap_plane: tuple | None = None, allow_empty: bool = False) -> Mesh:
    """Mesh each TopoDS shape and gather its triangles. ``cap_plane`` = (point, normal): faces
    lying in that plane are flagged as section caps."""
    from OCP.BRepMesh import BRepMesh_IncrementalMesh
    from OCP.TopExp import TopExp_Explorer
    from OCP.TopAbs import TopAbs_FACE, TopAbs_REVERSED, TopAbs_SOLID
    from OCP.BRep import BRep_Tool
    from OCP.TopLoc import TopLoc_Location
    from OCP.TopoDS import TopoDS

    m = Mesh()
    polys = []
    if not shapes:
        raise RenderError("nothing to draw")
    for oi, shape in enumerate(shapes):
        # solid by solid, counting as we go: a compound of thousands of solids is refused at the
        # cap, not after meshing all of it; then the rest (free faces), already-meshed parts kept
        ex = TopExp_Explorer(shape, TopAbs_SOLID)
        count = 0
        while ex.More():
            solid = ex.Current()
            BRepMesh_IncrementalMesh(solid, deflection, False, angular, False)  # False: not in parallel
            fx = TopExp_Explorer(solid, TopAbs_FACE)
            while fx.More():
                poly = BRep_Tool.Triangulation_s(TopoDS.Face(fx.Current()), TopLoc_Location())
                count += poly.NbTriangles() if poly is not None else 0
                fx.Next()
            if m.n_tris + count > max_triangles:
                raise RenderError(f"the model needs more than {max_triangles} triangles at this size: "
                                  "render fewer objects or a smaller image")
            ex.Next()
        BRepMesh_IncrementalMesh(shape, deflection, False, angular, False)
        for face, closed in _faces(shape):
            loc = TopLoc_Location()
            poly = BRep_Tool.Triangulation_s(face, loc)
            if poly is not None:
                m.n_tris += poly.NbTriangles()
                if m.n_tris > max_triangles:
                    raise RenderError(f"the model needs more than {max_triangles} triangles at this size: "
                                      "render fewer objects or a smaller image")
                polys.append((oi, poly, loc, closed, face.Orientation() == TopAbs_REVERSED))
    for oi, poly, loc, closed, reversed_ in polys:
        nn, nt = poly.NbNodes(), poly.NbTriangles()
        if nn < 3 or nt < 1:
            continue
        pts = [poly.Node(i) for i in range(1, nn + 1)]
        v = np.array([(p.X(), p.Y(), p.Z()) for p in pts], np.float64)
        mat = _trsf_matrix(loc)
        if mat is not None:
            v = v @ mat[:, :3].T + mat[:, 3]
        t = np.array([poly.Triangle(i).Get() for i in range(1, nt + 1)], np.int64) - 1
        if t.min() < 0 or t.max() >= nn:
            continue
        if reversed_:  # wound so that the normal by the right-hand rule points out of the solid
            t = t[:, ::-1]
        a, b, c = v[t[:, 0]], v[t[:, 1]], v[t[:, 2]]
        tn = np.cross(b - a, c - a)  # area-weighted, consistently oriented within a face
        vn = np.zeros_like(v)
        for k in range(3):
            np.add.at(vn, t[:, k], tn)
        ln = np.linalg.norm(vn, axis=1, keepdims=True)
        vn = np.where(ln > 0, vn / np.where(ln > 0, ln, 1), 0.0)
        flag = 0
        if cap_plane is not None:
            p0, n = cap_plane
            dist = np.abs((v - p0) @ n)
            if float(dist.max()) <= max(1e-6, deflection * 0.01):
                flag = 1
        m.verts.append(v)
        m.normals.append(vn)
        m.tris.append(t + m._nv)
        m.obj.append(np.full(nt, oi, np.int32))
        m.face.append(np.full(nt, m.n_faces, np.int32))
        m.flag.append(np.full(nt, flag, np.int8))
        m.closed.append(np.full(nt, closed, bool))
        m._nv += nn
        m.n_faces += 1
    if not m.tris and not allow_empty:
        raise RenderError("nothing to draw: the objects have no faces")
    return m.finish()


def edge_polylines(shapes: list, deflection: float, max_edges: int = MAX_EDGES) -> list:
    """``[(object index, (k, 3) points)]`` for the edges of the objects that have no faces (wires,
    sketches' outlines, lines), which are drawn as lines over the shaded image."""
    from OCP.TopExp import TopExp_Explorer
    from OCP.TopAbs import TopAbs_EDGE, TopAbs_FACE
    from OCP.BRepAdaptor import BRepAdaptor_Curve
    from OCP.GCPnts import GCPnts_QuasiUniformDeflection
    from OCP.TopoDS import TopoDS
    out = []
    n = 0
    for oi, shape in enumerate(shapes):
        if has(shape, TopAbs_FACE):
            continue
        ex = TopExp_Explorer(shape, TopAbs_EDGE)
        while ex.More():
            n += 1
            if n > max_edges:
                raise RenderError(f"more than {max_edges} edges to draw: render fewer objects")
            try:
                c = BRepAdaptor_Curve(TopoDS.Edge(ex.Current()))
                g = GCPnts_QuasiUniformDeflection(c, deflection, c.FirstParameter(), c.LastParameter())
                if g.IsDone() and g.NbPoints() >= 2:
                    k = min(g.NbPoints(), 2000)
                    pts = np.array([(q.X(), q.Y(), q.Z()) for q in (g.Value(i) for i in range(1, k + 1))])
                    if np.isfinite(pts).all():
                        out.append((oi, pts))
            except Exception:  # noqa: BLE001 - a degenerate edge is skipped, not fatal
                pass
            ex.Next()
    return out


def shapes_bbox(shapes: list) -> tuple[np.ndarray, np.ndarray]:
    """``(lo, hi)`` corners of the exact bounding box of TopoDS shapes (RenderError if none)."""
    from OCP.Bnd import Bnd_Box
    from OCP.BRepBndLib import BRepBndLib
    b = Bnd_Box()
    for s in shapes:
        try:  # exact geometry, not the (tolerance-enlarged) triangulation
            BRepBndLib.AddOptimal_s(s, b, False, False)
        except Exception:  # noqa: BLE001
            BRepBndLib.Add_s(s, b)
    if b.IsVoid():
        raise RenderError("the objects are empty (no bounding box)")
    lo, hi = b.CornerMin(), b.CornerMax()
    lo = np.array([lo.X(), lo.Y(), lo.Z()])
    hi = np.array([hi.X(), hi.Y(), hi.Z()])
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
        raise RenderError("the objects have no finite bounding box")
    return lo, hi


def box_corners(lo, hi) -> np.ndarray:
    """The eight corners of the box ``lo``..``hi``, as an (8, 3) array."""
    return np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])


def has(shape, kind) -> bool:
    """Whether ``shape`` has a sub-shape of ``kind`` (a ``TopAbs_*`` value)."""
    from OCP.TopExp import TopExp_Explorer
    return TopExp_Explorer(shape, kind).More()

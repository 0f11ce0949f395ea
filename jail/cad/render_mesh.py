"""Rendering, step 2: the shapes as triangles (shaded) and polylines (objects without faces).

OCCT meshes each shape (``BRepMesh_IncrementalMesh``, not in parallel: the jail allows no threads),
solid by solid, counting triangles as it goes. Blocks: meshes over ``max_triangles`` and more than
``MAX_EDGES`` edges are refused with a ``RenderError`` before any large allocation. Does not bound
the time OCCT takes to mesh a huge model (the launcher's wall-clock kill does). OCP is imported in
the functions that use it.
"""

from __future__ import annotations

import numpy as np

from jail.cad.render_holes import Mouths
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
    solid (``K``: wound outwards, so a renderer may skip the triangles facing away); and the end
    disks of the solids' round holes (``D``) and their windows (``W``, ``render_holes``)."""

    def __init__(self):
        self.verts: list = []
        self.tris: list = []
        self.obj: list = []  # per face: (object index, triangles)
        self.flag: list = []  # per face: (flag, triangles)
        self.closed: list = []  # per face: (closed, triangles)
        self.n_faces = 0
        self.n_tris = 0
        self._nv = 0
        self.mouths = Mouths()  # the round hole walls and windows among the solids' faces

    def finish(self) -> "Mesh":
        """The gathered faces as arrays, with per-vertex normals: the area-weighted sum of the
        normals of a vertex's triangles (a face's own nodes only: faces share no vertices)."""
        cat = lambda xs, shape, dt: np.concatenate(xs).astype(dt) if xs else np.zeros(shape, dt)  # noqa: E731
        per_tri = lambda xs, dt: np.repeat(np.array([x for x, _ in xs], dt), [n for _, n in xs]) \
            if xs else np.zeros(0, dt)  # noqa: E731
        self.V = cat(self.verts, (0, 3), np.float64)
        self.T = cat(self.tris, (0, 3), np.int64)
        self.O = per_tri(self.obj, np.int32)
        self.F = np.repeat(np.arange(len(self.obj), dtype=np.int32), [n for _, n in self.obj]) \
            if self.obj else np.zeros(0, np.int32)
        self.C = per_tri(self.flag, np.int8)
        self.K = per_tri(self.closed, bool)
        self.D = self.mouths.disks()  # (k, 11): the round holes' two end centres, axis, radius at each end
        self.W = self.mouths.windows  # the through pockets: ends, axis, bounding radius, walls
        V, T = self.V, self.T
        tn = np.cross(V[T[:, 1]] - V[T[:, 0]], V[T[:, 2]] - V[T[:, 0]])  # area-weighted, outward
        vn = np.zeros_like(V)
        for k in range(3):
            np.add.at(vn, T[:, k], tn)
        ln = np.linalg.norm(vn, axis=1, keepdims=True)
        self.N = np.where(ln > 0, vn / np.where(ln > 0, ln, 1), 0.0)
        return self


def _trsf_matrix(loc) -> np.ndarray | None:
    if loc.IsIdentity():
        return None
    t = loc.Transformation()
    return np.array([[t.Value(i, j) for j in range(1, 5)] for i in range(1, 4)])


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
    too_many = RenderError(f"the model needs more than {max_triangles} triangles at this size: "
                           "render fewer objects or a smaller image")

    def gather(oi, faces, closed):
        """The triangulations of ``faces`` (an explorer), counted against the cap as they come."""
        while faces.More():
            face = TopoDS.Face(faces.Current())
            loc = TopLoc_Location()
            poly = BRep_Tool.Triangulation_s(face, loc)
            if poly is not None:
                m.n_tris += poly.NbTriangles()
                if m.n_tris > max_triangles:
                    raise too_many
                # a face with no surface is a mesh (import_stl's): its triangles are shaded flat
                flat = BRep_Tool.Surface_s(face) is None
                if closed and not flat:
                    m.mouths.add(face)
                polys.append((oi, poly, loc, closed, face.Orientation() == TopAbs_REVERSED, flat))
            faces.Next()

    for oi, shape in enumerate(shapes):
        # solid by solid, counting as we go: a compound of thousands of solids is refused at the
        # cap, not after meshing all of it; then the faces outside solids (free faces), if any
        ex = TopExp_Explorer(shape, TopAbs_SOLID)
        while ex.More():
            solid = ex.Current()
            BRepMesh_IncrementalMesh(solid, deflection, False, angular, False)  # False: not in parallel
            gather(oi, TopExp_Explorer(solid, TopAbs_FACE), True)
            m.mouths.add_windows(TopoDS.Solid(solid))
            ex.Next()
        free = TopExp_Explorer(shape, TopAbs_FACE, TopAbs_SOLID)
        if free.More():
            BRepMesh_IncrementalMesh(shape, deflection, False, angular, False)
            gather(oi, free, False)
    for oi, poly, loc, closed, reversed_, flat in polys:
        nn, nt = poly.NbNodes(), poly.NbTriangles()
        if nn < 3 or nt < 1:
            continue
        v = np.array([poly.Node(i).Coord() for i in range(1, nn + 1)], np.float64)
        mat = _trsf_matrix(loc)
        if mat is not None:
            v = v @ mat[:, :3].T + mat[:, 3]
        t = np.array([poly.Triangle(i).Get() for i in range(1, nt + 1)], np.int64) - 1
        if t.min() < 0 or t.max() >= nn:
            continue
        if reversed_:  # wound so that the normal by the right-hand rule points out of the solid
            t = t[:, ::-1]
        if flat:  # its own three vertices per triangle: each vertex normal is its triangle's
            v, t = v[t].reshape(-1, 3), np.arange(3 * nt, dtype=np.int64).reshape(-1, 3)
        flag = 0
        if cap_plane is not None:
            p0, n = cap_plane
            dist = np.abs((v - p0) @ n)
            if float(dist.max()) <= max(1e-6, deflection * 0.01):
                flag = 1
        m.verts.append(v)
        m.tris.append(t + m._nv)
        m.obj.append((oi, nt))
        m.flag.append((flag, nt))
        m.closed.append((closed, nt))
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
        sb = Bnd_Box()
        try:  # exact geometry, not the (tolerance-enlarged) triangulation
            BRepBndLib.AddOptimal_s(s, sb, False, False)
        except Exception:  # noqa: BLE001
            BRepBndLib.Add_s(s, sb)
        if sb.IsVoid():  # a mesh (faces of triangles only, import_stl's): the box of its triangles
            BRepBndLib.Add_s(s, sb, True)
        b.Add(sb)
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

"""The faces of a shape as the ``features`` op sees them: kind, axis, radius, span, material side.

Each face of a solid becomes a :class:`FaceInfo`: its surface kind (plane, cylinder, cone, torus,
other), for surfaces of revolution the axis line, the radius at both axial ends, the axial extent
along the axis and the angular span it covers, and whether it is *concave* (the material is
outside the surface: a hole wall) or convex (the material inside: a boss wall, a rounded corner).
A sphere is kind "other" with its material side (a cavity a hole may open into).
The material side comes from the face's orientation-aware outward normal (``BRepGProp_Face``),
never from build123d's Python methods, which user code may have patched.

Blocks nothing (a computation). Does not promise honest numbers once user code ran in this
process: the launcher checks the reply. OCP is imported at the top: this module is only imported
in jailed processes (via ``jail.proc.ops``) and in tests, never by the launcher.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from OCP.BRep import BRep_Tool
from OCP.BRepAdaptor import BRepAdaptor_Curve, BRepAdaptor_Curve2d, BRepAdaptor_Surface
from OCP.BRepGProp import BRepGProp, BRepGProp_Face
from OCP.BRepLProp import BRepLProp_SLProps
from OCP.GeomLProp import GeomLProp_SLProps
from OCP.GProp import GProp_GProps
from OCP.BRepTools import BRepTools
from OCP.ElSLib import ElSLib
from OCP.GeomAbs import (GeomAbs_BezierSurface, GeomAbs_BSplineSurface, GeomAbs_Cone, GeomAbs_Cylinder, GeomAbs_Plane,
                         GeomAbs_Sphere, GeomAbs_Torus)
from OCP.Geom import Geom_Plane
from OCP.GeomAdaptor import GeomAdaptor_Surface
from OCP.GeomConvert import GeomConvert_SurfToAnaSurf
from OCP.GeomLib import GeomLib_IsPlanarSurface
from OCP.TopAbs import TopAbs_EDGE, TopAbs_FACE, TopAbs_VERTEX
from OCP.TopExp import TopExp, TopExp_Explorer
from OCP.TopoDS import TopoDS
from OCP.collections import IndexedDataMap_TopoDS_Shape_List_TopoDS_Shape_TopTools_ShapeMapHasher as DataMap
from OCP.collections import IndexedMap_TopoDS_Shape_TopTools_ShapeMapHasher as _Map
from OCP.gp import gp_Dir, gp_Pnt, gp_Vec

TWO_PI = 2 * math.pi


def unique(shape, kind) -> list:
    m = _Map()
    TopExp.MapShapes_s(shape, kind, m)
    return [m.FindKey(i) for i in range(1, m.Extent() + 1)]


# ------------------------------------------------------------------ small vector helpers
def sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


def add(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


def mul(a, s):
    return (a[0] * s, a[1] * s, a[2] * s)


def dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


def norm(a):
    return math.sqrt(dot(a, a))


def unit(a):
    n = norm(a)
    return (a[0] / n, a[1] / n, a[2] / n) if n > 1e-300 else (0.0, 0.0, 0.0)


def middle_across(points, d) -> tuple:
    """The mean of ``points`` without its part along the unit vector ``d``: the centre of a regular
    outline seen along ``d``, from its sides' or walls' middles."""
    c = mul(tuple(map(sum, zip(*points))), 1.0 / len(points))
    return sub(c, mul(d, dot(c, d)))


def along_axis(p, origin, axis, tol: float) -> float | None:
    """Where ``p`` lies along the line through ``origin`` along the unit ``axis`` (t from
    ``origin``), or None when it is farther than ``tol`` from that line: whether a surface of
    revolution's origin (a sphere's centre) is on a hole's axis, and the shift to bring its axial
    extent into the hole's frame."""
    w = sub(p, origin)
    t = dot(w, axis)
    return t if norm(sub(w, mul(axis, t))) <= tol else None


OUTLINE_RAYS = (0.1234, 2.2345, 4.3456)  # inside_outline's ray directions (radians): skew to the axes and each other


def inside_outline(segs: np.ndarray, x: float, y: float) -> bool:
    """Is (x, y) inside the outline of ``segs`` (m x 4: x0, y0, x1, y1; even-odd rule; the segments in
    any order)? Asked
    along three skew rays, the majority says: a ray through a vertex where two edges' samples
    missed each other by a rounding (a spade's tip, on the axis its stem's middle is on) counts
    no crossing there."""
    votes = 0
    for a in OUTLINE_RAYS:
        c, s = math.cos(a), math.sin(a)
        x0, x1 = segs[:, 0] * c + segs[:, 1] * s, segs[:, 2] * c + segs[:, 3] * s
        y0, y1 = segs[:, 1] * c - segs[:, 0] * s, segs[:, 3] * c - segs[:, 2] * s
        px, py = x * c + y * s, y * c - x * s
        crosses = (y0 > py) != (y1 > py)
        with np.errstate(divide="ignore", invalid="ignore"):
            at = x0 + (py - y0) * (x1 - x0) / (y1 - y0)
        votes += int(np.count_nonzero(crosses & (px < at)) % 2)
    return votes >= 2


def canonical_dir(d):
    """``d`` or ``-d``, whichever has its first clearly non-zero component positive."""
    for c in d:
        if abs(c) > 1e-9:
            return d if c > 0 else mul(d, -1.0)
    return d


def _xyz(p):
    return (p.X(), p.Y(), p.Z())


# ------------------------------------------------------------------ faces
@dataclass
class FaceInfo:
    index: int
    face: object
    kind: str                          # plane cylinder cone torus other
    _area: float | None                # None: not computed yet (``area``)
    mid: tuple                         # a point on the face (mid UV)
    normal: tuple | None = None        # outward normal at mid (planes: everywhere)
    origin: tuple | None = None        # a point on the axis (revolution surfaces)
    axis: tuple | None = None          # canonical unit direction of the axis
    t0: float = 0.0                    # axial extent along ``axis`` from ``origin``
    t1: float = 0.0
    r0: float = 0.0                    # radius at t0 / t1 (cylinders: equal)
    r1: float = 0.0
    span: float = 0.0                  # angular span in radians (2*pi: all the way round)
    concave: bool | None = None        # material outside the surface (a hole wall)
    minor: float = 0.0                 # torus minor radius
    major: float = 0.0                 # torus major radius (of its tube's centre circle)
    sphere: tuple | None = None        # a sphere's (centre, radius) (kind "other")
    surface: object = None             # a B-spline face's analytic surface (a line meets it beyond the patch)
    neighbours: set = field(default_factory=set)
    edges: dict = field(default_factory=dict)  # its edges by their index in the shape (``faces_of``)
    outer: set | None = None           # the indices of its outer wire's edges (``outer_edges``), when read
    leans: dict = field(default_factory=dict)  # features_outlines' draft readings by direction, when read
    spread: dict = field(default_factory=dict)  # features_pockets: "outline" points, extents by direction

    @property
    def area(self) -> float:
        """The face's area, computed on first use: only some planes' and cylinders' are ever compared,
        and a B-spline face's cost ~5 ms (build123d's tea cup: 150 of the 160 ms its 28 faces took)."""
        if self._area is None:
            g = GProp_GProps()
            BRepGProp.SurfaceProperties_s(self.face, g)
            self._area = g.Mass()
        return self._area


def flat(n, d) -> tuple:
    """``n`` without its ``d`` part, unit: a drafted wall's normal as seen along the axis ``d``."""
    return unit(sub(n, mul(d, dot(n, d))))


def void_normal(fi: FaceInfo, p, d) -> tuple:
    """A plane's or a cylinder's normal out of the material at its point ``p``, as seen along ``d``
    (a pocket's axis; a cylinder's own axis is along it)."""
    if fi.kind == "plane":
        return flat(fi.normal, d)
    radial = flat(sub(p, fi.origin), d)
    return mul(radial, -1.0) if fi.concave else radial


def _normal_at(face, u, v):
    p, n = gp_Pnt(), gp_Vec()
    BRepGProp_Face(face).Normal(u, v, p, n)  # orientation-aware: points out of the material
    return _xyz(p), unit((n.X(), n.Y(), n.Z()))


EDGE_SAMPLES = 16


def edge_points(edge, samples: int = EDGE_SAMPLES) -> list[tuple]:
    """Points along an edge's curve, ``samples`` apart in parameter, its ends included; none for a
    degenerate edge (a cone's apex)."""
    e = TopoDS.Edge(edge)
    if BRep_Tool.Degenerated_s(e):
        return []
    c = BRepAdaptor_Curve(e)
    a, b = c.FirstParameter(), c.LastParameter()
    return [_xyz(c.Value(a + (b - a) * i / samples)) for i in range(samples + 1)]


TANGENT_COS = math.cos(math.radians(1.0))  # two faces meet smoothly along an edge: tangent planes within 1 degree
ALONG_SIN = math.sin(math.radians(5.0))     # a rail runs across the round's bend: within 5 degrees


def same_surface(a: FaceInfo, b: FaceInfo) -> bool:
    """Do ``a`` and ``b`` (a cylinder's, cone's or torus' pieces) lie on one surface: one axis line,
    one radius (a torus: both; a cone: the same radius at every point along the axis), or a sphere's:
    one centre and radius?"""
    if a.sphere is not None and b.sphere is not None:
        (ca, ra), (cb, rb) = a.sphere, b.sphere
        tol = 1e-6 * max(1.0, ra)
        return norm(sub(ca, cb)) <= tol and abs(ra - rb) <= tol
    if a.kind != b.kind or a.kind not in ("cylinder", "cone", "torus") or a.axis is None or b.axis is None:
        return False
    tol = 1e-6 * max(1.0, a.r0, a.r1, a.major)
    if abs(abs(dot(a.axis, b.axis)) - 1) > 1e-9:
        return False
    shift = along_axis(b.origin, a.origin, a.axis, tol)
    if shift is None:
        return False
    if a.kind == "cone":  # b's two ends on a's line of radius against t
        if abs(a.t1 - a.t0) <= tol:
            return False
        slope = (a.r1 - a.r0) / (a.t1 - a.t0)
        return all(abs(a.r0 + slope * (t + shift - a.t0) - r) <= tol for t, r in ((b.t0, b.r0), (b.t1, b.r1)))
    return abs(a.r0 - b.r0) <= tol and abs(a.minor - b.minor) <= tol and abs(a.major - b.major) <= tol


def pieces_of(fi: FaceInfo, infos, apart: list[FaceInfo] = ()) -> set[int]:
    """The indices of ``fi`` and of the pieces of its cylinder, cone or torus it runs on into, through
    one another: one face split (a fillet along an edge with a vertex on it, which OCCT could not
    merge, a B-spline copy's); and those of ``apart`` on the same surface, pieces that other cuts
    left apart (a chamfer round a knob's rim, cut through by its flutes)."""
    pieces, todo = {fi.index}, [fi]
    while todo:
        for j in todo.pop().neighbours:
            if j not in pieces and same_surface(fi, infos[j]):
                pieces.add(j)
                todo.append(infos[j])
    pieces.update(g.index for g in apart if g.kind == fi.kind and g.index not in pieces and same_surface(fi, g))
    return pieces


def split_surfaces(infos) -> bool:
    """Does a cylinder, cone, torus or sphere run on into a neighbour on the same surface round its
    axis: one face split in pieces (a STEP file's half cylinders, as some CAD systems write them)?
    Each finder reads one face per surface: ``features.find`` then reads the shape with such faces
    merged. A full turn split along its axis (a tube through a plate: the heat exchanger's) is read
    as a run of segments already, and merging 600 of them costs ~1 s: not asked."""
    return any(same_surface(fi, infos[j]) for fi in infos
               if (fi.kind in ("cylinder", "cone", "torus") and fi.span < 0.98 * TWO_PI) or fi.sphere is not None
               for j in fi.neighbours)


def rails(fi: FaceInfo, infos) -> list[int]:
    """The faces a round ``fi`` rolls onto: one index per edge it shares with another face where
    both faces' tangent planes at the edge's middle agree within a degree, and the edge runs along
    the round, across its direction of strongest curvature (a fillet's rails; a pipe's cross-section
    where it runs on into a bend is not one). Opposite normals count: a rounded edge of a part
    fused onto another ends on its face in a cusp. Its seam and degenerate edges are not counted."""
    out = []
    props = None
    for j in fi.neighbours:
        if same_surface(fi, infos[j]):
            continue  # a piece of its own surface OCCT could not merge (a bore cut up by a helix)
        other = infos[j].face
        for k in fi.edges.keys() & infos[j].edges.keys():
            e = TopoDS.Edge(fi.edges[k])
            if BRep_Tool.Degenerated_s(e):
                continue
            try:
                normals, uvs = [], []
                for face in (fi.face, other):
                    face = TopoDS.Face(face)
                    c = BRepAdaptor_Curve2d(e, face)
                    uv = c.Value((c.FirstParameter() + c.LastParameter()) / 2)
                    uvs.append(uv)
                    # the surface's own normal (its sign does not matter here): BRepGProp_Face
                    # reads the face's UV bounds first, ~0.3 ms on a gear's face of 200 edges
                    n = GeomLProp_SLProps(BRep_Tool.Surface_s(face), uv.X(), uv.Y(), 1, 1e-9).Normal()
                    normals.append((n.X(), n.Y(), n.Z()))
                if abs(dot(normals[0], normals[1])) < TANGENT_COS:
                    continue
                curve = BRepAdaptor_Curve(e)
                p, t = gp_Pnt(), gp_Vec()
                curve.D1((curve.FirstParameter() + curve.LastParameter()) / 2, p, t)
                if t.Magnitude() <= 1e-12:
                    continue
                t = unit((t.X(), t.Y(), t.Z()))
                if fi.kind == "cylinder":  # a rail is a line along the axis
                    along = abs(dot(t, fi.axis)) >= math.cos(math.asin(ALONG_SIN))
                elif fi.kind == "torus":  # a circle round the axis (never a cross-section of the tube)
                    radial = sub(_xyz(p), fi.origin)
                    along = abs(dot(t, radial)) <= ALONG_SIN * norm(radial) and abs(dot(t, fi.axis)) <= ALONG_SIN
                else:  # a B-spline rounding: across its direction of (much) stronger curvature
                    if props is None:
                        props = BRepLProp_SLProps(BRepAdaptor_Surface(TopoDS.Face(fi.face)), 2, 1e-9)
                    props.SetParameters(uvs[0].X(), uvs[0].Y())
                    if not props.IsCurvatureDefined():
                        continue
                    big, small = gp_Dir(), gp_Dir()
                    props.CurvatureDirections(big, small)
                    if abs(props.MinCurvature()) > abs(props.MaxCurvature()):
                        big = small
                    along = abs(dot(t, (big.X(), big.Y(), big.Z()))) <= ALONG_SIN
                if not along:
                    continue
            except Exception:  # noqa: BLE001 - no curve on one face, no curvature (a broken edge): not one
                continue
            out.append(j)
    return out


def _axial(face, origin, axis):
    """(t0, r0, t1, r1): the extreme axial positions of the face and the radius there, from points
    along its edges (a face trimmed by a tilted or curved one: the corners of its UV box lie off
    the face, beyond its real extent)."""
    pts = []
    for e in unique(face, TopAbs_EDGE):
        for p in edge_points(e):
            w = sub(p, origin)
            t = dot(w, axis)
            pts.append((t, norm(sub(w, mul(axis, t)))))
    for vx in unique(face, TopAbs_VERTEX):
        p = _xyz(BRep_Tool.Pnt_s(TopoDS.Vertex(vx)))
        w = sub(p, origin)
        t = dot(w, axis)
        pts.append((t, norm(sub(w, mul(axis, t)))))
    if not pts:  # no edges: a whole torus (OCCT's merge of its pieces leaves it unbounded): its surface
        ad = BRepAdaptor_Surface(face)
        u0, u1, v0, v1 = BRepTools.UVBounds_s(face)
        for i in range(9):
            for j in range(9):
                w = sub(_xyz(ad.Value(u0 + (u1 - u0) * i / 8, v0 + (v1 - v0) * j / 8)), origin)
                t = dot(w, axis)
                pts.append((t, norm(sub(w, mul(axis, t)))))
    lo = min(pts, key=lambda x: x[0])
    hi = max(pts, key=lambda x: x[0])
    return lo[0], lo[1], hi[0], hi[1]


PLANAR_TOL = 1e-6  # mm: a B-spline face whose poles lie this close to one plane is a plane
DRAFT_MAX = math.radians(15)  # a wall this close to its axis is drafted (moulded); a steeper cone: a chamfer


def _flat_spline(face):
    """The plane (a ``Geom_Plane``) a B-spline face's poles lie on within ``PLANAR_TOL``, or None."""
    try:
        flat = GeomLib_IsPlanarSurface(BRep_Tool.Surface_s(face), PLANAR_TOL)
        return Geom_Plane(flat.Plan()) if flat.IsPlanar() else None
    except Exception:  # noqa: BLE001 - an odd surface stays "other"
        return None


ANALYTIC_TOL = 1e-6  # mm: a B-spline face this close to a cylinder, cone, sphere or torus is one
SPAN_SAMPLES = 64  # points along each edge of such a face to read the angle it spans round its axis


def _analytic(face):
    """The cylinder, cone, sphere, torus (or plane) that a B-spline or Bezier face lies on within
    ``ANALYTIC_TOL``, a ``Geom_Surface``, or None: an all-NURBS STEP file (some CAD systems write
    every face so) then reads like the analytic part, its counterbores, countersinks and fillets
    too. ``BRep_Tool.Surface`` gives the surface placed where the face is."""
    try:
        return GeomConvert_SurfToAnaSurf(BRep_Tool.Surface_s(face)).ConvertToAnalytical(ANALYTIC_TOL)
    except Exception:  # noqa: BLE001 - an odd surface stays a B-spline
        return None


def _angle_span(face, surf, kind) -> float:
    """The angle (radians) a face on a revolution surface ``surf`` covers round its axis, from its
    edges (its own UV range need not be an angle): the union of the angular ranges each edge
    sweeps, read at ``SPAN_SAMPLES`` points (a seam says nothing: a torus has one round its tube)."""
    edges = [TopoDS.Edge(e) for e in unique(face, TopAbs_EDGE)]
    geom = {"cylinder": surf.Cylinder, "cone": surf.Cone, "torus": surf.Torus}[kind]()
    ranges = []
    for e in edges:
        us = []
        for x, y, z in edge_points(e, SPAN_SAMPLES):
            u, _v = ElSLib.Parameters_s(geom, gp_Pnt(x, y, z))
            us.append(u if not us else us[-1] + (u - us[-1] + math.pi) % TWO_PI - math.pi)  # unwrapped
        if us:
            lo = min(us) % TWO_PI
            ranges.append((lo, lo + min(max(us) - min(us), TWO_PI)))
    return _covered(ranges)


def _covered(ranges: list[tuple]) -> float:
    """The measure of the union of angular ranges (start in [0, 2pi), end up to 4pi) on the circle."""
    parts = []
    for lo, hi in ranges:
        parts += [(lo, min(hi, TWO_PI))] + ([(0.0, hi - TWO_PI)] if hi > TWO_PI else [])
    total, end = 0.0, 0.0
    for lo, hi in sorted(parts):
        if hi > end:
            total += hi - max(lo, end)
            end = hi
    return min(total, TWO_PI)


def face_info(index: int, face, light: bool = False) -> FaceInfo:
    """``light``: without the area (0) and, for cylinders and tori, without the axial extent
    (``t0 = t1 = 0``; a cylinder's radius in ``r0``/``r1``) nor the analytic surface of a B-spline
    face: what the pocket finder reads, at a fraction of the cost (a render's window search)."""
    area = 0.0 if light else None  # computed when first read (``FaceInfo.area``)
    ad = BRepAdaptor_Surface(face)
    umin, umax, vmin, vmax = BRepTools.UVBounds_s(face)
    um, vm = (umin + umax) / 2, (vmin + vmax) / 2
    t = ad.GetType()
    converted, surface = False, None  # a B-spline face read as the analytic surface it lies on
    if t in (GeomAbs_BSplineSurface, GeomAbs_BezierSurface):
        if (surface := _flat_spline(face)) is not None:
            t = GeomAbs_Plane  # build123d's tapered extrude of a polygon makes its drafted walls so
        elif not light and (surface := _analytic(face)) is not None:
            ad = GeomAdaptor_Surface(surface)
            t, converted = ad.GetType(), True
    kind = {GeomAbs_Plane: "plane", GeomAbs_Cylinder: "cylinder", GeomAbs_Cone: "cone",
            GeomAbs_Torus: "torus"}.get(t, "other")
    try:
        mid, n = _normal_at(face, um, vm)
    except Exception:  # noqa: BLE001 - a degenerate point: keep the face as "other"
        return FaceInfo(index, face, "other", area, _xyz(ad.Value(um, vm)))
    fi = FaceInfo(index, face, kind, area, mid, n)
    fi.surface = surface
    if kind in ("cylinder", "cone", "torus"):
        gax = {"cylinder": ad.Cylinder, "cone": ad.Cone, "torus": ad.Torus}[kind]().Axis()
        raw = _xyz(gax.Direction())
        fi.axis = canonical_dir(raw)
        fi.origin = _xyz(gax.Location())
        # its UV range, unless a converted face's or one wider than a turn (a face OCCT merged across
        # the seam, its inner loop's curves a period on: its edges say)
        fi.span = (_angle_span(face, ad, kind) if converted or abs(umax - umin) > TWO_PI + 1e-7
                   else min(abs(umax - umin), TWO_PI))
        if light and kind != "cone":  # a cone's extent says its angle (a drafted pocket's corner)
            fi.r0 = fi.r1 = ad.Cylinder().Radius() if kind == "cylinder" else 0.0
        else:
            fi.t0, fi.r0, fi.t1, fi.r1 = _axial(face, fi.origin, fi.axis)
        w = sub(mid, fi.origin)
        radial = sub(w, mul(fi.axis, dot(w, fi.axis)))
        if kind == "torus":
            tor = ad.Torus()
            fi.minor, fi.major = tor.MinorRadius(), tor.MajorRadius()
            # the tube's centre-circle point nearest ``mid`` (the axis' location is the torus'
            # centre): concave (a fillet inside a corner) when the normal points towards it
            centre = add(fi.origin, mul(unit(radial), tor.MajorRadius()))
            fi.concave = dot(sub(mid, centre), n) < 0
        else:
            fi.concave = dot(radial, n) < 0
    elif t == GeomAbs_Sphere:  # kind "other"; concave: a spherical cavity (a hole may open into it)
        sph = ad.Sphere()
        fi.sphere = (_xyz(sph.Location()), sph.Radius())
        fi.concave = dot(sub(mid, fi.sphere[0]), n) < 0
    return fi


def faces_of(shape, light: bool = False) -> list[FaceInfo]:
    """Every face of ``shape`` with its neighbours (faces sharing an edge) and its edges, indexed so
    that two faces' shared edges are the common keys. Every face must have a
    surface: OCCT's surface queries crash the process on a mesh (``measure.is_mesh``, checked by
    ``features.features``)."""
    faces = [TopoDS.Face(f) for f in unique(shape, TopAbs_FACE)]
    index = _Map()
    for f in faces:
        index.Add(f)
    infos = [face_info(i, f, light) for i, f in enumerate(faces)]
    m = DataMap()
    TopExp.MapShapesAndAncestors_s(shape, TopAbs_EDGE, TopAbs_FACE, m)
    for i in range(1, m.Extent() + 1):
        owners = {index.FindIndex(f) - 1 for f in _faces_at(m.FindFromIndex(i))}
        owners.discard(-1)
        edge = m.FindKey(i)
        for a in owners:
            infos[a].neighbours |= owners - {a}
            infos[a].edges[i] = edge
    return infos


def _faces_at(faces) -> list:
    """The faces of an edge's list: its first and last when there are at most two (the manifold
    case), read directly; iterating OCP's list from Python costs ~0.3 ms an edge (3.3 s of 3.5 on
    a plate with 625 hexagonal holes)."""
    n = faces.Size()
    if n == 0:
        return []
    if n <= 2:
        return [faces.First(), faces.Last()]
    return list(faces)


def outer_edges(fi: FaceInfo) -> set:
    """The indices (keys of ``fi.edges``) of the edges of ``fi``'s outer wire; read once."""
    if fi.outer is None:
        wire = _Map()
        for e in unique(BRepTools.OuterWire_s(TopoDS.Face(fi.face)), TopAbs_EDGE):
            wire.Add(e)
        fi.outer = {k for k, e in fi.edges.items() if wire.Contains(e)}
    return fi.outer


def end_open(faces: list[FaceInfo], across: list[FaceInfo], outward) -> bool | None:
    """Is the region just beyond an end of a hole's or pocket's walls (``faces``) open, read from
    the face across that end instead of a point probe: one plane square to ``outward`` (the
    direction out of the walls there) in which the end's edges are an inner wire, its normal
    pointing out (a mouth in a plate's face: open), or the whole outer wire, its normal pointing
    back in (a floor: closed). None for anything else (a drill point, a tilted or curved face, a
    chamfer round the mouth, a floor in several faces): probe then."""
    if len(across) != 1:
        return None
    fl = across[0]
    facing = 0.0 if fl.kind != "plane" or fl.normal is None else dot(fl.normal, outward)
    if abs(abs(facing) - 1) > 1e-9:
        return None
    shared = {k for fi in faces for k in fi.edges if k in fl.edges}
    outer = outer_edges(fl)
    if shared == outer and facing < 0:
        return False
    if shared and not shared & outer and facing > 0:
        return True
    return None


def edge_count(face) -> int:
    n = 0
    ex = TopExp_Explorer(face, TopAbs_EDGE)
    while ex.More():
        n += 1
        ex.Next()
    return n

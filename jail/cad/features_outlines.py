"""Recognise freeform pockets and windows: walls all round a void, one of them a free curve's extrusion.

The pocket finder (``features_pockets``) walks walls that are planes and arcs, the oval finder
(``features_ovals``) reads an ellipse's; a cut drawn with a spline (a recess for a hand-shaped
part, a moulded grip, a letter, a card's suit) has neither, so it was not read. Here a wall is a
face along one direction ``d``: a plane parallel to it, a cylinder round it, or a surface extruded
along it from any curve (a spline, a Bezier, an offset curve: OCCT's surface of linear extrusion,
or a B-spline surface that is one, as STEP files written all in NURBS have it, :func:`_extruded`).
From each extruded face no other finder took, the walls are walked across their straight edges
along ``d`` (each wall has two; a closed spline's one face has a seam) until the walk comes back,
each face walked once: that loop is a pocket when the void is inside the outline it draws (every
wall's material side faces out of it, :func:`_void_inside`); round material (a spline boss, the
outside of a part) it is none. A loop drawn round a circle (a NURBS file's round hole: the hole
finder reads cylinders) is a plain hole instead.

Its ends, past a rounding or chamfer round its floor or mouth (:func:`_past_breaks`), are read
from the faces across them where they meet the walls (:func:`_rim_open`: a mouth faces on, a
floor back), else as a hole's (``features_find.open_beyond``: probed just beyond, inside the
outline): both open = through, one = blind, entered from the open end; neither = a closed cavity,
not listed. It is a pocket of shape "freeform": ``sides`` its walls (1 for a closed spline),
``curved`` those that are not planes, ``width`` the outline's narrowest extent across (sampled
every degree, then every hundredth round the narrowest; across the part's X, Y or Z when at most
5 % wider), ``length`` its extent square to that along ``direction``, ``center`` the middle of
those extents (else, for a crescent whose middle is not inside, a point just inside a wall) where
that centre line meets the surface it opens onto, ``depth`` from there to the other end, and
``island`` what stands on a blind one's flat floor, as a pocket's (``features_pockets._islands``:
a letter O's counter).

A drafted freeform cut (build123d's tapered extrude of a spline or an ellipse) has ruled B-spline
walls (degree 1 one way, two rows of poles) that lean off ``d`` by one angle (:func:`_lean`: its
far outline the near one's offset by one distance, else its normals at ``LEAN_GRID`` points within
``DRAFT_SAME``), ``d`` being the normal of a plane next to one (the floor, or the face it opens
onto). Its walls are walked across straight edges within ``DRAFT_MAX`` of ``d``; it reads like the
others, ``draft`` the median wall's to 0.01 degree (positive when it narrows deeper in, negative
for an undercut), its sizes the outline's at the entry; through, it is entered from its wider end.
Not read: a wall split along its length.

Blocks nothing (a computation). OCP is imported at the top: jailed processes and tests only.
"""
from __future__ import annotations

import math

import numpy as np
from OCP.BRep import BRep_Tool
from OCP.BRepAdaptor import BRepAdaptor_Curve, BRepAdaptor_Curve2d, BRepAdaptor_Surface
from OCP.BRepBndLib import BRepBndLib
from OCP.BRepTools import BRepTools
from OCP.Bnd import Bnd_Box
from OCP.GCPnts import GCPnts_QuasiUniformDeflection
from OCP.GeomAbs import GeomAbs_BSplineSurface, GeomAbs_Line, GeomAbs_SurfaceOfExtrusion
from OCP.TopoDS import TopoDS

from jail.cad.features_faces import (DRAFT_MAX, FaceInfo, _normal_at, _xyz, add, canonical_dir, cross, dot, edge_points,
                                     inside_outline, mul, norm, sub, unit)
from jail.cad.features_find import axis_crossing, entry_first, open_beyond, part_scale
from jail.cad.features_material import Material
from jail.cad.features_pockets import _islands, _line_dir

MAX_WALLS = 4096  # a gear's outline of 100 teeth has 200 flanks: walked once each, it costs ~1 ms a wall
ROUND = 1e-6  # an outline whose points lie this close (times its width) to one circle is round
ANGLES = 180  # the outline's extents are compared across this many directions (every degree)
FLAT = 2e-5  # directions this close to the narrowest width (times the outline's length) are alike
SQUARE_SLACK = 1.05  # the extents across the part's axes are read when at most this much wider than the narrowest
SAMPLES = 256  # points along an edge of the outline where the deflection sampler fails
RIM_FACING = 0.25  # a face across an end faces on or back this much (cosine) to say open or closed
DEFLECTION = 3e-5  # an outline's chords stay this close to its curves, times its size (1.2 um on 40 mm)
DRAFT_SAME = math.radians(0.5)  # a drafted wall's normals lean alike to this (a slice of OCCT's tapered wall: 0.27 deg)
LEAN_GRID = (5, 3)  # normals read over a drafted wall's UV box, each way
COS_LEAN = math.cos(DRAFT_MAX)  # a straight edge this close to the axis runs along a drafted wall
OFFSET_SAME = math.radians(0.02)  # a drafted wall's outlines read one angle to this (OCCT's: 1e-4 deg)
OFFSET_SAMPLES = 20  # points along each low edge (the two at each end left out) to read it at
OFFSET_DEFLECTION = 1e-5  # mm: the high outline's chords stay this close to its curves


def _extruded(fi: FaceInfo) -> tuple | None:
    """The canonical direction a face of kind "other" is extruded along, when it is a surface of
    linear extrusion (of any curve), or a B-spline surface that is one (of degree 1 with two rows
    of poles one way, each pole of one row the same step from its twin in the other, their
    weights alike: how other CAD systems' STEP files, and OCCT's NURBS conversion, write one)."""
    if fi.kind != "other":
        return None
    ad = BRepAdaptor_Surface(TopoDS.Face(fi.face))
    if ad.GetType() == GeomAbs_SurfaceOfExtrusion:
        return canonical_dir(_xyz(ad.Direction()))
    if ad.GetType() != GeomAbs_BSplineSurface:
        return None
    bs = ad.BSpline()  # in the face's place
    if bs.VDegree() == 1 and bs.NbVPoles() == 2:
        pairs = [((i, 1), (i, 2)) for i in range(1, bs.NbUPoles() + 1)]
    elif bs.UDegree() == 1 and bs.NbUPoles() == 2:
        pairs = [((1, j), (2, j)) for j in range(1, bs.NbVPoles() + 1)]
    else:
        return None
    steps = [sub(_xyz(bs.Pole(*b)), _xyz(bs.Pole(*a))) for a, b in pairs]
    first = steps[0]
    size = norm(first)
    if size < 1e-9 or any(norm(sub(st, first)) > 1e-7 * size or abs(bs.Weight(*a) - bs.Weight(*b)) > 1e-12
                          for st, (a, b) in zip(steps, pairs)):
        return None
    return canonical_dir(unit(first))


def _ruled(fi: FaceInfo) -> bool:
    """Is ``fi`` a B-spline surface of degree 1 with two rows of poles one way (a ruled wall: a
    tapered extrude's, which leans)?"""
    if fi.kind != "other":
        return False
    ad = BRepAdaptor_Surface(TopoDS.Face(fi.face))
    if ad.GetType() != GeomAbs_BSplineSurface:
        return False
    bs = ad.BSpline()
    return (bs.VDegree() == 1 and bs.NbVPoles() == 2) or (bs.UDegree() == 1 and bs.NbUPoles() == 2)


def _lean(fi: FaceInfo, d) -> float | None:
    """The sine of the angle between ``fi``'s outward normal and the plane across ``d`` (signed:
    the normal's ``d`` part), when it is one angle all over the face, else None: a plane's; a
    ruled B-spline's from its end outlines when they say one angle (:func:`_outline_lean`: exact
    for a whole tapered wall); else, and for other faces (a cone), when the normals lean alike
    (within ``DRAFT_SAME``) at ``LEAN_GRID`` points over its UV box (a slice of a tapered wall:
    a cut through a thin wall). Read once per face and direction (a walk asks again)."""
    if fi.kind == "plane":
        return None if fi.normal is None else dot(fi.normal, d)
    if d not in fi.leans:
        fi.leans[d] = _read_lean(fi, d)
    return fi.leans[d]


def _read_lean(fi: FaceInfo, d) -> float | None:
    """:func:`_lean` of a face that is no plane."""
    if fi.kind == "other" and not _ruled(fi):
        return None
    angles = _normal_leans(fi, d)
    if angles is None:
        return None
    if fi.kind == "other" and (by_outline := _outline_lean(fi, d, sum(angles) > 0)) is not None:
        return by_outline
    if max(angles) - min(angles) > DRAFT_SAME:
        return None
    return math.sin(sum(angles) / len(angles))


def _normal_leans(fi: FaceInfo, d) -> list[float] | None:
    """The angles (radians) of ``fi``'s outward normal off the plane across ``d`` at ``LEAN_GRID``
    points over its UV box; None at a degenerate point."""
    face = TopoDS.Face(fi.face)
    u0, u1, v0, v1 = BRepTools.UVBounds_s(face)
    nu, nv = LEAN_GRID
    angles = []
    for i in range(nu):
        for j in range(nv):
            try:
                _, n = _normal_at(face, u0 + (u1 - u0) * (i + 0.5) / nu, v0 + (v1 - v0) * (j + 0.5) / nv)
            except Exception:  # noqa: BLE001 - a degenerate point: no draft read
                return None
            angles.append(math.asin(max(-1.0, min(1.0, dot(n, d)))))
    return angles


def _outline_lean(fi: FaceInfo, d, towards: bool) -> float | None:
    """A ruled wall's lean read from its two end outlines: how far each point inside its low end's
    edges lies, across ``d``, from its high end's edges, over the height between them. A drafted
    wall's high outline is its low one offset by one distance, so every point reads one angle
    (within ``OFFSET_SAME``); OCCT's tapered walls are ruled between the two with their rulings
    skewed, so their normals lean by up to 2.8 degrees more (a 10 degree taper of an ellipse), their
    outlines by 1e-4 degree; a slice of such a wall (a cut through a thin wall) is no offset of
    either. ``towards``: the normals lean towards +``d`` (the sign)."""
    low, high = _ends_edges(fi, d, True)
    if not low or not high:
        return None
    u = unit(cross(d, (1.0, 0.0, 0.0) if abs(d[0]) < 0.9 else (0.0, 1.0, 0.0)))
    frame = np.array([u, cross(d, u), d]).T
    hp = np.vstack([_curve_points(e, OFFSET_DEFLECTION) for _, e in high]) @ frame
    lp = np.array([p for _, e in low for p in edge_points(e, OFFSET_SAMPLES)[2:-2]]).reshape(-1, 3) @ frame
    if len(hp) < 2 or not len(lp):
        return None
    a, b = hp[:-1, :2], hp[1:, :2]
    ab = b - a
    ab2 = np.maximum((ab * ab).sum(axis=1), 1e-300)
    angles = []
    for x, y, t in lp:
        q = np.array([x, y])
        s = np.clip(((q - a) * ab).sum(axis=1) / ab2, 0.0, 1.0)
        k = int(np.linalg.norm(a + ab * s[:, None] - q, axis=1).argmin())
        height = abs(hp[k, 2] + (hp[k + 1, 2] - hp[k, 2]) * s[k] - t)
        if height <= 1e-9:
            return None
        angles.append(math.atan2(float(np.linalg.norm(a[k] + ab[k] * s[k] - q)), height))
    if max(angles) - min(angles) > OFFSET_SAME:
        return None
    lean = math.sin(sum(angles) / len(angles))
    return lean if towards else -lean


def _drafted(fi: FaceInfo, infos: list[FaceInfo]) -> tuple | None:
    """``(d, lean)`` for a ruled wall (:func:`_ruled`) that leans by one angle, at most
    ``DRAFT_MAX``, off the normal ``d`` (canonical) of a plane next to it (the floor, or the face
    the cut opens onto); ``lean`` as :func:`_lean` gives it."""
    if not _ruled(fi):
        return None
    for j in fi.neighbours:
        g = infos[j]
        if g.kind != "plane" or g.normal is None:
            continue
        d = canonical_dir(g.normal)
        lean = _lean(fi, d)
        if lean is not None and 1e-6 < abs(lean) <= math.sin(DRAFT_MAX):
            return d, lean
    return None


def _parallel(a, b) -> bool:
    return abs(abs(dot(a, b)) - 1) <= 1e-9


def _runs_along(e, d, drafted: bool) -> bool:
    """Does a straight edge's direction ``e`` run along ``d``: parallel to it, or for a drafted
    loop's walls within ``DRAFT_MAX`` of it (two drafted walls meet along a leaning line)?"""
    return e is not None and (_parallel(e, d) if not drafted else abs(dot(unit(e), d)) >= COS_LEAN)


def _wall(fi: FaceInfo, d, used: set, lean: float | None = None) -> bool:
    """Can ``fi`` be a wall along ``d``: a plane parallel to it, a cylinder round it, a curve's
    extrusion along it; with ``lean`` (a drafted loop's), any face leaning off ``d`` by that one
    angle (:func:`_lean`: a plane, a cone, a ruled B-spline)."""
    if fi.index in used or fi.normal is None:
        return False
    if lean is not None:
        mine = _lean(fi, d) if fi.kind in ("plane", "cone", "other") else None
        return mine is not None and abs(math.asin(mine) - math.asin(lean)) <= DRAFT_SAME
    if fi.kind == "plane":
        return abs(dot(fi.normal, d)) < 1e-6
    if fi.kind == "cylinder":
        return fi.axis is not None and _parallel(fi.axis, d)
    e = _extruded(fi)
    return e is not None and _parallel(e, d)


def _along(fi: FaceInfo, d, infos: list[FaceInfo], drafted: bool = False) -> list[int] | None:
    """The faces across ``fi``'s straight edges along ``d`` (:func:`_runs_along`), one per edge
    (``fi`` itself across a seam); None when one of them is no wall."""
    out = []
    for k, edge in fi.edges.items():
        if not _runs_along(_line_dir(edge), d, drafted):
            continue
        across = [j for j in fi.neighbours if k in infos[j].edges]
        out += across if across else [fi.index]
    return out


def _loop(start: FaceInfo, d, infos: list[FaceInfo], used: set,
          lean: float | None = None) -> tuple[list[FaceInfo], bool]:
    """The walls round a void along ``d`` from ``start``, in order, and whether they close, each
    joined to the next across one straight edge and to the one before across another (not closed:
    the walls walked before it broke off; a walk from any of them breaks off there too)."""
    loop, prev, cur = [start], None, start
    seen = {start.index}
    while len(loop) <= MAX_WALLS:
        sides = _along(cur, d, infos, lean is not None)
        if sides == [cur.index] and cur is start:  # a closed curve's one face, round its seam
            return loop, True
        if sides is None or len(sides) != 2 or not all(_wall(infos[j], d, used, lean) or j == start.index
                                                       for j in sides):
            return loop, False
        nxt = sides[1] if sides[0] == prev else sides[0]
        if nxt == start.index:
            return loop, len(loop) >= 2 or sides == [start.index, start.index]
        if nxt in seen:
            return loop, False
        prev, cur = cur.index, infos[nxt]
        loop.append(cur)
        seen.add(nxt)
    return loop, False


def _curve_points(edge, deflection: float) -> np.ndarray:
    """Points along an edge (n x 3), no chord further than ``deflection`` from the curve (a line:
    its ends; none for a degenerate edge)."""
    e = TopoDS.Edge(edge)
    if BRep_Tool.Degenerated_s(e):
        return np.zeros((0, 3))
    c = BRepAdaptor_Curve(e)
    if c.GetType() == GeomAbs_Line:
        return np.array([_xyz(c.Value(c.FirstParameter())), _xyz(c.Value(c.LastParameter()))])
    q = GCPnts_QuasiUniformDeflection(c, deflection)
    if not q.IsDone() or q.NbPoints() < 2:
        return np.array(edge_points(edge, SAMPLES)).reshape(-1, 3)
    return np.array([(p.X(), p.Y(), p.Z()) for p in (q.Value(i) for i in range(1, q.NbPoints() + 1))])


def _ends_edges(fi: FaceInfo, d, drafted: bool = False) -> tuple[list, list]:
    """A wall's edges across ``d`` at its low end and at its high end, as ``(key, edge)``: each by
    the mean of its points along ``d``, below or above the middle of the wall's cross edges (those
    that do not run along ``d``, :func:`_runs_along`)."""
    cross_edges = [(k, e) for k, e in fi.edges.items() if not _runs_along(_line_dir(e), d, drafted)]
    pts = {k: edge_points(e) for k, e in cross_edges}
    ts = [dot(p, d) for ps in pts.values() for p in ps]
    halves: tuple[list, list] = ([], [])
    if not ts:
        return halves
    mid = (min(ts) + max(ts)) / 2
    for k, e in cross_edges:
        if pts[k]:
            halves[sum(dot(p, d) for p in pts[k]) / len(pts[k]) > mid].append((k, e))
    return halves


def _section(loop: list[FaceInfo], d, u, v, end: int = 0, drafted: bool = False) -> np.ndarray:
    """The outline the walls draw, as 2-D segments (m x 4: x0, y0, x1, y1 in ``x u + y v``): each
    wall's edges across ``d`` at its low end (``end`` 1: its high end; a straight extrusion's edges
    at both ends are the same outline, a drafted one's differ), each within ``DEFLECTION`` of the
    loop's size of its curve."""
    box = Bnd_Box()
    for fi in loop:
        BRepBndLib.Add_s(fi.face, box)
    if box.IsVoid():
        return np.zeros((0, 4))
    lo, hi = box.CornerMin(), box.CornerMax()
    size = max(hi.X() - lo.X(), hi.Y() - lo.Y(), hi.Z() - lo.Z())
    frame = np.array([u, v]).T  # 3-D -> 2-D
    segs = []
    for fi in loop:
        for _, e in _ends_edges(fi, d, drafted)[end]:
            ps = _curve_points(e, max(DEFLECTION * size, 1e-7))
            if len(ps):
                flat = ps @ frame
                segs.append(np.hstack([flat[:-1], flat[1:]]))
    return np.vstack(segs) if segs else np.zeros((0, 4))


def _void_inside(loop: list[FaceInfo], d, u, v, segs, step: float, drafted: bool = False) -> tuple | None:
    """A point of the void just off the first curved wall, as 2-D (x, y), when every wall's void side
    (its normal, out of the material) lies inside the outline; else None (material inside: a boss).
    Drafted: from each wall's edge on the outline's level (its middle is off the outline there)."""
    first = None
    for fi in loop:
        at, n = (fi.mid, fi.normal) if not drafted else _on_low_edge(fi, d)
        if n is None:
            return None
        n = sub(n, mul(d, dot(n, d)))
        if norm(n) < 1e-9:
            return None
        p = add(at, mul(unit(n), step))
        xy = (dot(p, u), dot(p, v))
        if not inside_outline(segs, *xy):
            return None
        if first is None and fi.kind != "plane":
            first = xy
    return first


def _on_low_edge(fi: FaceInfo, d) -> tuple:
    """A point in the middle of a wall's first edge at its low end and its outward normal there
    (``(point, None)`` when it has none)."""
    low = _ends_edges(fi, d, True)[0]
    if not low:
        return fi.mid, None
    try:
        edge = TopoDS.Edge(low[0][1])
        c2 = BRepAdaptor_Curve2d(edge, TopoDS.Face(fi.face))
        uv = c2.Value((c2.FirstParameter() + c2.LastParameter()) / 2)
        return _normal_at(fi.face, uv.X(), uv.Y())
    except Exception:  # noqa: BLE001 - no curve on the face
        return fi.mid, None


def _extents(segs: np.ndarray, u, v, tol: float) -> tuple[float, float, tuple, tuple]:
    """``(width, length, direction, middle)``: the outline's narrowest extent across (of ``ANGLES``
    directions; across the part's X, Y or Z axis instead when that is at most ``SQUARE_SLACK``
    wider: what a bounding box says), its extent square to that along ``direction`` (3-D,
    canonical), and the middle of both extents (2-D)."""
    pts = np.vstack([segs[:, :2], segs[:, 2:]])
    ang = np.arange(ANGLES) * math.pi / ANGLES
    n = np.stack([np.cos(ang), np.sin(ang)], axis=1)
    proj = pts @ n.T
    widths = proj.max(axis=0) - proj.min(axis=0)
    i = int(widths.argmin())
    # finer round the narrowest, every hundredth of a degree, and the middle of the directions
    # within ``FLAT`` of it: a smooth outline's width hardly changes near its narrowest (an
    # oblong's: 0.001 mm over 0.2 degrees), a corner's grows at once
    fine = ang[i] + np.linspace(-1, 1, 201) * math.pi / ANGLES
    nf = np.stack([np.cos(fine), np.sin(fine)], axis=1)
    pf = pts @ nf.T
    wf = pf.max(axis=0) - pf.min(axis=0)
    near = np.flatnonzero(wf <= wf.min() + FLAT * float(widths.max()))
    k = int(near[len(near) // 2]) if near[-1] - near[0] + 1 == len(near) else int(wf.argmin())
    n, proj, widths = np.vstack([n, nf[k:k + 1]]), np.hstack([proj, pf[:, k:k + 1]]), np.append(widths, wf[k])
    i = ANGLES
    square = [j for j in range(ANGLES) if max(abs(c) for c in add(mul(u, n[j, 0]), mul(v, n[j, 1]))) > 1 - 1e-9]
    if square:
        j = min(square, key=lambda j: widths[j])
        if widths[j] <= widths[i] * SQUARE_SLACK + tol:
            i = j
    a2 = (float(-n[i, 1]), float(n[i, 0]))
    lproj = pts @ np.array(a2)
    mid_w = (proj[:, i].max() + proj[:, i].min()) / 2
    mid_l = (lproj.max() + lproj.min()) / 2
    middle = (float(mid_w * n[i, 0] + mid_l * a2[0]), float(mid_w * n[i, 1] + mid_l * a2[1]))
    direction = canonical_dir(unit(add(mul(u, a2[0]), mul(v, a2[1]))))
    return float(widths[i]), float(lproj.max() - lproj.min()), direction, middle


def _past_breaks(infos: list[FaceInfo], loop: list[FaceInfo], d, lo: float, hi: float,
                 tol: float) -> tuple[float, float]:
    """The walls' extent along ``d`` (``lo``, ``hi``) carried past a rounding or chamfer round the
    floor or the mouth: a face next to the walls, not a plane across ``d`` (the floor, or the face
    the mouth opens onto), lying wholly beyond an end. A probe just beyond the walls of a floor
    rounded all round would be in the pocket still, and call it through; the depth runs from
    the surface the mouth opens onto to the floor."""
    mine = {fi.index for fi in loop}
    for j in {j for fi in loop for j in fi.neighbours} - mine:
        g = infos[j]
        if g.kind == "plane" and g.normal is not None and abs(abs(dot(g.normal, d)) - 1) < 1e-9:
            continue
        ts = [dot(p, d) for e in g.edges.values() for p in edge_points(e)]
        if not ts:
            continue
        if min(ts) < lo - tol and max(ts) <= lo + tol:
            lo = min(ts)
        if max(ts) > hi + tol and min(ts) >= hi - tol:
            hi = max(ts)
    return lo, hi


def _rims(infos: list[FaceInfo], walls: list[FaceInfo], d, drafted: bool = False) -> tuple[list, list]:
    """The walls' edges across ``d`` at each end, low and high (:func:`_ends_edges`), as
    ``(edge, face across)``, the face across another than a wall."""
    mine = {fi.index for fi in walls}
    rims: tuple[list, list] = ([], [])
    for fi in walls:
        for rim, half in zip(rims, _ends_edges(fi, d, drafted)):
            rim.extend((e, j) for k, e in half for j in fi.neighbours - mine if k in infos[j].edges)
    return rims


def _rim_open(infos: list[FaceInfo], rim: list, outward) -> bool | None:
    """Is the region beyond an end open, read from the faces across its edges (``rim``) where they
    meet the walls: each one's normal out of the material there faces on (``outward``: a mouth,
    open) or back into the pocket (a floor, closed), more than ``RIM_FACING``, all alike; else
    None (a rounding tangent to the walls, faces that disagree: probe then). Curved mouths and
    floors too (text cut into a dished face), where a probe asks OCCT's solid classifier: 67 ms a
    probe on build123d's maker coin."""
    said = set()
    for edge, j in rim:
        try:
            c2 = BRepAdaptor_Curve2d(TopoDS.Edge(edge), TopoDS.Face(infos[j].face))
            uv = c2.Value((c2.FirstParameter() + c2.LastParameter()) / 2)
            _, n = _normal_at(infos[j].face, uv.X(), uv.Y())
        except Exception:  # noqa: BLE001 - no curve on that face: probe
            return None
        facing = dot(n, outward)
        if abs(facing) < RIM_FACING:
            return None
        said.add(facing > 0)
    return said.pop() if len(said) == 1 else None


def read_ends(infos: list[FaceInfo], walls: list[FaceInfo], c, d, width: float, mat: Material,
              tol: float, drafted: bool = False, wide_lo: bool | None = None) -> dict | None:
    """``{center, axis, depth, through}`` of a pocket whose ``walls`` run along ``d`` round the
    centre line through ``c`` (a point of the void), ``width`` across; None for a closed cavity.
    Its ends past a rounding or chamfer (:func:`_past_breaks`) are read from the faces across
    them where they meet the walls (:func:`_rim_open`), else as a hole's
    (``features_find.open_beyond``: from the face across, else probed on the centre line just
    beyond): both open = through (entered from the low end when ``wide_lo``, from the high end
    when it is False, else as a hole with like ends), one = blind, entered from the open end. The
    entry is where the
    centre line meets the surface it opens onto (a curved or tilted one: not the walls' far tip),
    never past the far end; ``depth`` runs from there to the other end. ``floor``: None through, else
    ``(t_walls, t_floor, down)``, where the walls end, the floor past its rounding, and +1 when it
    is at the high end of ``d`` (``features_pockets._islands``' arguments); ``walls``: the walls'
    own extent along ``d``."""
    ts = [dot(p, d) for w in walls for e in w.edges.values() for p in edge_points(e)]
    wall_lo, wall_hi = min(ts), max(ts)
    lo, hi = _past_breaks(infos, walls, d, wall_lo, wall_hi, tol * 10)
    step = max(1e-4, 1e-3 * width)
    rims = _rims(infos, walls, d, drafted)
    open_lo, open_hi = (_rim_open(infos, rim, mul(d, sign)) for rim, sign in zip(rims, (-1.0, 1.0)))
    open_lo, open_hi = (
        said if said is not None else
        open_beyond(infos, walls, c, d, t, sign, lambda t=t, sign=sign: [add(c, mul(d, t + sign * step))], mat,
                    tol * 10)
        for said, t, sign in ((open_lo, lo, -1.0), (open_hi, hi, 1.0)))
    if not (open_lo or open_hi):
        return None
    through = open_lo and open_hi
    from_lo = (entry_first(d) if wide_lo is None else wide_lo) if through else open_lo
    t_in = axis_crossing(infos, [{"faces": walls}], c, d, lo if from_lo else hi, width / 2, tol * 10)[0]
    t_in = min(max(t_in, lo), hi)
    return {"center": add(c, mul(d, t_in)), "axis": mul(d, 1.0 if from_lo else -1.0),
            "depth": None if through else (hi - t_in if from_lo else t_in - lo), "through": through,
            "floor": None if through else ((wall_hi, hi, 1.0) if from_lo else (wall_lo, lo, -1.0)),
            "walls": wall_hi - wall_lo}


def _circle(segs: np.ndarray, width: float) -> tuple[tuple, float] | None:
    """``((x, y), diameter)`` when the outline is a circle (its points, which lie on its curves,
    within ``ROUND`` of the circle fitted to them by least squares), else None."""
    x, y = segs[:, 0], segs[:, 1]
    a, b, c = np.linalg.lstsq(np.stack([x, y, np.ones_like(x)], axis=1), x * x + y * y, rcond=None)[0]
    cx, cy = a / 2, b / 2
    r = math.sqrt(max(c + cx * cx + cy * cy, 0.0))
    if abs(np.hypot(x - cx, y - cy) - r).max() > ROUND * width:
        return None
    return (float(cx), float(cy)), 2 * r


def outlines(infos: list[FaceInfo], mat: Material, used: set) -> tuple[list[dict], list[dict]]:
    """Freeform pockets and windows (module docstring), and the round holes among them (a
    B-spline wall drawn round a circle: ``features_find.holes`` reads cylinders); their walls
    become ``used``. Returns ``(pockets, holes)``."""
    tol = 1e-6 * part_scale(infos) + 1e-6
    out: list[dict] = []
    holes: list[dict] = []
    walked: set = set()  # the walls of every walk (a letter's outside: from each of its faces, the same loop)
    for fi in infos:
        if fi.index in used or fi.index in walked:
            continue
        d, lean = _extruded(fi), None
        if d is None:
            d, lean = _drafted(fi, infos) or (None, None)
        if d is None or not _wall(fi, d, used, lean):
            continue
        drafted = lean is not None
        loop, closed = _loop(fi, d, infos, used, lean)
        walked.update(w.index for w in loop)
        if not closed:
            continue
        u = unit(cross(d, (1.0, 0.0, 0.0) if abs(d[0]) < 0.9 else (0.0, 1.0, 0.0)))
        v = cross(d, u)
        segs = _section(loop, d, u, v, 0, drafted)
        if len(segs) < 3:
            continue
        width, length, direction, middle = _extents(segs, u, v, tol * 10)
        if width <= tol * 10:
            continue
        near = _void_inside(loop, d, u, v, segs, 1e-3 * width, drafted)
        if near is None:
            continue
        circle = None if drafted else _circle(segs, width)  # a round hole whose wall is a B-spline (all NURBS)
        xy = circle[0] if circle else middle if inside_outline(segs, *middle) else near
        c = add(mul(u, xy[0]), mul(v, xy[1]))  # a point of the void's centre line, on the plane across d
        # drafted and through: entered from its wider end (the walls' normals lean towards it), as a hole
        ends = read_ends(infos, loop, c, d, width, mat, tol, drafted, None if lean is None else lean < 0)
        if ends is None:
            continue  # a closed cavity
        floor, walls = ends.pop("floor"), ends.pop("walls")
        draft = None
        if drafted:  # its outline changes along d: the entry's sizes, and its draft
            entry = 0 if dot(ends["axis"], d) > 0 else 1
            at_entry = _section(loop, d, u, v, entry, True)
            if len(at_entry) >= 3:
                width, length, direction, middle = _extents(at_entry, u, v, tol * 10)
                if inside_outline(at_entry, *middle):
                    t = dot(ends["center"], d)
                    ends["center"] = add(add(mul(u, middle[0]), mul(v, middle[1])), mul(d, t))
            # positive: the walls lean back towards the entry (it narrows deeper in); negative: an undercut
            leans = sorted(abs(x) for x in (_lean(w, d) for w in loop) if x is not None)
            lean_abs = leans[len(leans) // 2] if leans else abs(lean)  # the median wall's (approximations vary)
            # to 0.01 degree: OCCT's tapered walls are approximations (5.00011 for 5)
            draft = round(math.degrees(math.asin(lean_abs)), 2) * (-1.0 if lean * dot(ends["axis"], d) > 0 else 1.0)
        if circle:
            holes.append({**ends, "diameter": circle[1], "draft": None, "countersink": None, "counterbore": None,
                          "bores": [], "length": walls, "keyway": None, "flat": None, "partial": False})
        else:
            island = None if floor is None else _islands(infos, loop, d, *floor, direction, tol * 10)
            out.append({**ends, "width": width, "length": length, "direction": direction, "sides": len(loop),
                        "shape": "freeform", "corner_radius": None, "draft": draft,
                        "curved": sum(w.kind != "plane" for w in loop), "island": island, "sector": None})
        used.update(w.index for w in loop)
    return out, holes

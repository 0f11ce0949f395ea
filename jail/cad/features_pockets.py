"""Recognise pockets and windows: walls all round a void, along one direction.

A pocket's walls are planar faces parallel to one direction ``d`` (its axis), each meeting the
next at a corner, sharp or through a corner radius (a cylinder along ``d`` turning at most 120
degrees, tangent to both; a half-round end is not one). Walking from wall to wall across the
straight edges along ``d`` comes back to the first wall: that loop is the pocket when it turns
once round the void. Each corner turns the walk by the angle between the two walls' normals:
forward at a concave corner (the void in front of both walls), back at a convex one (an L's
inner corner); a pocket's turns add up to one whole turn forward, while the outside of a block or
of an L-shaped part adds up to one turn back. A rectangular window, a milled pocket with corner
radii, a hexagonal socket or nut trap, a square hole, the inside of a box, an L-shaped pocket.

Its ends, past a rounded or chamfered floor or mouth (:func:`_past_edge_breaks`), are read like a hole's
(``features_find.open_beyond``: from the face across, else probed
on its centre line and just inside a wall, a nut trap's floor having a hole): both open =
through (a window), one = blind, entered from the open end, ``center`` where its centre line meets
the surface it opens onto (a keyway in a shaft: the top of the shaft), ``depth`` from there to the
floor; neither = a closed cavity, not listed. ``width`` is the narrowest distance across (between
two opposite walls: across flats), ``length`` the extent square to that (across corners for a
polygon, the long side for a rectangle) along ``direction``; ``shape`` "rectangle" (four walls
at right angles, a square too), "regular" (every side and corner alike: a hexagon; its centre its
walls' middle, and an odd one's width from a flat to the opposite corner) or "other";
``corner_radius`` the largest corner's, or None. A pocket with a convex corner has shape "L" (six
walls at right angles) or "other", its width and length are its outline's extents, and its centre
is the outline's centroid (or, when that lies outside the outline, a point just inside a wall).

Drafted walls (a tapered cut, a moulded pocket) lean alike off ``d``, by at most ``DRAFT_MAX``:
``d`` is then a neighbouring plane's normal (the floor's, or the face it opens onto), corners are
compared as seen along ``d``, corner radii are cones, and the sizes are the entry's; ``draft`` is
their angle, negative when the pocket widens deeper in (an undercut). A drafted window (through) is
entered from its wider end, as a hole is.

Curved walls (cylinders along ``d``, at most half a turn each; :func:`_winds_round_void` checks the
loop, :func:`_curved_shape` reads it): a wheel's windows between its spokes are ring sectors
(shape "sector", with ``sector``), a D-shaped pocket's round end one curved side (``curved``
counts them). Not drafted.

Ribs lower than the walls may join them (a ribbed box's floor stiffeners): a wall with more than
two neighbours across edges along ``d`` keeps the two that run its whole height (:func:`_sides`).
Not read right: an egg crate's cells (crossing ribs) read as pockets whose walls are the ribs'
faces, with those faces' extents.

Not found: walls with no straight wall among them (an ellipse's: ``features_ovals``), walls split along their length, a
round pocket (a hole) or a slot (found as such first). Faces that another feature took
(``used``) are never walls.

Blocks nothing (a computation). OCP is imported at the top: jailed processes and tests only.
"""
from __future__ import annotations

import math

import numpy as np
from OCP.BRep import BRep_Tool
from OCP.BRepAdaptor import BRepAdaptor_Curve
from OCP.GeomAbs import GeomAbs_BezierCurve, GeomAbs_BSplineCurve, GeomAbs_Line
from OCP.TopoDS import TopoDS

from jail.cad.features_faces import (DRAFT_MAX, EDGE_SAMPLES, TWO_PI, TopAbs_VERTEX, FaceInfo, add, canonical_dir,
                                     cross, dot, edge_points, flat, middle_across, mul, norm, sub, unique, unit,
                                     void_normal)
from jail.cad.features_faces import inside_outline, outer_edges
from jail.cad.features_find import axis_crossing, entry_first, faces_across, open_beyond, part_scale
from jail.cad.features_material import Material

CORNER = TWO_PI / 3 + 1e-6  # a corner radius turns the wall by at most a triangle's 120 degrees
ARC_MAX = 1.02 * math.pi  # a curved wall (a wheel's window's rim, a D's round end) turns by half a turn at most
MAX_WALLS = 64
SECTOR_RADIAL = math.cos(math.radians(45))  # a ring sector's side is at most this far off the radius at its middle
DRAFTED_EDGE = math.cos(2 * DRAFT_MAX)  # a drafted pocket's corner edge is this close to its axis
_SIN_DRAFT = math.sin(DRAFT_MAX)


def _pt(p) -> tuple:
    return (p.X(), p.Y(), p.Z())


def _is_line(edge) -> bool:
    return BRepAdaptor_Curve(TopoDS.Edge(edge)).GetType() == GeomAbs_Line


def _line_dir(edge) -> tuple | None:
    """The unit direction of a straight edge (a line, or a B-spline whose quarter points lie on its
    chord: the corners of build123d's tapered extrude), else None."""
    c = BRepAdaptor_Curve(TopoDS.Edge(edge))
    if c.GetType() == GeomAbs_Line:
        d = c.Line().Direction()
        return (d.X(), d.Y(), d.Z())
    if c.GetType() not in (GeomAbs_BSplineCurve, GeomAbs_BezierCurve):
        return None
    u0, u1 = c.FirstParameter(), c.LastParameter()
    a, b = (_pt(c.Value(u)) for u in (u0, u1))
    chord = sub(b, a)
    n = norm(chord)
    if n < 1e-9:
        return None
    d = mul(chord, 1.0 / n)
    for f in (0.25, 0.5, 0.75):
        w = sub(_pt(c.Value(u0 + f * (u1 - u0))), a)
        if norm(sub(w, mul(d, dot(w, d)))) > 1e-6 * max(1.0, n):
            return None
    return d


def _wall(fi: FaceInfo, d, used: set, tilt: float = 0.0) -> bool:
    """Can ``fi`` be a wall along ``d``: a plane parallel to it, or a corner radius along it (a
    cylinder); drafted (``tilt``: the sine of the draft, signed as its walls' normals' ``d`` part),
    a plane whose normal has that ``d`` part, or a cone along ``d`` that opens at that angle."""
    if fi.index in used:
        return False
    if fi.kind == "plane":
        return fi.normal is not None and abs(dot(fi.normal, d) - tilt) < 1e-6
    if fi.kind not in ("cylinder", "cone") or fi.concave is None or abs(abs(dot(fi.axis, d)) - 1) > 1e-9:
        return False
    if not tilt:
        return fi.kind == "cylinder" and fi.span <= ARC_MAX
    if fi.span > CORNER:
        return False
    return fi.kind == "cone" and abs(_half_angle(fi) - math.asin(abs(tilt))) < 1e-5


def _half_angle(fi: FaceInfo) -> float:
    return math.atan2(abs(fi.r1 - fi.r0), max(abs(fi.t1 - fi.t0), 1e-12))


def _corner(a: FaceInfo, b: FaceInfo) -> int:
    """How two walls meet: 1 concave (the void in front of both: a pocket's inside corner), -1
    convex (behind both), 0 neither (one plane split in two). A corner radius is its own kind."""
    if a.kind == "plane" and b.kind == "plane":
        fa, fb = dot(sub(b.mid, a.mid), a.normal), dot(sub(a.mid, b.mid), b.normal)
        return 1 if fa > 1e-9 and fb > 1e-9 else -1 if fa < -1e-9 and fb < -1e-9 else 0
    r = a if a.kind != "plane" else b  # a corner radius, tangent to its plane
    return 1 if r.concave else -1


def _concave(a: FaceInfo, b: FaceInfo) -> bool:
    """Do two walls meet with the void in front of both (a pocket's inside corner)?"""
    return _corner(a, b) == 1


def _turns(loop: list[FaceInfo], d) -> list[tuple[int, float]]:
    """Each corner of the closed ``loop`` between two planar walls, in order: its kind (1 concave,
    -1 convex; a corner radius between them says) and the angle between their normals (as seen
    along ``d``)."""
    out = []
    planes = [i for i, fi in enumerate(loop) if fi.kind == "plane"]
    for i, j in zip(planes, planes[1:] + planes[:1]):
        a, b = loop[i], loop[j]
        between = loop[i + 1:j] if j > i else loop[i + 1:] + loop[:j]
        kinds = {_corner(a, b)} if not between else {1 if r.concave else -1 for r in between}
        kind = kinds.pop() if len(kinds) == 1 else 0
        out.append((kind, math.acos(max(-1.0, min(1.0, dot(flat(a.normal, d), flat(b.normal, d)))))))
    return out


def _round_the_void(loop: list[FaceInfo], d) -> bool:
    """Does the closed ``loop`` turn once forward round a void (a pocket), not back round material
    (the outside of a block, or of an L-shaped part)?"""
    turns = _turns(loop, d)
    return all(k for k, _ in turns) and abs(sum(k * a for k, a in turns) - TWO_PI) < 1e-6


def _plain(loop: list[FaceInfo], d) -> bool:
    """Is the closed ``loop`` a pocket of straight walls, at least three, its curved walls corner
    radii only (none turning more than ``CORNER``), turning once round a void?"""
    return (sum(fi.kind == "plane" for fi in loop) >= 3 and all(fi.kind == "plane" or fi.span <= CORNER for fi in loop)
            and _round_the_void(loop, d))


def _joint(a: FaceInfo, b: FaceInfo) -> tuple | None:
    """A point halfway along the straight edge two walls share."""
    for k in a.edges.keys() & b.edges.keys():
        if _line_dir(a.edges[k]) is not None:
            pts = edge_points(a.edges[k])
            return pts[len(pts) // 2] if pts else None
    return None


def _flat_part(p, d) -> tuple:
    """``p`` without its ``d`` part (a point on the plane across ``d`` through the origin)."""
    return sub(p, mul(d, dot(p, d)))


def _turn(a, b, d) -> float:
    """The signed angle from ``a`` to ``b`` round ``d``."""
    return math.atan2(dot(cross(a, b), d), dot(a, b))


def _winds_round_void(loop: list[FaceInfo], d) -> bool:
    """Does the closed ``loop``, curved walls and all (a wheel's window: two spokes' sides, the rim's
    arc and the hub's), go once round a void? Its walls' normals into the void turn by one whole
    turn along it (within each curved wall and at each joint), and the void lies on the side of
    the walk that its winding says is inside (the outside of a part has the void beyond it)."""
    n = len(loop)
    joints = [_joint(loop[i], loop[(i + 1) % n]) for i in range(n)]
    if None in joints:
        return False
    u = unit(cross(d, (1.0, 0.0, 0.0) if abs(d[0]) < 0.9 else (0.0, 1.0, 0.0)))
    v = cross(d, u)
    total, ring, void_left = 0.0, [], None
    for i, fi in enumerate(loop):
        p_in, p_out = joints[i - 1], joints[i]
        n_in, n_out = void_normal(fi, p_in, d), void_normal(fi, p_out, d)
        if fi.kind != "plane":  # through its middle: half a turn (a D's end) has no sign of its own
            n_mid = void_normal(fi, fi.mid, d)
            total += _turn(n_in, n_mid, d) + _turn(n_mid, n_out, d)
        total += _turn(n_out, void_normal(loop[(i + 1) % n], p_out, d), d)
        ring += [p_in] if fi.kind == "plane" else [p_in, fi.mid]
        if void_left is None and fi.kind == "plane":
            void_left = dot(cross(d, sub(p_out, p_in)), n_in) > 0
    if void_left is None or abs(abs(total) - TWO_PI) > 1e-3:
        return False
    xy = [(dot(q, u), dot(q, v)) for q in ring]
    area = sum(x0 * y1 - x1 * y0 for (x0, y0), (x1, y1) in zip(xy, xy[1:] + xy[:1]))
    return (area > 0) == void_left


def _sides(fi: FaceInfo, d, infos, used: set, tilt: float = 0.0) -> list[int] | None:
    """The walls next to ``fi`` across its straight edges along ``d`` (drafted: close to it); None
    unless there are two, or, of more, two whose edges with ``fi`` run its whole extent along ``d``:
    the pocket's corners, where ribs lower than the walls join it along shorter edges (a ribbed
    box's floor stiffeners). A rib flush with a corner, hiding part of the corner's edge, still
    stops the reading; an egg crate's cell (between crossing ribs) reads with its ribs' faces'
    extents (a known gap)."""
    out = []
    for j in fi.neighbours:
        g = infos[j]
        if not _wall(g, d, used, tilt):
            continue
        for k in fi.edges.keys() & g.edges.keys():
            e = _line_dir(fi.edges[k])
            if e is None:
                continue
            along = abs(dot(e, d))
            if (along >= DRAFTED_EDGE if tilt else abs(along - 1) < 1e-9) and _corner(fi, g):
                out.append((j, k))
                break
    if 2 < len(out) <= RIBS_MAX:  # the two longest, if they run the face's whole extent along d
        spans = {}
        for _, k in out:
            ends = edge_points(fi.edges[k], 1)
            spans[k] = abs(dot(sub(ends[1], ends[0]), d)) if len(ends) == 2 else 0.0
        longest = max(spans.values())
        out = [(j, k) for j, k in out if spans[k] >= longest * (1 - 1e-9)]
        if len(out) != 2 or not all(_runs_whole(fi.edges[k], fi, d) for _, k in out):
            return None
    return [j for j, _ in out] if len(out) == 2 else None


RIBS_MAX = 16  # a wall with more neighbours along the axis than this is no ribbed pocket's


def _runs_whole(edge, fi: FaceInfo, d) -> bool:
    """Does ``edge`` of ``fi`` run the face's whole extent along ``d``? The face's extent is read
    once per direction (``FaceInfo.spread``)."""
    key = tuple(round(c, 12) for c in d)
    if key not in fi.spread:
        if "outline" not in fi.spread:  # its edges' ends, and points along each curved one
            fi.spread["outline"] = [p for e in fi.edges.values()
                                    for p in edge_points(e, 1 if _is_line(e) else EDGE_SAMPLES)]
        ts = [dot(p, d) for p in fi.spread["outline"]]
        fi.spread[key] = (min(ts), max(ts)) if ts else None
    te = [dot(p, d) for p in edge_points(edge, 1)]
    if fi.spread[key] is None or len(te) != 2:
        return False
    lo, hi = fi.spread[key]
    tol = 1e-6 * max(1.0, abs(lo), abs(hi))
    return min(te) <= lo + tol and max(te) >= hi - tol


def _loop(start: FaceInfo, d, infos, used: set) -> list[FaceInfo] | None:
    """The walls round a pocket along ``d``, in order from ``start``; None unless they close. Drafted
    when ``start`` leans off ``d``: every wall then leans alike."""
    tilt = dot(start.normal, d)
    tilt = tilt if abs(tilt) >= 1e-6 else 0.0
    loop, prev, cur = [start], None, start
    while len(loop) <= MAX_WALLS:
        sides = _sides(cur, d, infos, used, tilt)
        if sides is None:
            return None
        nxt = sides[1] if sides[0] == prev else sides[0]
        if nxt == start.index:
            return loop if _plain(loop, d) or (not tilt and _winds_round_void(loop, d)) else None
        if any(fi.index == nxt for fi in loop):
            return None
        prev, cur = cur.index, infos[nxt]
        loop.append(cur)
    return None


def _directions(fi: FaceInfo, infos, used: set) -> list:
    """Candidate pocket axes at a planar wall: its straight edges shared with a possible wall."""
    out = []
    for j in fi.neighbours:
        for k in fi.edges.keys() & infos[j].edges.keys():
            e = _line_dir(fi.edges[k])
            if e is not None and _wall(fi, e, used) and _wall(infos[j], e, used) and _concave(fi, infos[j]):
                e = canonical_dir(unit(e))
                if not any(abs(abs(dot(e, x)) - 1) < 1e-9 for x in out):
                    out.append(e)
    for j in fi.neighbours:  # drafted walls: the axis is the floor's (or the face it opens onto)
        h = infos[j]
        if h.kind == "plane" and h.normal is not None and 1e-6 <= abs(dot(fi.normal, h.normal)) <= _SIN_DRAFT:
            e = canonical_dir(h.normal)
            if not any(abs(abs(dot(e, x)) - 1) < 1e-9 for x in out):
                out.append(e)
    return out


def _points(loop: list[FaceInfo]) -> list[tuple]:
    out = []
    for fi in loop:
        for vx in unique(fi.face, TopAbs_VERTEX):
            p = BRep_Tool.Pnt_s(TopoDS.Vertex(vx))
            out.append((p.X(), p.Y(), p.Z()))
    return out


def _extent(pts, n) -> tuple[float, float]:
    ts = [dot(p, n) for p in pts]
    return min(ts), max(ts)


def _outline(loop: list[FaceInfo], d, at: float | None = None) -> tuple[tuple, tuple, list] | None:
    """``(u, v, corners)``: the outline the planar walls of ``loop`` bound (their planes' corners, a
    corner radius taken as sharp) where they cross the plane across ``d`` at ``at`` (None: through each
    wall's middle; the same outline unless drafted), as 2-D points ``x u + y v`` of the parallel plane
    through the origin; None when two walls in a row are parallel."""
    u = unit(cross(d, (1.0, 0.0, 0.0) if abs(d[0]) < 0.9 else (0.0, 1.0, 0.0)))
    v = cross(d, u)
    lines = []
    for fi in (w for w in loop if w.kind == "plane"):
        n = flat(fi.normal, d)
        # the wall's plane n.x = n.mid, with x.d = at: (flat n).x = (n.mid - (n.d) at) / |n without d|
        c = dot(fi.mid, n) if at is None else (
            (dot(fi.mid, fi.normal) - dot(fi.normal, d) * at) / norm(sub(fi.normal, mul(d, dot(fi.normal, d)))))
        lines.append(((dot(n, u), dot(n, v)), c))
    poly = []
    for (n1, c1), (n2, c2) in zip(lines, lines[1:] + lines[:1]):
        det = n1[0] * n2[1] - n1[1] * n2[0]
        if abs(det) < 1e-9:
            return None
        poly.append(((c1 * n2[1] - c2 * n1[1]) / det, (n1[0] * c2 - n2[0] * c1) / det))
    return u, v, poly


def _centroid(loop: list[FaceInfo], d, at: float | None = None) -> tuple | None:
    """The centroid of the outline (:func:`_outline`) in the plane across ``d`` through the origin;
    None when it lies outside the outline (a U) or the outline has no area."""
    got = _outline(loop, d, at)
    if got is None:
        return None
    u, v, poly = got
    a2 = cx = cy = 0.0
    for (x0, y0), (x1, y1) in zip(poly, poly[1:] + poly[:1]):
        k = x0 * y1 - x1 * y0
        a2, cx, cy = a2 + k, cx + (x0 + x1) * k, cy + (y0 + y1) * k
    if abs(a2) < 1e-12:
        return None
    cx, cy = cx / (3 * a2), cy / (3 * a2)
    segs = np.array([(x0, y0, x1, y1) for (x0, y0), (x1, y1) in zip(poly, poly[1:] + poly[:1])])
    return add(mul(u, cx), mul(v, cy)) if inside_outline(segs, cx, cy) else None


def _shape(loop: list[FaceInfo], d, pts, tol: float, at: float | None = None) -> dict:
    """Width (narrowest across), length (square to it), their direction, the outline's centre
    (a point of the centre line), regularity and corner radius; ``convex`` (no convex corner),
    ``draft`` (degrees, or None). ``at``: the outline where the walls cross the plane across ``d``
    there (a drafted pocket's entry; from the walls' corners on it, when at least three are), else
    the outline of all the walls' corners."""
    if at is not None:
        on = [p for p in pts if abs(dot(p, d) - at) <= tol * 10]
        pts = on if len(on) >= 3 else pts
    walls = [fi for fi in loop if fi.kind == "plane"]
    normals = [flat(fi.normal, d) for fi in walls]  # as seen along d (a drafted wall leans)
    across = [(_extent(pts, n), n) for n in normals]
    narrow = min(hi - lo for (lo, hi), _ in across)
    # of the narrowest (a regular polygon: every wall), the one whose length runs most along X, Y, Z
    (w_lo, w_hi), n_w = max((x for x in across if x[0][1] - x[0][0] <= narrow + tol),
                            key=lambda x: tuple(round(abs(c), 9) for c in unit(cross(d, x[1]))))
    along = canonical_dir(unit(cross(d, n_w)))
    l_lo, l_hi = _extent(pts, along)
    centre = add(mul(n_w, (w_lo + w_hi) / 2), mul(along, (l_lo + l_hi) / 2))
    # a point of the centre line: the outline's centre in the plane across d (its d part is set later)
    centre = sub(centre, mul(d, dot(centre, d)))
    # a regular polygon's centre: its walls' middle (an odd one's extents are not centred on it)
    hub = middle_across([fi.mid for fi in walls], d)
    apothems = [dot(sub(hub, fi.mid), n) for fi, n in zip(walls, normals)]
    turns = []
    for a, b in zip(normals, normals[1:] + normals[:1]):
        turns.append(math.atan2(dot(cross(a, b), d), dot(a, b)))
    n = len(walls)
    corners = _turns(loop, d)
    convex = all(k == 1 for k, _ in corners)
    if not convex:
        square = all(abs(a - math.pi / 2) <= 1e-6 for _, a in corners)
        shape = "L" if n == 6 and square and sum(k == -1 for k, _ in corners) == 1 else "other"
        centre = _centroid(loop, d, at)
        if centre is None:  # a point just inside the first wall, on the centre line's plane
            centre = add(walls[0].mid, mul(normals[0], 1e-3 * (w_hi - w_lo)))
            centre = sub(centre, mul(d, dot(centre, d)))
    elif n == 4 and all(abs(abs(t) - math.pi / 2) <= 1e-6 for t in turns):
        shape = "rectangle"
    elif max(apothems) - min(apothems) <= tol and all(abs(abs(t) - TWO_PI / n) <= 1e-6 for t in turns):
        shape, centre = "regular", hub
    else:
        shape = "other"
    radii = [_radius_at(fi, d, at) for fi in loop if fi.kind != "plane"]
    tilt = abs(dot(walls[0].normal, d))
    return {"width": w_hi - w_lo, "length": l_hi - l_lo, "direction": along, "centre": centre, "sides": n,
            "shape": shape, "corner_radius": max(radii) if radii else None, "convex": convex,
            "draft": math.degrees(math.asin(min(tilt, 1.0))) if tilt >= 1e-6 else None}


def _curved_shape(loop: list[FaceInfo], d, tol: float) -> dict:
    """:func:`_shape` for an outline with curved walls (not drafted). Corner radii are the curved
    walls smoothly between two others (tangent at both joints), turning by at most ``CORNER``,
    whose radius is the smallest's; the other curved walls are sides (``curved`` counts them).
    A ring sector (a wheel's window between two spokes: two planes round one axis, a concave arc
    round it outside, a convex one inside or none) has shape
    "sector" and ``sector`` ``{center, inner_radius, outer_radius, angle}`` (``center`` on that
    axis; inner 0 for a pie slice; ``angle`` between the sides, which may stand off the axis: a
    spoke of even width); its width is radial, its length the outer chord, its centre on the
    bisector midway between the radii. Any other has shape "other", its sizes its outline's
    extents (walls sampled along their edges) along and across its longest straight wall."""
    n = len(loop)
    joints = [_joint(loop[i], loop[(i + 1) % n]) for i in range(n)]
    smooth = [fi.kind != "plane" and all(
        abs(_turn(void_normal(a, p, d), void_normal(b, p, d), d)) < 1e-3
        for a, b, p in ((loop[i - 1], fi, joints[i - 1]), (fi, loop[(i + 1) % n], joints[i])))
        for i, fi in enumerate(loop)]
    curved = [fi for fi in loop if fi.kind != "plane"]
    small = min((fi.r0 for fi in curved), default=0.0)
    corners = [fi for fi, sm in zip(loop, smooth) if sm and fi.span <= CORNER and fi.r0 <= small + tol]
    walls = [fi for fi in loop if fi not in corners]
    planes = [fi for fi in walls if fi.kind == "plane"]
    arcs = [fi for fi in walls if fi.kind != "plane"]
    out = {"sides": len(walls), "corner_radius": max((fi.r0 for fi in corners), default=None), "convex": False,
           "draft": None, "sector": None, "curved": len(arcs)}
    outer = max((a for a in arcs if a.concave), key=lambda a: a.r0, default=None)
    inner = [a for a in arcs if not a.concave]
    if len(planes) == 2 and outer is not None and len(arcs) == 1 + len(inner) <= 2:
        o = _flat_part(outer.origin, d)  # the axis, in the plane across d
        # each side's direction away from the axis (a spoke of even width: its sides are off the axis)
        sides = [cross(d, flat(w.normal, d)) for w in planes]
        sides = [t if dot(t, sub(w.mid, o)) > 0 else mul(t, -1.0) for t, w in zip(sides, planes)]
        coaxial = all(norm(sub(_flat_part(a.origin, d), _flat_part(outer.origin, d))) <= tol * 10 for a in inner)
        # each side runs out from the axis, near a radius (a spoke of even width: off it by half its
        # width), not across (two straight walls meeting off the axis and an arc: no sector)
        radial = all(dot(t, flat(sub(w.mid, o), d)) >= SECTOR_RADIAL for t, w in zip(sides, planes))
        if coaxial and radial and dot(*sides) > -1 + 1e-6:
            r_in, r_out = (inner[0].r0 if inner else 0.0), outer.r0
            angle = math.acos(max(-1.0, min(1.0, dot(*sides))))
            mid = unit(add(*sides))
            out.update(shape="sector", width=r_out - r_in, length=2 * r_out * math.sin(angle / 2),
                       direction=canonical_dir(unit(sub(sides[1], sides[0]))),
                       centre=add(o, mul(mid, (r_in + r_out) / 2)),
                       sector={"center": o, "inner_radius": r_in, "outer_radius": r_out,
                               "angle": math.degrees(angle)})
            return out
    pts = [q for fi in loop for e in fi.edges.values() for q in edge_points(e)]
    longest = max(planes, key=lambda w: w.area) if planes else loop[0]
    along = canonical_dir(unit(cross(d, flat(longest.normal, d)))) if planes else flat((1.0, 0.0, 0.0), d)
    across = cross(d, along)
    (a_lo, a_hi), (c_lo, c_hi) = _extent(pts, along), _extent(pts, across)
    centre = add(mul(along, (a_lo + a_hi) / 2), mul(across, (c_lo + c_hi) / 2))
    if a_hi - a_lo < c_hi - c_lo:
        along, (a_lo, a_hi), (c_lo, c_hi) = canonical_dir(across), (c_lo, c_hi), (a_lo, a_hi)
    out.update(shape="other", width=c_hi - c_lo, length=a_hi - a_lo, direction=along,
               centre=_flat_part(centre, d))
    return out


def _radius_at(fi: FaceInfo, d, at: float | None) -> float:
    """A corner radius (a cylinder, or a drafted pocket's cone) at its end nearer ``at`` along ``d``
    (None: the larger)."""
    if at is None:
        return max(fi.r0, fi.r1)
    t0, t1 = (dot(add(fi.origin, mul(fi.axis, t)), d) for t in (fi.t0, fi.t1))
    return fi.r0 if abs(t0 - at) <= abs(t1 - at) else fi.r1


def _corners(loop: list[FaceInfo], d, at: float) -> list | None:
    """The outline's corners where the walls cross the plane across ``d`` at ``at``, as 3-D points."""
    got = _outline(loop, d, at)
    if got is None:
        return None
    u, v, poly = got
    return [add(add(mul(u, x), mul(v, y)), mul(d, at)) for x, y in poly]


def _past_edge_breaks(infos, loop: list[FaceInfo], d, lo: float, hi: float, tol: float,
                      convex: bool = False) -> tuple[float, float]:
    """The walls' extent along ``d`` (``lo``, ``hi``) carried past the edge breaks round the floor
    or the mouth (pockets' own: their walls are planes, not a line's coaxial faces, so
    ``features_find.past_end`` does not apply). Past a fillet round the floor: concave
    faces next to the walls, not walls themselves (cylinders across ``d`` along the floor's edges,
    tori at its corners), reaching beyond an end. A probe just beyond the walls would be in the
    pocket still, and call it through; the depth runs to the floor. With ``convex``: past a
    rounded mouth (convex such faces), to the face it opens onto. Either way, past a chamfer round
    the floor or the mouth: a tilted plane next to one wall only (a sloping face the pocket opens
    onto meets every wall)."""
    mine = {fi.index for fi in loop}
    for j in {j for fi in loop for j in fi.neighbours} - mine:
        g = infos[j]
        if g.kind == "plane":
            tilted = g.normal is not None and 1e-6 < abs(dot(g.normal, d)) < 1 - 1e-6
            if not tilted or len(g.neighbours & mine) != 1:
                continue
        elif (g.concave is None or g.concave == convex or g.kind not in ("cylinder", "torus")
                or (g.kind == "cylinder" and abs(abs(dot(g.axis, d)) - 1) <= 1e-9)):
            continue
        g_lo, g_hi = _extent([p for e in g.edges.values() for p in edge_points(e)], d)
        if g_lo < lo - tol and g_hi <= lo + tol:
            lo = g_lo
        if g_hi > hi + tol and g_lo >= hi - tol:
            hi = g_hi
    return lo, hi


def _islands(infos, loop: list[FaceInfo], d, t_walls: float, t_floor: float, down: float, along,
             tol: float) -> dict | None:
    """What stands on a blind pocket's floor (a rectangular groove's middle, a post): the faces
    next to the floor along its inner wires (past a fillet round the floor: the faces beyond it)
    that rise on the pocket's side of it (a hole in the floor goes down the other way), in groups
    of neighbours, one an island. ``{count, width, length}``: how many, and the largest one's
    extents (its walls' along ``d``, else all its faces') across and along ``along``; None for
    none. ``down``: +1 when the floor is at the high end of ``d``, else -1."""
    mine = {fi.index for fi in loop}
    across = faces_across(infos, loop, (0.0, 0.0, 0.0), d, t_walls, tol)
    if t_walls != t_floor:  # a rounded floor: the floor is beyond the fillets
        across = [infos[j] for f in across for j in f.neighbours]
    floors = {f.index: f for f in across if f.kind == "plane" and f.normal is not None
              and abs(abs(dot(f.normal, d)) - 1) < 1e-9 and abs(dot(f.mid, d) - t_floor) <= tol}
    rising = set()
    for fl in floors.values():
        inner = fl.edges.keys() - outer_edges(fl)
        for j in fl.neighbours - mine - floors.keys():
            g = infos[j]
            if g.edges.keys() & inner and (t_floor - dot(g.mid, d)) * down > tol:
                rising.add(j)
    groups: list[set] = []
    for j in rising:  # neighbours in one group
        joined = [g for g in groups if g & infos[j].neighbours]
        merged = {j}.union(*joined)
        groups = [g for g in groups if not any(g is x for x in joined)] + [merged]
    if not groups:
        return None
    across_dir = cross(d, along)
    sizes = []
    def upright(f: FaceInfo) -> bool:  # a wall along d: a plane parallel to it, a cylinder round it
        if f.kind == "plane":
            return f.normal is not None and abs(dot(f.normal, d)) < 1e-9
        return f.kind == "cylinder" and abs(abs(dot(f.axis, d)) - 1) < 1e-9

    for g in groups:
        faces = [infos[j] for j in g]
        # past a fillet round the island's foot: its walls are the fillets' neighbours
        walls = [f for f in faces if upright(f)] or [
            infos[j] for f in faces for j in f.neighbours - mine if upright(infos[j])]
        pts = [q for f in (walls or faces) for e in f.edges.values() for q in edge_points(e)]
        (a0, a1), (c0, c1) = _extent(pts, along), _extent(pts, across_dir)
        sizes.append((a1 - a0, c1 - c0))
    length, width = max(sizes, key=lambda x: x[0] * x[1])
    return {"count": len(groups), "width": width, "length": length}


def _pocket(infos, loop: list[FaceInfo], d, mat: Material, tol: float) -> dict | None:
    """The pocket the walls ``loop`` bound along ``d``; None for a closed cavity."""
    pts = _points(loop)
    wall_lo, wall_hi = lo, hi = _extent(pts, d)
    lo, hi = _past_edge_breaks(infos, loop, d, lo, hi, tol)
    plain = _plain(loop, d)
    sh = _shape(loop, d, pts, tol) if plain else _curved_shape(loop, d, tol)
    step = max(1e-4, 1e-3 * sh["width"])
    # probes on the centre line and just inside a wall: a nut trap's floor has the bolt's hole at
    # its centre, a floor may have one anywhere; an end is open when both are
    w0 = next(w for w in loop if w.kind == "plane")
    near = add(w0.mid, mul(w0.normal, 0.05 * sh["width"]))
    near = sub(near, mul(d, dot(near, d)))
    open_lo, open_hi = (
        open_beyond(infos, loop, (0.0, 0.0, 0.0), d, t, sign,
                    lambda t=t, sign=sign: [add(q, mul(d, t + sign * step)) for q in (sh["centre"], near)], mat, tol)
        for t, sign in ((lo, -1.0), (hi, 1.0)))
    if not (open_lo or open_hi):
        return None
    through = open_lo and open_hi
    from_lo = entry_first(d) if through else open_lo
    if through and sh["draft"] is not None:  # from its wider end (the walls' normals lean towards it), as a hole
        from_lo = dot(w0.normal, d) < 0
    m_lo, m_hi = _past_edge_breaks(infos, loop, d, lo, hi, tol, convex=True)  # a rounded mouth
    if sh["draft"] is not None:  # its outline changes along d: the entry's
        sh = _shape(loop, d, pts, tol, lo if from_lo else hi)
        # positive: the walls lean back towards the entry (it narrows deeper in); negative: an undercut
        if dot(w0.normal, d) * (1.0 if from_lo else -1.0) > 0:
            sh["draft"] = -sh["draft"]
    # where the centre line meets the surface the pocket opens onto (a keyway in a shaft: the
    # shaft's top, not its walls' lower corners)
    t_mouth = m_lo if from_lo else m_hi
    t_in = (t_mouth if t_mouth != (lo if from_lo else hi) else
            axis_crossing(infos, [{"faces": loop}], sh["centre"], d, lo if from_lo else hi, sh["width"] / 2, tol)[0])
    # the mouth is never past the far end: a plane across the end that slopes back over the pocket
    # (a chamfer strip, extended) meets the centre line beyond the floor, and the depth would be
    # negative (a window in a curved wall may open a little inside its walls' extremes)
    t_in = min(t_in, hi) if from_lo else max(t_in, lo)
    sector = sh.get("sector")  # None but for a ring sector
    island = None if through else _islands(infos, loop, d, wall_hi if from_lo else wall_lo, hi if from_lo else lo,
                                           1.0 if from_lo else -1.0, sh["direction"], tol)
    return {"island": island,"center": add(sh["centre"], mul(d, t_in)), "axis": mul(d, 1.0 if from_lo else -1.0),
            "sector": None if sector is None else dict(sector, center=add(sector["center"], mul(d, t_in))),
            "curved": sh.get("curved", 0),
            "depth": None if through else (hi - t_in if from_lo else t_in - lo), "through": through,
            "width": sh["width"], "length": sh["length"], "direction": sh["direction"], "sides": sh["sides"],
            "shape": sh["shape"], "corner_radius": sh["corner_radius"], "draft": sh["draft"],
            # for a render's window (not in the reply): the walls' planes, the two ends, and whether
            # the outline is convex (a point inside is then on the inner side of every wall)
            "walls": [(w.mid, w.normal) for w in loop if w.kind == "plane"], "convex": sh["convex"],
            "ends": (add(sh["centre"], mul(d, lo)), add(sh["centre"], mul(d, hi))),
            # and, with a convex corner, the outline at each end (3-D corners)
            "outlines": (None if sh["convex"] or not plain  # curved: not shaded
                         else tuple(_corners(loop, d, t) for t in (lo, hi)))}


def pockets(infos: list[FaceInfo], mat: Material, used: set) -> list[dict]:
    """Pockets and windows (module docstring). The walls of each become ``used``. Each also has
    ``walls`` (a point and the inward normal of each planar wall), ``ends`` (the centre line's
    points at both ends), ``convex`` (no convex corner) and ``outlines`` (None when convex, else
    the outline's corners at both ends), which the reply leaves out."""
    tol = 1e-6 * part_scale(infos) + 1e-6
    out, seen = [], set()
    for fi in infos:
        if fi.kind != "plane" or fi.index in used or fi.index in seen or fi.normal is None:
            continue
        for d in _directions(fi, infos, used):
            loop = _loop(fi, d, infos, used)
            if loop is None:
                continue
            seen.update(w.index for w in loop)
            found = _pocket(infos, loop, d, mat, tol * 10)
            if found is not None:
                out.append(found)
                used.update(w.index for w in loop)
            break
    return out

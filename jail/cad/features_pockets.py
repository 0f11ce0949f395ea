"""Recognise pockets and windows: straight walls all round a void, along one direction.

A pocket's walls are planar faces parallel to one direction ``d`` (its axis), each meeting the
next at a concave corner (the void in front of both walls) or through a concave corner radius (a
cylinder along ``d`` turning at most 120 degrees, tangent to both; a half-round end is not one).
Walking from wall to wall across the straight edges along ``d`` comes back to the first wall: that
loop is the pocket. A rectangular window, a milled pocket with corner radii, a hexagonal socket or
nut trap, a square hole, the inside of a box.

Its ends are read like a hole's (``features_find.open_beyond``: from the face across, else probed
on its centre line and just inside a wall, a nut trap's floor having a hole): both open =
through (a window), one = blind, entered from the open end, ``center`` where its centre line meets
the surface it opens onto (a keyway in a shaft: the top of the shaft), ``depth`` from there to the
floor; neither = a closed cavity, not listed. ``width`` is the narrowest distance across (between
two opposite walls: across flats), ``length`` the extent square to that (across corners for a
polygon, the long side for a rectangle) along ``direction``; ``shape`` "rectangle" (four walls
at right angles, a square too), "regular" (every side and corner alike: a hexagon) or "other";
``corner_radius`` the largest corner's, or None.

Not found: a pocket with a convex corner (an L), walls that are not planes (an oval) or a round
end (a D), walls split along their length, a round pocket (a hole) or a slot (found as such
first). Faces that another feature took (``used``) are never walls.

Blocks nothing (a computation). OCP is imported at the top: jailed processes and tests only.
"""
from __future__ import annotations

import math

from OCP.BRep import BRep_Tool
from OCP.BRepAdaptor import BRepAdaptor_Curve
from OCP.GeomAbs import GeomAbs_Line
from OCP.TopoDS import TopoDS

from jail.cad.features_faces import (TWO_PI, TopAbs_VERTEX, FaceInfo, add, canonical_dir, cross, dot, mul, sub,
                                     unique, unit)
from jail.cad.features_find import axis_crossing, entry_first, open_beyond, part_scale
from jail.cad.features_material import Material

CORNER = TWO_PI / 3 + 1e-6  # a corner radius turns the wall by at most a triangle's 120 degrees
MAX_WALLS = 64


def _line_dir(edge) -> tuple | None:
    """The unit direction of a straight edge, else None."""
    c = BRepAdaptor_Curve(TopoDS.Edge(edge))
    if c.GetType() != GeomAbs_Line:
        return None
    d = c.Line().Direction()
    return (d.X(), d.Y(), d.Z())


def _wall(fi: FaceInfo, d, used: set) -> bool:
    """Can ``fi`` be a wall along ``d``: a plane parallel to it, or a concave corner radius along it."""
    if fi.index in used:
        return False
    if fi.kind == "plane":
        return fi.normal is not None and abs(dot(fi.normal, d)) < 1e-6
    return (fi.kind == "cylinder" and fi.concave is True and fi.span <= CORNER
            and abs(abs(dot(fi.axis, d)) - 1) < 1e-9)


def _concave(a: FaceInfo, b: FaceInfo) -> bool:
    """Do two walls meet with the void in front of both (a pocket's inside corner)?"""
    if a.kind == "plane" and b.kind == "plane":
        return dot(sub(b.mid, a.mid), a.normal) > 1e-9 and dot(sub(a.mid, b.mid), b.normal) > 1e-9
    return True  # a corner radius: concave by :func:`_wall`, tangent to its plane


def _sides(fi: FaceInfo, d, infos, used: set) -> list[int] | None:
    """The walls next to ``fi`` across its straight edges along ``d``; None unless there are two."""
    out = []
    for j in fi.neighbours:
        g = infos[j]
        if not _wall(g, d, used):
            continue
        for k in fi.edges.keys() & g.edges.keys():
            e = _line_dir(fi.edges[k])
            if e is not None and abs(abs(dot(e, d)) - 1) < 1e-9 and _concave(fi, g):
                out.append(j)
                break
    return out if len(out) == 2 else None


def _loop(start: FaceInfo, d, infos, used: set) -> list[FaceInfo] | None:
    """The walls round a pocket along ``d``, in order from ``start``; None unless they close."""
    loop, prev, cur = [start], None, start
    while len(loop) <= MAX_WALLS:
        sides = _sides(cur, d, infos, used)
        if sides is None:
            return None
        nxt = sides[1] if sides[0] == prev else sides[0]
        if nxt == start.index:
            return loop if sum(fi.kind == "plane" for fi in loop) >= 3 else None
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


def _shape(loop: list[FaceInfo], d, pts, tol: float) -> dict:
    """Width (narrowest across), length (square to it), their direction, the outline's centre
    (a point of the centre line), regularity and corner radius."""
    walls = [fi for fi in loop if fi.kind == "plane"]
    across = [(_extent(pts, fi.normal), fi.normal) for fi in walls]
    narrow = min(hi - lo for (lo, hi), _ in across)
    # of the narrowest (a regular polygon: every wall), the one whose length runs most along X, Y, Z
    (w_lo, w_hi), n_w = max((x for x in across if x[0][1] - x[0][0] <= narrow + tol),
                            key=lambda x: tuple(round(abs(c), 9) for c in unit(cross(d, x[1]))))
    along = canonical_dir(unit(cross(d, n_w)))
    l_lo, l_hi = _extent(pts, along)
    centre = add(mul(n_w, (w_lo + w_hi) / 2), mul(along, (l_lo + l_hi) / 2))
    # a point of the centre line: the outline's centre in the plane across d (its d part is set later)
    centre = sub(centre, mul(d, dot(centre, d)))
    apothems = [dot(sub(centre, fi.mid), fi.normal) for fi in walls]
    turns = []
    for a, b in zip(walls, walls[1:] + walls[:1]):
        turns.append(math.atan2(dot(cross(a.normal, b.normal), d), dot(a.normal, b.normal)))
    n = len(walls)
    if n == 4 and all(abs(abs(t) - math.pi / 2) <= 1e-6 for t in turns):
        shape = "rectangle"
    elif max(apothems) - min(apothems) <= tol and all(abs(abs(t) - TWO_PI / n) <= 1e-6 for t in turns):
        shape = "regular"
    else:
        shape = "other"
    radii = [fi.r0 for fi in loop if fi.kind == "cylinder"]
    return {"width": w_hi - w_lo, "length": l_hi - l_lo, "direction": along, "centre": centre, "sides": n,
            "shape": shape, "corner_radius": max(radii) if radii else None}


def _pocket(infos, loop: list[FaceInfo], d, mat: Material, tol: float) -> dict | None:
    """The pocket the walls ``loop`` bound along ``d``; None for a closed cavity."""
    pts = _points(loop)
    lo, hi = _extent(pts, d)
    sh = _shape(loop, d, pts, tol)
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
    # where the centre line meets the surface the pocket opens onto (a keyway in a shaft: the
    # shaft's top, not its walls' lower corners)
    t_in = axis_crossing(infos, [{"faces": loop}], sh["centre"], d, lo if from_lo else hi, sh["width"] / 2, tol)[0]
    return {"center": add(sh["centre"], mul(d, t_in)), "axis": mul(d, 1.0 if from_lo else -1.0),
            "depth": None if through else (hi - t_in if from_lo else t_in - lo), "through": through,
            "width": sh["width"], "length": sh["length"], "direction": sh["direction"], "sides": sh["sides"],
            "shape": sh["shape"], "corner_radius": sh["corner_radius"],
            # for a render's window (not in the reply): the walls' planes and the two ends
            "walls": [(w.mid, w.normal) for w in loop if w.kind == "plane"],
            "ends": (add(sh["centre"], mul(d, lo)), add(sh["centre"], mul(d, hi)))}


def pockets(infos: list[FaceInfo], mat: Material, used: set) -> list[dict]:
    """Pockets and windows (module docstring). The walls of each become ``used``. Each also has
    ``walls`` (a point and the inward normal of each planar wall) and ``ends`` (the centre line's
    points at both ends), which the reply leaves out."""
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

"""Recognise pads: raised features that are not round (a rectangular mounting pad, a hex boss, an
obround boss, a rib standing on a floor), the outside of a pocket.

A pad is a flat top (``cap``: a plane facing out along ``axis``) whose outer edges all border walls
square to it (planes parallel to ``axis``, cylinders round it: corner radii and round ends), each
flat wall next to a floor (a plane facing the way the top does, or a fillet round the wall's foot)
at one level, ``height`` below the top, where material goes on outward (probed just outside each
flat wall, just below that level): it stands on a floor. The top face of a whole part has walls
that end on its bottom face, which faces the other way: no pad, and no probe. A round boss (one cylinder all round)
is a boss (``features_find.bosses``, before this); a hole in a pad's top is a hole of its own.

Its outline is read from the top's outer edges, as seen along ``axis``: ``width`` the narrowest
extent across one of its straight sides (across flats), ``length`` the extent along that side
(``direction``); ``shape`` "rectangle" (four straight sides at right angles, maybe with equal corner
radii), "obround" (two parallel straight sides and two half-round ends: a slot's outline),
"regular" (every straight side alike, no corner radius: a hexagon) or "other" (an L, a rib with
one round end...); ``sides`` its straight sides; ``corner_radius`` the largest arc that turns a third of a turn or less, else
None. ``center`` is the outline's centre on the floor (the middle of its extents), ``axis`` the
unit vector from the floor to the top.

Not read: a pad whose top edges are rounded or chamfered (its top then borders the rounds, not
walls), drafted walls, a pad on a stepped or sloping floor (walls ending at different levels), an
outline with no straight side (an ellipse) or with an arc over half a turn (a shaft's end with a
flat or a slot cut in it). An island in a pocket is also a pad (the pocket's
``island`` gives its extents only). Its top and walls are marked ``used``: a round end of an
obround pad is no fillet.

Blocks nothing (a computation). OCP is imported at the top: jailed processes and tests only.
"""
from __future__ import annotations

import math

from OCP.BRepAdaptor import BRepAdaptor_Curve
from OCP.GeomAbs import GeomAbs_Circle, GeomAbs_Line
from OCP.TopoDS import TopoDS

from jail.cad.features_faces import (FaceInfo, add, canonical_dir, cross, dot, edge_points, mul, outer_edges, sub,
                                     unit)
from jail.cad.features_find import part_scale
from jail.cad.features_material import Material

CORNER_MAX = 2 * math.pi / 3 + 1e-6  # an arc turning more than this is a round end, not a corner radius
SQUARE = 1e-6                          # |cos| of walls square to the top, sides at right angles


def _upright(fi: FaceInfo, n) -> bool:
    """A wall standing square to a top facing ``n``: a plane along ``n``, a cylinder round it."""
    if fi.kind == "plane":
        return fi.normal is not None and abs(dot(fi.normal, n)) < SQUARE
    return fi.kind == "cylinder" and fi.axis is not None and abs(abs(dot(fi.axis, n)) - 1) < SQUARE


def _sides(cap: FaceInfo, infos) -> list[tuple[object, FaceInfo]] | None:
    """``(edge, wall)`` along the top's outer wire; None when an edge borders no wall."""
    wall_of = {k: infos[j] for j in cap.neighbours for k in cap.edges.keys() & infos[j].edges.keys()}
    out = []
    for k in outer_edges(cap):
        w = wall_of.get(k)
        if w is None or not _upright(w, cap.normal):
            return None
        out.append((cap.edges[k], w))
    return out or None


def _outline(sides, n) -> dict | None:
    """Width, length, direction, shape and corner radius of the top's outline (module docstring),
    and the middle of its extents (a point of the plane through the origin); None with no straight
    side, an arc over half a turn (a round boss with a flat cut on it) or an edge that is neither a
    line nor an arc."""
    lines, arcs, pts = [], [], []
    for edge, _ in sides:
        c = BRepAdaptor_Curve(TopoDS.Edge(edge))
        kind = c.GetType()
        ends = edge_points(edge, 1)
        if kind == GeomAbs_Line and len(ends) == 2:
            t = sub(ends[1], ends[0])
            length = math.sqrt(dot(t, t))
            if length > 0:
                lines.append((unit(t), length, mul(add(ends[0], ends[1]), 0.5)))
            pts += ends
        elif kind == GeomAbs_Circle:
            arcs.append((c.Circle().Radius(), abs(c.LastParameter() - c.FirstParameter())))
            pts += edge_points(edge)
        else:
            return None
    if not lines or any(span > math.pi + 1e-6 for _, span in arcs):
        return None  # no straight side, or mostly round (a boss with a flat): no pad
    ways = []
    for t, _, _ in lines:
        m = unit(cross(n, t))
        across = [dot(p, m) for p in pts]
        ways.append((max(across) - min(across), canonical_dir(t), m, (min(across) + max(across)) / 2))
    narrow = min(w for w, *_ in ways)
    # of the narrowest (a regular polygon: every side), the one running most along X, then Y, then Z
    width, t, m, mid_m = max((w for w in ways if w[0] <= narrow + 1e-9 * max(1.0, narrow)),
                             key=lambda w: tuple(round(abs(c), 9) for c in w[1]))
    along = [dot(p, t) for p in pts]
    length = max(along) - min(along)
    centre = add(mul(t, (min(along) + max(along)) / 2), mul(m, mid_m))
    corners = [r for r, span in arcs if span <= CORNER_MAX]
    ends = [(r, span) for r, span in arcs if span > CORNER_MAX]
    square = all(abs(dot(a, b)) < SQUARE or abs(abs(dot(a, b)) - 1) < SQUARE for a, *_ in lines for b, *_ in lines)
    if len(lines) == 4 and square and not ends and len(corners) in (0, 4) and len(set(round(r, 9) for r in corners)) <= 1:
        shape = "rectangle"
    elif len(lines) == 2 and abs(abs(dot(lines[0][0], lines[1][0])) - 1) < SQUARE and len(ends) == 2 \
            and not corners and all(abs(span - math.pi) < 1e-6 for _, span in ends) \
            and abs(ends[0][0] - ends[1][0]) <= 1e-9 * max(1.0, ends[0][0]):
        shape = "obround"
    elif len(lines) >= 3 and not arcs and max(x for _, x, _ in lines) - min(x for _, x, _ in lines) <= 1e-6 * length \
            and _one_apothem(lines, n, length):
        shape = "regular"
    else:
        shape = "other"
    return {"width": width, "length": length, "direction": t, "centre": centre, "shape": shape,
            "sides": len(lines), "corner_radius": max(corners) if corners else None}


def _one_apothem(lines, n, size: float) -> bool:
    """Do the straight sides (direction, length, midpoint) all lie one distance from their midpoints'
    centre (with equal lengths: a regular polygon)?"""
    c = mul(tuple(map(sum, zip(*(mid for _, _, mid in lines)))), 1.0 / len(lines))
    apothems = [abs(dot(sub(mid, c), unit(cross(n, t)))) for t, _, mid in lines]
    return max(apothems) - min(apothems) <= 1e-6 * max(size, 1.0)


def _floor(w: FaceInfo, cap: FaceInfo, infos, n) -> float | None:
    """The level along ``n`` of the floor the wall ``w`` stands on: the lowest neighbouring plane below
    the top facing the way it does, or the far edge of a fillet round its foot (a concave cylinder
    square to ``n``); None when there is none (the wall goes down to the part's far side)."""
    levels = []
    for j in w.neighbours - {cap.index}:
        g = infos[j]
        if g.kind == "plane" and g.normal is not None and dot(g.normal, n) > 1 - 1e-9:
            levels.append(dot(g.mid, n))
        elif g.kind == "cylinder" and g.concave and g.axis is not None and abs(dot(g.axis, n)) < SQUARE \
                and abs(dot(g.axis, w.normal)) < SQUARE:  # along the wall's foot (not a hole through it)
            levels.append(min(dot(p, n) for e in g.edges.values() for p in edge_points(e, 2)))
    below = [x for x in levels if x < dot(cap.mid, n)]
    return min(below) if below else None  # a lower rib running into the wall stands on the floor too


def pads(infos: list[FaceInfo], mat: Material, used: set) -> list[dict]:
    """The pads of the part (module docstring); their tops and walls are added to ``used``."""
    tol = 1e-6 * part_scale(infos) + 1e-6
    out = []
    for cap in infos:
        if cap.index in used or cap.kind != "plane" or cap.normal is None:
            continue
        n = cap.normal
        sides = _sides(cap, infos)
        if sides is None:
            continue
        walls = {w.index: w for _, w in sides}
        flat = [w for w in walls.values() if w.kind == "plane"]
        if walls.keys() & used or not flat:
            continue
        floors = [_floor(w, cap, infos, n) for w in flat]  # no probe before the faces say it may stand
        if any(x is None for x in floors) or max(floors) - min(floors) > 10 * tol:
            continue  # a wall down to the far side (a whole block), or floors at several levels
        top, base = dot(cap.mid, n), min(floors)
        if top - base <= 10 * tol:
            continue
        step = max(1e-4, 1e-3 * (top - base))
        # material goes on outward just below the floor's level: it stands on a floor
        if not all(mat.inside(add(add(w.mid, mul(w.normal, step)), mul(n, base - step - dot(w.mid, n))))
                   for w in flat):
            continue
        shape = _outline(sides, n)
        if shape is None:
            continue
        centre = add(shape.pop("centre"), mul(n, base))
        out.append({"center": centre, "axis": n, "height": top - base, **shape})
        used.update(walls)
        used.add(cap.index)
    return out

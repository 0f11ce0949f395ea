"""Recognise pads: raised features that are not round (a rectangular mounting pad, a hex boss, an
obround boss, a rib standing on a floor), the outside of a pocket.

A pad is a flat top (``cap``: a plane facing out along ``axis``) whose outer edges all border walls
square to it (planes parallel to ``axis``, cylinders round it: corner radii and round ends), each
flat wall next to a floor (a plane facing the way the top does, or a fillet round the wall's foot)
at one level, ``height`` below the top, where material goes on outward (probed just outside each
flat wall, just below that level): it stands on a floor. The top face of a whole part has walls
that end on its bottom face, which faces the other way: no pad, and no probe. A round boss (one
cylinder all round) is a boss (``features_find.bosses``, before this); a hole in a pad's top is a
hole of its own.

Its outline is read from the top's outer edges, as seen along ``axis`` (the edges of one wall in
one line joined): ``width`` the narrowest extent across one of its straight sides (across flats),
``length`` the extent along that side (``direction``); ``shape`` "rectangle" (four straight sides
at right angles, maybe with equal corner radii), "obround" (two parallel straight sides and two
half-round ends: a slot's outline), "regular" (every straight side alike, no corner radius: a
hexagon) or "other" (an L, a rib with one round end...); ``sides`` its straight sides;
``corner_radius`` the largest arc that turns a third of a turn or less, else None. ``center`` is
the outline's centre on the floor (the middle of its extents), ``axis`` the unit vector from the
floor to the top.

Its top edges may be rounded or chamfered: the walls are then found across the rounds (a convex
cylinder along a straight edge, a leaning plane, a convex torus or a cone round a corner radius),
and the outline is read from the walls' lowest edges (their foot) instead of the top's. The rounds
stay fillets and chamfers. Not read: drafted walls, a pad on a stepped or sloping floor (walls
ending at different levels), an outline with no straight side (an ellipse) or with an arc over half
a turn (a shaft's end with a flat or a slot cut in it). An island in a pocket is also a pad (the
pocket's ``island`` gives its extents only). Its top and walls are marked ``used``: a round end of
an obround pad is no fillet.

Blocks nothing (a computation). OCP is imported at the top: jailed processes and tests only.
"""
from __future__ import annotations

import math

from jail.cad.features_faces import (FaceInfo, add, canonical_dir, cross, dot, edge_points, middle_across, mul,
                                     outer_edges, sub, unit)
from jail.cad.features_find import part_scale
from jail.cad.features_material import Material

CORNER_MAX = 2 * math.pi / 3 + 1e-6  # an arc turning more than this is a round end, not a corner radius
SQUARE = 1e-6                          # |cos| of walls square to the top, sides at right angles


def _upright(fi: FaceInfo, n) -> bool:
    """A wall standing square to a top facing ``n``: a plane along ``n``, a cylinder round it."""
    if fi.kind == "plane":
        return fi.normal is not None and abs(dot(fi.normal, n)) < SQUARE
    return fi.kind == "cylinder" and fi.axis is not None and abs(abs(dot(fi.axis, n)) - 1) < SQUARE


def _breaks(fi: FaceInfo, n) -> bool:
    """A rounded or chamfered top edge between a top facing ``n`` and a wall: a convex cylinder along
    a straight edge, a plane leaning between the two (a chamfer), a convex torus or a cone round a
    corner radius."""
    if fi.kind == "plane":
        return fi.normal is not None and SQUARE <= abs(dot(fi.normal, n)) <= 1 - SQUARE
    if fi.axis is None or fi.concave is not False:
        return False
    if fi.kind == "cylinder":
        return abs(dot(fi.axis, n)) < SQUARE
    return fi.kind in ("torus", "cone") and abs(abs(dot(fi.axis, n)) - 1) < SQUARE


def _sides(cap: FaceInfo, infos) -> tuple[list, dict[int, FaceInfo], bool] | None:
    """The top's outer edges (each with the face across it), the walls round it (across them, or past
    a rounded or chamfered top edge) and whether any edge was broken so; None when an edge borders
    neither."""
    n = cap.normal
    wall_of = {k: infos[j] for j in cap.neighbours for k in cap.edges.keys() & infos[j].edges.keys()}
    edges, walls, broken = [], {}, False
    for k in outer_edges(cap):
        b = wall_of.get(k)
        if b is None:
            return None
        edges.append((cap.edges[k], b))
        if _upright(b, n):
            walls[b.index] = b
            continue
        beyond = [infos[j] for j in b.neighbours - {cap.index} if _upright(infos[j], n)] if _breaks(b, n) else []
        if not beyond:
            return None
        broken = True
        walls.update((w.index, w) for w in beyond)
    return (edges, walls, broken) if edges else None


def _footprint(walls: dict[int, FaceInfo], n, tol: float) -> list:
    """The walls' lowest edges along ``n`` (where they meet the floor, or a fillet round their foot),
    each with its wall: the outline of a pad whose top edges are rounded or chamfered."""
    out = []
    for w in walls.values():
        spans = [(e, [dot(p, n) for p in edge_points(e, 2)]) for e in w.edges.values()]
        low = min((min(h) for _, h in spans if h), default=None)
        out += [(e, w) for e, h in spans if h and max(h) - low <= 10 * tol]
    return out


def _outline(edges: list[tuple], n) -> dict | None:
    """Width, length, direction, shape and corner radius of the outline ``edges`` (each with its wall)
    make (module docstring), and the middle of its extents (a point of the plane through the
    origin); None with no straight side or an arc over half a turn (a round boss with a flat cut on
    it). An edge along a flat wall is straight, one along a cylinder an arc of the wall's radius and
    span, whatever curve holds it (a STEP file's B-splines)."""
    segments, arcs, pts, rounds = [], [], [], []
    for edge, wall in edges:
        if wall.kind == "plane":
            ends = edge_points(edge, 1)
            if len(ends) == 2 and math.dist(*ends) > 0:
                segments.append((*ends, wall.index))
            pts += ends
        else:  # a cylinder round the axis (``_upright``)
            arcs.append((wall.r0, wall.span))
            on = edge_points(edge)
            pts += on
            if on:  # its centre at the edge's level, for the arc's own extreme points
                w = sub(on[0], wall.origin)
                rounds.append((add(wall.origin, mul(wall.axis, dot(w, wall.axis))), wall.r0, on))
    lines = _sides_of(segments, max((math.dist(a, b) for a, b, _ in segments), default=0.0))
    if not lines or any(span > math.pi + 1e-6 for _, span in arcs):
        return None  # no straight side, or mostly round (a boss with a flat): no pad
    def extent(v) -> tuple[float, float]:
        """The outline's extent along ``v``: its edges' points, and each arc's point furthest that
        way when the arc reaches it (between two neighbouring samples: within their chord of both)."""
        xs = [dot(p, v) for p in pts]
        for c, r, on in rounds:
            for q in (add(c, mul(v, r)), sub(c, mul(v, r))):
                if any(max(math.dist(q, a), math.dist(q, b)) <= math.dist(a, b) * (1 + 1e-9) + 1e-12
                       for a, b in zip(on, on[1:])):
                    xs.append(dot(q, v))
        return min(xs), max(xs)

    ways = []
    for t, _, _ in lines:
        m = unit(cross(n, t))
        lo, hi = extent(m)
        ways.append((hi - lo, canonical_dir(t), m, (lo + hi) / 2))
    narrow = min(w for w, *_ in ways)
    # of the narrowest (a regular polygon: every side), the one running most along X, then Y, then Z
    width, t, m, mid_m = max((w for w in ways if w[0] <= narrow + 1e-9 * max(1.0, narrow)),
                             key=lambda w: tuple(round(abs(c), 9) for c in w[1]))
    lo, hi = extent(t)
    length = hi - lo
    centre = add(mul(t, (lo + hi) / 2), mul(m, mid_m))
    corners = [r for r, span in arcs if span <= CORNER_MAX]
    ends = [(r, span) for r, span in arcs if span > CORNER_MAX]
    square = all(abs(dot(a, b)) < SQUARE or abs(abs(dot(a, b)) - 1) < SQUARE for a, *_ in lines for b, *_ in lines)
    alike = len({round(r, 9) for r in corners}) <= 1
    if len(lines) == 4 and square and not ends and len(corners) in (0, 4) and alike:
        shape = "rectangle"
    elif len(lines) == 2 and abs(abs(dot(lines[0][0], lines[1][0])) - 1) < SQUARE and len(ends) == 2 \
            and not corners and all(abs(span - math.pi) < 1e-6 for _, span in ends) \
            and abs(ends[0][0] - ends[1][0]) <= 1e-9 * max(1.0, ends[0][0]):
        shape = "obround"
    elif len(lines) >= 3 and not arcs and max(x for _, x, _ in lines) - min(x for _, x, _ in lines) <= 1e-6 * length \
            and _one_apothem(lines, hub := middle_across([mid for _, _, mid in lines], n), n, length):
        shape, centre = "regular", hub  # an odd polygon's extents are not centred on it
    else:
        shape = "other"
    return {"width": width, "length": length, "direction": t, "centre": centre, "shape": shape,
            "sides": len(lines), "corner_radius": max(corners) if corners else None}


def _sides_of(segments, size: float) -> list[tuple]:
    """Straight sides ``(direction, length, midpoint)`` from line segments ``(a, b, wall)``, those of
    one wall in one line joined (a wall's foot split where a lower rib runs into it)."""
    tol = 1e-6 * max(size, 1.0)
    sides: list[list] = []
    for a, b, wall in segments:
        t = unit(sub(b, a))
        for side in sides:
            d, q = side[0], side[1][0]
            if side[2] == wall and abs(abs(dot(t, d)) - 1) < SQUARE \
                    and math.dist(sub(a, q), mul(d, dot(sub(a, q), d))) <= tol:
                side[1] += [a, b]
                break
        else:
            sides.append([t, [a, b], wall])
    out = []
    for d, ps, _ in sides:
        lo, hi = min(ps, key=lambda p: dot(p, d)), max(ps, key=lambda p: dot(p, d))
        out.append((d, math.dist(lo, hi), mul(add(lo, hi), 0.5)))
    return out


def _one_apothem(lines, c, n, size: float) -> bool:
    """Do the straight sides (direction, length, midpoint) all lie one distance from ``c``, their
    midpoints' centre (with equal lengths: a regular polygon)?"""
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
        edges, walls, broken = sides
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
        shape = _outline(_footprint(walls, n, tol) if broken else edges, n)
        if shape is None:
            continue
        centre = add(shape.pop("centre"), mul(n, base))
        out.append({"center": centre, "axis": n, "height": top - base, **shape})
        used.update(walls)
        used.add(cap.index)
    return out

"""Recognise straight cuts with slanted walls: V grooves, dovetail slots and drafted channels.

Each is read as a slot (``features_slots``' kind) with a ``draft``: the walls' angle to the cut's
axis, in degrees, as a pocket's, positive when the cut narrows deeper in, negative when it widens
(an undercut: a dovetail). ``width`` is the mouth's.

* **V groove**: two planar walls meeting along a straight concave edge (the groove's bottom),
  leaning away from each other by the same angle: a 90° V has draft 45. Its floor has no width.
* **Dovetail or drafted channel**: a planar floor and two planar walls rising from its two long
  edges, leaning by the same angle, inwards over the floor (a dovetail) or outwards (a channel
  with draft, a moulded part's). A wall split by a crossing cut (a hole through it) is one wall
  when its pieces in one plane cover half its length.

Either must be a cut, not a shape: each wall's top meets planes square to the axis at one level
all along the cut, directly or past a chamfer or a rounding (the face it is cut into, not a chamfer
strip at one end: an L bracket's inner corner, a roof's ridge or a rebate turned 45° are no V);
``depth`` and ``width`` are then taken at that level, where the walls would meet it. There is no
material between the walls, material stands behind a wall and either behind the other or under
the bottom (probed as far as the cut is wide or deep: ribs with draft on a plate are no cut), and
the mouth opens to the outside (a ray from it along the axis meets nothing). Ends are read as a channel's
(``features_channels``): square at an end wall facing back, else open.

Not found: walls leaning by different angles (a half V, a sawtooth), a V or dovetail ending in
the cone or half cone its cutter leaves, walls that are not planes, rounded V bottoms.

Runs after pockets and before channels and steps (``features.find``: a V's two walls would read as
a step's floor and wall), on the faces the other finders left (``used``), and before the chamfer
finder (a V's walls are no chamfers). Blocks nothing (a computation); OCP is imported
by the modules it uses: jailed processes and tests only.
"""
from __future__ import annotations

import math

from jail.cad import features_walls as fw
from jail.cad.features_faces import FaceInfo, add, dot, mul, norm, sub, unit
from jail.cad.features_find import part_scale
from jail.cad.features_material import Material

MIN_LEAN = 1e-6                       # a wall leaning less (a sine) is square: features_channels' kind
MAX_DRAFT = 80.0                      # degrees: a V groove as open as 160° at most
SAME = 1e-6                           # two walls lean alike within this (a sine)


def find(infos: list[FaceInfo], mat: Material, used: set) -> list[dict]:
    """Slots with slanted walls; their walls join ``used``."""
    tol = 1e-6 * part_scale(infos) + 1e-6
    cache: dict = {}
    out, taken = [], set()
    for fi in infos:
        if fi.kind != "plane" or fi.normal is None or fi.index in used:
            continue
        for a, b, floor, n in _pairs(fi, infos, used, tol, cache):
            faces = {w.index for w in a + b}
            if faces & taken:
                continue
            found = _read(a, b, floor, n, infos, mat, tol, cache)
            if found is not None:
                taken |= faces
                out.append(found)
    used |= taken
    return out


def _plane(fi: FaceInfo, used: set) -> bool:
    return fi.kind == "plane" and fi.normal is not None and fi.index not in used


def _pairs(fi: FaceInfo, infos, used: set, tol: float, cache: dict):
    """Candidate cuts at ``fi``: as one wall of a V (its partner: a neighbour leaning the other way
    across their shared edge), and as a floor (two walls rising from it, leaning alike; a wall split
    by a crossing cut is one, when its pieces cover half its length). Each as (a wall's faces, the
    other's, the floor or None, the axis out of the cut)."""
    for j in sorted(fi.neighbours):
        g = infos[j]
        if j > fi.index and _plane(g, used):
            n = add(fi.normal, g.normal)
            if norm(n) > 1e-6 and dot(sub(g.mid, fi.mid), fi.normal) > tol:  # concave: each in front of the other
                yield [fi], [g], None, unit(n)
    n, h0 = fi.normal, dot(fi.mid, fi.normal)
    walls = [(infos[j], None) for j in sorted(fi.neighbours)
             if _plane(infos[j], used) and MIN_LEAN < abs(dot(infos[j].normal, n)) < math.sin(math.radians(MAX_DRAFT))
             and fw.rises(infos[j], n, h0, tol, cache)]
    groups = [[w for w, _ in ws] for ws in fw.planes(walls).values()]
    for i, a in enumerate(groups):
        for b in groups[i + 1:]:
            if abs(dot(a[0].normal, n) - dot(b[0].normal, n)) < SAME:
                yield a, b, fi, n


def _across(fi: FaceInfo, fr: fw.Frame, up: float) -> float:
    """Where a planar wall is across at level ``up`` along the axis (exact: its plane, whichever
    points its edges were sampled at)."""
    return (dot(fi.normal, fi.mid) - dot(fi.normal, fr.n) * up) / dot(fi.normal, fr.a)


def _strip(g: FaceInfo, fr: fw.Frame) -> bool:
    """A chamfer or a rounding along the cut: a plane leaning towards the axis, a convex cylinder along it."""
    if g.kind == "plane" and g.normal is not None:
        return 1e-6 < dot(g.normal, fr.n) < 1 - 1e-6
    return g.kind == "cylinder" and g.concave is False and abs(dot(g.axis, fr.e)) > 1 - 1e-9


def _facing(g: FaceInfo, fr: fw.Frame) -> bool:
    return g.kind == "plane" and g.normal is not None and dot(g.normal, fr.n) > 1 - 1e-6


def _faces_way(w: FaceInfo, floor: FaceInfo | None, infos, fr: fw.Frame, cache: dict) -> bool:
    """Has ``w`` a neighbour plane (not the floor) facing along the axis, as the face a cut is made in,
    or a chamfer or rounding with one beyond it? (The quick test, before any point is read; a strip
    no taller than the wall is no larger than twice its area: a block's top, next to hundreds of
    faces, is not searched as one). Kept per face and axis: a channel grid's floor, next to hundreds of
    walls, is a V's wall with each of them.)"""
    key = ("way", w.index, None if floor is None else floor.index, tuple(round(x, 9) for x in fr.n))
    if key not in cache:
        cache[key] = any(g is not floor and (_facing(g, fr) or (_strip(g, fr) and g.area <= 2 * w.area and any(
            k != w.index and _facing(infos[k], fr) for k in g.neighbours))) for g in (infos[j] for j in w.neighbours))
    return cache[key]


def _level(pts, fr: fw.Frame, tol: float) -> float | None:
    """The one level along the axis of ``pts`` (an edge square to it), or None."""
    if not pts:
        return None
    ups = [dot(p, fr.n) for p in pts]
    return ups[0] if max(ups) - min(ups) <= tol else None


def _mouth(faces: list[FaceInfo], floor: FaceInfo | None, infos, fr: fw.Frame, top: float, s: tuple[float, float],
           tol: float, cache: dict) -> float | None:
    """The level along the axis of the face a wall (its ``faces``) is cut into: planes square to the
    axis meeting its top edge (level ``top``) all along the cut (``s`` along it), directly or past a
    chamfer or a rounding no taller than the wall (a broken edge). None when there is none, or more
    than one level. Chamfer strips that happen to face that way at one end of a wall are no mouth.
    (Soak seed 3585: a corner chamfer's short edge along a wall's top, 1.9e-3 off level, counted
    500 mm off the origin and not at it.)"""
    along, levels = [], []
    tol += 1e-3 * (top - fr.h0)  # a thousandth of the wall's height: as much upright as turned far off the origin
    for w in faces:
        for j in w.neighbours:
            g = infos[j]
            pts = [] if g is floor else fw.shared_points(w, g, cache)
            at = _level(pts, fr, tol)
            if at is None or abs(at - top) > tol:
                continue  # not along the wall's top
            if _facing(g, fr):
                level = top
            elif _strip(g, fr):
                beyond = [_level(fw.shared_points(g, infos[k], cache), fr, tol) for k in g.neighbours
                          if k != w.index and _facing(infos[k], fr)]
                level = next((x for x in beyond if x is not None and top < x <= 2 * top - fr.h0 + tol), None)
                if level is None:
                    continue
            else:
                continue
            levels.append(level)
            along += [dot(p, fr.e) for p in pts]
    if not along or max(levels) - min(levels) > tol or min(along) > s[0] + tol or max(along) < s[1] - tol:
        return None
    return levels[0]


def _covered(faces: list[FaceInfo], fr: fw.Frame, cache: dict) -> tuple[float, float] | None:
    """A wall's span along the cut, when its pieces cover half of it (two walls in a row are none)."""
    span = fw.span(fw.points_of(faces, cache), fr.e)
    covered = sum(hi - lo for lo, hi in (fw.span(fw.points(w, cache), fr.e) for w in faces))
    return span if covered >= 0.5 * (span[1] - span[0]) else None


def _read(a: list[FaceInfo], b: list[FaceInfo], floor: FaceInfo | None, n, infos, mat: Material, tol: float,
          cache: dict) -> dict | None:
    """The cut walls ``a`` and ``b`` (each a plane's faces) make, on ``floor`` or meeting at a V's
    bottom; None for none."""
    lean_a, lean_b = dot(a[0].normal, n), dot(b[0].normal, n)
    if abs(lean_a - lean_b) > SAME or abs(lean_a) <= MIN_LEAN or abs(lean_a) >= math.sin(math.radians(MAX_DRAFT)):
        return None  # leaning by different angles, square (a channel), or too open
    if floor is None and lean_a < 0:
        return None  # two faces leaning over each other: no V
    flat_a = unit(sub(a[0].normal, mul(n, lean_a)))  # a's normal across the cut, into it
    if dot(flat_a, unit(sub(b[0].normal, mul(n, lean_b)))) > -1 + 1e-9:
        return None  # not facing each other across one line
    fr = fw.Frame(n, flat_a, 0.0)
    if abs(dot(b[0].normal, fr.e)) > SAME or not all(any(_faces_way(w, floor, infos, fr, cache) for w in x)
                                                     for x in (a, b)):
        return None  # not along one line; a wall with no face square to the axis beside it (the quick test)
    (a_lo, a_hi), (b_lo, b_hi) = fw.span(fw.points_of(a, cache), n), fw.span(fw.points_of(b, cache), n)
    h0 = dot(floor.mid, n) if floor is not None else min(a_lo, b_lo)
    if abs(a_lo - h0) > tol * 10 or abs(b_lo - h0) > tol * 10 or a_hi - h0 <= tol or b_hi - h0 <= tol:
        return None  # the walls start from the bottom
    fr = fw.Frame(n, flat_a, h0)
    sa, sb = _covered(a, fr, cache), _covered(b, fr, cache)
    if sa is None or sb is None:
        return None  # pieces of planes in a row, no wall
    s = (max(sa[0], sb[0]), min(sa[1], sb[1]))
    if s[1] - s[0] <= tol or not all(fw.full_height(w, fr, sw, tol * 10, cache) for w, sw in ((a, sa), (b, sb))):
        return None  # the walls run side by side, each standing its full height at both ends
    top_a, top_b = (_mouth(w, floor, infos, fr, hi, s, tol * 10, cache) for w, hi in ((a, a_hi), (b, b_hi)))
    if top_a is None or top_b is None or abs(top_a - top_b) > tol * 10:
        return None  # a wall's top meets no face square to the axis all along, or the two at two levels
    depth = top_a - h0
    (a_bot, a_top), (b_bot, b_top) = ((_across(w[0], fr, h0), _across(w[0], fr, top_a)) for w in (a, b))
    width, bottom = b_top - a_top, b_bot - a_bot
    if width <= tol or bottom < -tol * 10 or (floor is None and bottom > tol * 10):
        return None
    # the walls' ends are sampled points where they meet a curved face (a pocket's corner radius the
    # cut runs into): allow for the samples, a thousandth of the cut's size, as much upright as turned
    slack = tol * 10 + 1e-3 * (width + depth)
    if floor is not None and not fw.floor_within(floor, fr, (s[0] - bottom / 2, s[1] + bottom / 2), slack, cache):
        return None  # the floor runs on past the walls
    ends, reach, _ = fw.ends((a, b), infos, fr, s, tol * 10, cache)
    if floor is not None and not fw.floor_within(floor, fr, reach, slack, cache):
        return None
    mid, s_mid = (a_top + b_top) / 2, (s[0] + s[1]) / 2
    reach_out = max(width, depth)
    a_mid, b_mid = (a_bot + a_top) / 2, (b_bot + b_top) / 2
    if mat.inside(fr.point(mid, s_mid, depth / 2)):
        return None  # material in the cut
    backed = [mat.inside(fr.point(a_mid - 0.5 * reach_out, s_mid, depth / 2)),
              mat.inside(fr.point(b_mid + 0.5 * reach_out, s_mid, depth / 2)),
              mat.inside(fr.point((a_bot + b_bot) / 2, s_mid, -0.5 * depth))]
    if not (backed[0] or backed[1]) or sum(backed) < 2:
        return None  # a shape (ribs, a profile), not a cut: material behind a wall and under the bottom too
    if not mat.open_along(fr.point(mid, s_mid, depth), n):
        return None  # entered from a cavity under an overhang, not from outside
    draft = math.degrees(math.asin(max(-1.0, min(1.0, lean_a))))
    return fw.cut(fr, mid, s, ends, width, depth, {"through": False, "open_end": "open" in ends, "arc": None,
                                                 "counterbore": None, "draft": draft})

"""Recognise straight cuts with slanted walls: V grooves, dovetail slots and drafted channels.

Each is read as a slot (``features_slots``' kind) with a ``draft``: the walls' angle to the cut's
axis, in degrees, as a pocket's, positive when the cut narrows deeper in, negative when it widens
(an undercut: a dovetail). ``width`` is the mouth's.

* **V groove**: two planar walls meeting along a straight concave edge (the groove's bottom),
  leaning away from each other by the same angle: a 90° V has draft 45. Its floor has no width.
* **Dovetail or drafted channel**: a planar floor and two planar walls rising from its two long
  edges, leaning by the same angle, inwards over the floor (a dovetail) or outwards (a channel
  with draft, a moulded part's).

Either must be a cut, not a shape: each wall's top meets planes square to the axis at one level
all along the cut (the face it is cut into, not a chamfer strip at one end: an L bracket's inner
corner, a roof's ridge or a rebate turned 45° are no V), there is no material between the walls,
material stands behind a wall and either behind the other or under the bottom (probed as far as
the cut is wide or deep: ribs with draft on a plate are no cut), and the mouth opens to the
outside (a ray from it along the axis meets nothing). Ends are read as a channel's
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

from jail.cad.features_channels import (_cut, _ends, _floor_within, _Frame, _full_height, _points, _rises,
                                        _shared_points, _span)
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
            if a.index in taken or b.index in taken:
                continue
            found = _read(a, b, floor, n, infos, mat, tol, cache)
            if found is not None:
                taken |= {a.index, b.index}
                out.append(found)
    used |= taken
    return out


def _plane(fi: FaceInfo, used: set) -> bool:
    return fi.kind == "plane" and fi.normal is not None and fi.index not in used


def _pairs(fi: FaceInfo, infos, used: set, tol: float, cache: dict):
    """Candidate cuts at ``fi``: as one wall of a V (its partner: a neighbour leaning the other way
    across their shared edge), and as a floor (two neighbours rising from it, leaning alike).
    Each as (wall, wall, the floor or None, the axis out of the cut)."""
    for j in sorted(fi.neighbours):
        g = infos[j]
        if j > fi.index and _plane(g, used):
            n = add(fi.normal, g.normal)
            if norm(n) > 1e-6 and dot(sub(g.mid, fi.mid), fi.normal) > tol:  # concave: each in front of the other
                yield fi, g, None, unit(n)
    n, h0 = fi.normal, dot(fi.mid, fi.normal)
    walls = [infos[j] for j in sorted(fi.neighbours)
             if _plane(infos[j], used) and MIN_LEAN < abs(dot(infos[j].normal, n)) < math.sin(math.radians(MAX_DRAFT))
             and _rises(infos[j], n, h0, tol, cache)]
    for i, a in enumerate(walls):
        for b in walls[i + 1:]:
            if abs(dot(a.normal, n) - dot(b.normal, n)) < SAME:
                yield a, b, fi, n


def _across(fi: FaceInfo, fr: _Frame, cache: dict) -> tuple[float, float, float, float]:
    """A wall's (across at its bottom, across at its top, bottom, top) in ``fr``: its lowest and highest
    points along the axis, and where its plane is across at those levels (exact, whichever points
    its edges were sampled at)."""
    lo, hi = _span(_points(fi, cache), fr.n)
    k, na, nn = dot(fi.normal, fi.mid), dot(fi.normal, fr.a), dot(fi.normal, fr.n)
    return (k - nn * lo) / na, (k - nn * hi) / na, lo, hi


def _faces_way(w: FaceInfo, floor: FaceInfo | None, infos, n) -> bool:
    """Has ``w`` a neighbour plane (not the floor) facing along ``n``, as the face a cut is made in?"""
    return any(infos[j] is not floor and infos[j].kind == "plane" and infos[j].normal is not None
               and dot(infos[j].normal, n) > 1 - 1e-6 for j in w.neighbours)


def _mouth_along(w: FaceInfo, floor: FaceInfo | None, infos, fr: _Frame, top: float, s: tuple[float, float],
                 tol: float, cache: dict) -> bool:
    """Does ``w``'s top edge meet planes square to the axis at level ``top`` (the face the cut is made
    in) all along the cut (``s`` along it)? Chamfer strips that happen to face that way at one end
    of a wall are no mouth."""
    along = []
    for j in w.neighbours:
        g = infos[j]
        if (g is floor or g.kind != "plane" or g.normal is None or dot(g.normal, fr.n) <= 1 - 1e-6
                or abs(dot(g.mid, fr.n) - top) > tol):
            continue
        pts = _shared_points(w, g, cache)
        if pts and all(abs(dot(p, fr.n) - top) <= tol for p in pts):
            along += [dot(p, fr.e) for p in pts]
    return bool(along) and min(along) <= s[0] + tol and max(along) >= s[1] - tol


def _read(a: FaceInfo, b: FaceInfo, floor: FaceInfo | None, n, infos, mat: Material, tol: float,
          cache: dict) -> dict | None:
    if not all(_faces_way(w, floor, infos, n) for w in (a, b)):
        return None  # the quick test first: a wall with no plane square to the axis beside it
    lean_a, lean_b = dot(a.normal, n), dot(b.normal, n)
    if abs(lean_a - lean_b) > SAME or abs(lean_a) <= MIN_LEAN or abs(lean_a) >= math.sin(math.radians(MAX_DRAFT)):
        return None  # leaning by different angles, square (a channel), or too open
    if floor is None and lean_a < 0:
        return None  # two faces leaning over each other: no V
    flat_a = unit(sub(a.normal, mul(n, lean_a)))  # a's normal across the cut, into it
    if dot(flat_a, unit(sub(b.normal, mul(n, lean_b)))) > -1 + 1e-9:
        return None  # not facing each other across one line
    fr0 = _Frame(n, flat_a, 0.0)
    if abs(dot(b.normal, fr0.e)) > SAME:
        return None
    (a_bot, a_top, a_lo, a_hi), (b_bot, b_top, b_lo, b_hi) = _across(a, fr0, cache), _across(b, fr0, cache)
    h0 = dot(floor.mid, n) if floor is not None else min(a_lo, b_lo)
    if abs(a_lo - h0) > tol * 10 or abs(b_lo - h0) > tol * 10 or abs(a_hi - b_hi) > tol * 10:
        return None  # the walls start from the bottom and rise to one level
    depth = a_hi - h0
    width, bottom = b_top - a_top, b_bot - a_bot
    if depth <= tol or width <= tol or bottom < -tol * 10 or (floor is None and bottom > tol * 10):
        return None
    fr = _Frame(n, flat_a, h0)
    sa, sb = _span(_points(a, cache), fr.e), _span(_points(b, cache), fr.e)
    s = (max(sa[0], sb[0]), min(sa[1], sb[1]))
    if s[1] - s[0] <= tol or not all(_full_height([w], fr, sw, tol * 10, cache) for w, sw in ((a, sa), (b, sb))):
        return None  # the walls run side by side, each standing its full height at both ends
    if not all(_mouth_along(w, floor, infos, fr, a_hi, s, tol * 10, cache) for w in (a, b)):
        return None  # a wall's top meets no face square to the axis all along: a shape's corner, not a cut
    # the walls' ends are sampled points where they meet a curved face (a pocket's corner radius the
    # cut runs into): allow for the samples, a thousandth of the cut's size, as much upright as turned
    slack = tol * 10 + 1e-3 * (width + depth)
    if floor is not None and not _floor_within(floor, fr, (s[0] - bottom / 2, s[1] + bottom / 2), slack, cache):
        return None  # the floor runs on past the walls
    ends, reach, _ = _ends(([a], [b]), infos, fr, s, tol * 10, cache)
    if floor is not None and not _floor_within(floor, fr, reach, slack, cache):
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
    return _cut(fr, mid, s, ends, width, depth, {"through": False, "open_end": "open" in ends, "arc": None,
                                                 "counterbore": None, "draft": draft})


"""Recognise slots: two concave half cylinders facing each other (straight, or an arc: a kidney
slot), a counterbored one, and slots open at one end.

* **Straight**: two half cylinders of one radius, parallel, facing each other, paired nearest first
  (so the order of the faces does not choose; of two as near, the one alongside over more of its
  height), read from the taller of the two (or two half cones
  at most ``DRAFT_MAX`` off their axes, the same radii at the same levels: a drafted slot, ``draft``
  as a pocket's, ``length`` and ``width`` at the mouth; not read open at one end). Through when the
  material is absent just beyond both ends of the walls (probed on the centre line, past a
  rounding or chamfer round the floor); else entered from the open end, ``center`` and ``depth``
  from where it opens (past a chamfer or a rounding round its edge, or where its centre line meets
  a round face: a keyway in a shaft).
* **Arc** (:func:`_arc`): the walls between the ends are coaxial cylinders, concave outside and
  convex inside, a width apart; ``arc`` {center, radius, sweep}, ``center`` the slot's middle on it.
* **Counterbored** (:func:`_counterbored`): a wider, longer slot over a closed one on its centre
  line is its ``counterbore``.
* **Open at one end** (:func:`_open_slot`): one half cylinder whose straight edges meet walls
  tangent to it running out of the part, or the face it leaves by; and a notch, a concave cylinder
  over ``WALL_MIN`` to ``PARTIAL_MIN`` of a turn (more is a hole open on one side) whose straight
  edges lie on the one plane or cylinder it cuts (:func:`_leaves_by`: a knob's flutes, a scallop).

``ends`` says what closes each end (the one at ``-direction`` first): "round" here;
``features_channels`` adds straight-walled slots with "square" and "open" ends (a channel).

Runs after holes and bosses (``features.find``), on the half cylinders they left. Heuristics on
exact B-rep geometry. Blocks nothing (a computation). OCP is imported by the modules it uses:
jailed processes and tests only.
"""
from __future__ import annotations

import math

from jail.cad.features_faces import (TopAbs_EDGE, FaceInfo, add, canonical_dir, cross, dot, edge_points, mul, norm,
                                     same_surface, sub, unique, unit, void_normal)
from jail.cad.features_find import (FLOOR_CHAMFER, FLOOR_ROUND, MOUTH_CHAMFER, MOUTH_ROUND, PARTIAL_MIN, WALL_MIN,
                                    axis_crossing, draft, entry_first, part_scale, past_end, sides_of)
from jail.cad.features_material import Material


def _open_end(infos, a: FaceInfo, b: FaceInfo, line, t_end: float, outward: float, tol: float) -> float:
    """Where a slot opens at ``t_end`` (in ``a``'s axis frame, from ``line``, a point of its centre
    line): past a chamfer or a rounding round its edge, else where the centre line meets the
    surface it opens onto (a keyway in a round shaft: the top of the shaft, not the tip of its
    curved edge)."""
    t = past_end(infos, a.origin, a.axis, t_end, outward, tol, (MOUTH_CHAMFER, MOUTH_ROUND), a.neighbours,
                 round_span=0.98 * math.pi)  # a rounded edge: convex tori half round the end
    return t if t != t_end else axis_crossing(infos, [{"faces": [a, b]}], line, a.axis, t_end, a.r0, tol)[0]


def slots(infos: list[FaceInfo], mat: Material, used: set) -> list[dict]:
    """Slots: two concave half cylinders facing each other. Through when the material is absent
    just beyond both ends of the walls (probed on the slot's centre line); else entered from the
    open end. ``center`` and ``depth`` start at the entry, past a chamfer round the edge. Then
    slots open at one end (:func:`_open_slot`) from the half cylinders left."""
    tol = 1e-6 * part_scale(infos) + 1e-6
    halves = [fi for fi in infos if fi.index not in used and fi.concave and abs(fi.span - math.pi) <= 0.02 * math.pi
              and (fi.kind == "cylinder" or (fi.kind == "cone" and draft(vars(fi)) is not None))]
    # every pair of halves that could be a slot's ends, then taken nearest first: which pair a half
    # joins does not depend on the order the faces come in (a file written by another system, a
    # part read turned), and two slots in a row are never read as one from their outer ends
    pairs = []
    for i, first in enumerate(halves):
        for second in halves[i + 1:]:
            if not _same_end(first, second, tol * 10):
                continue
            # read from the taller end (a crossing cut may have shortened the other)
            a, b = (second, first) if second.t1 - second.t0 > first.t1 - first.t0 + tol else (first, second)
            pa = add(a.origin, mul(a.axis, (a.t0 + a.t1) / 2))
            pb_t = dot(sub(pa, b.origin), b.axis)
            pb = add(b.origin, mul(b.axis, pb_t))
            d = norm(sub(pb, pa))
            if d <= tol or abs((b.t0 + b.t1) / 2 - pb_t) > max(a.t1 - a.t0, 1e-9):
                continue
            shift = dot(sub(b.origin, a.origin), a.axis)
            overlap = min(a.t1, b.t1 + shift) - max(a.t0, b.t0 + shift)  # along the axis
            pairs.append((d, -round(overlap, 9), a, b, pa, pb))
    # nearest first; of two as near (an end a crossing cut split in two), the one alongside over more
    # of its height; an exact tie keeps the faces' order (the sort is stable). A pair is looked at
    # closely (an arc between its ends: ~0.3 ms) only when both its ends are still free
    pairs.sort(key=lambda p: (round(p[0], 9), p[1]))
    out, taken = [], set()
    for d, _, a, b, pa, pb in pairs:
        if a.index in taken or b.index in taken:
            continue
        # the centre line, a point at t = 0 of a's axis frame (b's axis is parallel, same sense)
        q = add(b.origin, mul(b.axis, dot(sub(a.origin, b.origin), b.axis)))
        line = mul(add(a.origin, q), 0.5)
        arc = _arc(infos, a, b, pa, pb, line, tol * 10)
        if arc is None and (dot(sub(a.mid, pa), sub(pb, pa)) >= 0 or dot(sub(b.mid, pb), sub(pa, pb)) >= 0):
            continue  # the two ends must open towards each other (along a straight slot)
        if arc is not None:
            line = arc["mid"]  # the middle of an arc slot (the chord's may be in the material)
        step = max(1e-4, 1e-3 * a.r0)
        # past a fillet or a chamfer round the floor (a torus or a narrowing cone on an end's
        # axis), as a hole's
        f0, f1 = (past_end(infos, a.origin, a.axis, t, sign, tol * 10, (FLOOR_ROUND, FLOOR_CHAMFER), a.neighbours)
                  for t, sign in ((a.t0, -1.0), (a.t1, 1.0)))
        open_lo = not mat.inside(add(line, mul(a.axis, f0 - step)))
        open_hi = not mat.inside(add(line, mul(a.axis, f1 + step)))
        if not (open_lo or open_hi):
            continue  # a closed pocket inside the material
        lo = _open_end(infos, a, b, line, a.t0, -1.0, tol * 10) if open_lo else f0
        hi = _open_end(infos, a, b, line, a.t1, 1.0, tol * 10) if open_hi else f1
        through = open_lo and open_hi
        from_lo = entry_first(a.axis) if through else open_lo
        t_in = lo if from_lo else hi
        r_in, lean = _mouth(a, from_lo)
        out.append({"center": add(line, mul(a.axis, t_in)), "length": d + 2 * r_in, "width": 2 * r_in,
                    "axis": mul(a.axis, 1.0 if from_lo else -1.0),
                    "direction": canonical_dir(unit(sub(pb, pa))),
                    "depth": None if through else hi - lo, "through": through, "open_end": False,
                    "arc": None if arc is None else {"center": add(arc["center"], mul(a.axis, t_in)),
                                                     "radius": arc["radius"], "sweep": arc["sweep"]},
                    "counterbore": None, "ends": ["round", "round"], "draft": lean,
                    "exit": add(line, mul(a.axis, hi if from_lo else lo))})
        if arc is not None:
            used.update(arc["walls"])
        taken.update((a.index, b.index))
        used.update((a.index, b.index))
    out = _counterbored(out, tol * 10)
    # and the notches: a concave cylinder over less than a hole open on one side (a flute in a
    # knob's rim, a scallop in a plate's edge)
    notches = [fi for fi in infos if fi.index not in used and fi.kind == "cylinder" and fi.concave
               and WALL_MIN <= fi.span < PARTIAL_MIN and abs(fi.span - math.pi) > 0.02 * math.pi]
    for a in halves + notches:
        if a.index not in taken and a.kind == "cylinder":  # a drafted one (a half cone): not read
            found = _open_slot(infos, a, mat, tol)
            if found is not None:
                out.append(found)
                used.add(a.index)
    return out


def _same_end(a: FaceInfo, b: FaceInfo, tol: float) -> bool:
    """``a`` and ``b`` could be a slot's two ends: the same kind, parallel axes (canonical: the same
    sense), and the same radius at the same levels along them (a drafted slot's two half cones)."""
    if a.kind != b.kind or abs(abs(dot(a.axis, b.axis)) - 1) > 1e-9:
        return False
    if a.kind == "cylinder":
        return abs(a.r0 - b.r0) <= tol
    shift = dot(sub(b.origin, a.origin), a.axis) * (1.0 if dot(a.axis, b.axis) > 0 else -1.0)
    return all(abs(x - y) <= tol for x, y in ((a.t0, b.t0 + shift), (a.t1, b.t1 + shift), (a.r0, b.r0), (a.r1, b.r1)))


def _mouth(a: FaceInfo, from_lo: bool) -> tuple[float, float | None]:
    """(radius, draft) of a slot's round end ``a`` where it is entered: a drafted one's (a half cone)
    radius at that end of its wall and its angle to the axis in degrees, positive when it narrows
    deeper in (a moulded part's); a cylinder's radius and None."""
    if a.kind != "cone":
        return a.r0, None
    r_in, r_far = (a.r0, a.r1) if from_lo else (a.r1, a.r0)
    return r_in, math.degrees(math.atan2(r_in - r_far, max(a.t1 - a.t0, 1e-12)))


def _counterbored(found: list[dict], tol: float) -> list[dict]:
    """Closed slots with a wider, longer slot over them on the same centre line (a counterbored slot
    for a cap screw): the wider one's floor opens into the narrower one, so it read as a slot through.
    It becomes the narrower one's ``counterbore`` ``{width, length, depth}``; the slot is then entered
    where the counterbore is, its ``depth`` (blind) counted from there, as a hole's."""
    drop = set()
    for i, a in enumerate(found):
        if not a["through"] or a["arc"] is not None:
            continue
        for b in found:
            if (b is a or b["counterbore"] is not None or b["arc"] is not None or b["width"] >= a["width"] - tol
                    or b["length"] > a["length"] + tol or abs(abs(dot(a["axis"], b["axis"])) - 1) > 1e-6
                    or abs(abs(dot(a["direction"], b["direction"])) - 1) > 1e-6):
                continue
            ends = [(a_in, a_out, b_far) for a_in, a_out in ((a["center"], a["exit"]), (a["exit"], a["center"]))
                    for b_in, b_far in ((b["center"], b["exit"]), (b["exit"], b["center"]))[:2 if b["through"] else 1]
                    if norm(sub(a_out, b_in)) <= tol]  # a's inner end on b's entry (a through b: either end)
            if not ends:
                continue
            a_in, a_out, b_far = ends[0]
            step = norm(sub(a_out, a_in))
            b.update(center=a_in, exit=b_far, axis=unit(sub(a_out, a_in)),
                     depth=None if b["through"] else b["depth"] + step,
                     counterbore={"width": a["width"], "length": a["length"], "depth": step})
            drop.add(i)
            break
    return [dict((k, v) for k, v in s.items() if k != "exit") for i, s in enumerate(found) if i not in drop]


def _angle(u, v) -> float:
    return math.atan2(norm(cross(u, v)), dot(u, v))


def _arc(infos, a: FaceInfo, b: FaceInfo, pa, pb, line, tol: float) -> dict | None:
    """An arc (kidney) slot's centre line, when the walls between its round ends ``a`` (end centre
    ``pa``) and ``b`` (``pb``) are the same two faces on both, cylinders on one axis line parallel
    to theirs, a concave one outside and a convex one inside, a slot's width apart. ``{"center"}``: the arc's centre at
    the level of ``line`` (the midpoint of the end centres, a point at ``a``'s t = 0), ``radius``
    its centre line's, ``sweep`` degrees end to end, ``mid`` the slot's middle on that arc, ``walls``
    the walls' face indices; None for straight walls (or anything else)."""
    sides, other = sides_of(infos, a, tol), sides_of(infos, b, tol)
    if (sides is None or other is None or {fi.index for fi in sides} != {fi.index for fi in other}
            or any(fi.kind != "cylinder" or abs(abs(dot(fi.axis, a.axis)) - 1) > 1e-9 for fi in sides)):
        return None
    outer, inner = sorted(sides, key=lambda fi: -fi.r0)
    w = sub(inner.origin, outer.origin)
    if (not outer.concave or inner.concave is not False or norm(sub(w, mul(outer.axis, dot(w, outer.axis)))) > tol
            or abs(outer.r0 - inner.r0 - 2 * a.r0) > tol):
        return None
    radius = (outer.r0 + inner.r0) / 2
    c = add(outer.origin, mul(outer.axis, dot(sub(line, outer.origin), outer.axis)))  # at line's level
    va, vb, vm = (sub(sub(p, c), mul(outer.axis, dot(sub(p, c), outer.axis))) for p in (pa, pb, outer.mid))
    if abs(norm(va) - radius) > tol * 10 or abs(norm(vb) - radius) > tol * 10:
        return None
    sweep = _angle(va, vm) + _angle(vm, vb)  # from one end through the outer wall to the other
    half = add(unit(va), unit(vb))
    if norm(half) < 1e-6:
        u = unit(vm)
    else:
        u = mul(unit(half), 1.0 if sweep <= math.pi else -1.0)
    return {"center": c, "radius": radius, "sweep": math.degrees(sweep), "mid": add(c, mul(u, radius)),
            "walls": [outer.index, inner.index]}


def _open_slot(infos, a: FaceInfo, mat: Material, tol: float) -> dict | None:
    """A slot that runs out of the part at one end: one concave cylinder (its round end) whose
    straight edges meet either two walls tangent to it, leading to where the slot leaves the part
    (a U slot at a flange's edge: a half cylinder), or the surface the slot leaves by
    (:func:`_leaves_by`: a semicircular notch in a plate's edge, a flute in a knob's rim, a
    scallop cut from beyond the edge). ``direction`` points to the open end; ``length`` runs from
    there (where the centre line meets the surface left by) to the round end; ``center`` is the
    middle of that length where the slot is entered. None for anything else (a half-round end of a
    closed pocket, a fillet, a pocket's rounded corner)."""
    sides = sides_of(infos, a, tol * 10) or _rim_sides(infos, a, tol * 10)
    if sides is None:
        return None
    mid_line = add(a.origin, mul(a.axis, (a.t0 + a.t1) / 2))
    w = sub(a.mid, mid_line)
    w = sub(w, mul(a.axis, dot(w, a.axis)))
    if norm(w) <= tol:
        return None
    d = mul(unit(w), -1.0)  # from the round end towards the opening
    tangent = [fi.kind == "plane" and abs(dot(fi.normal, d)) < 1e-6 and abs(dot(fi.normal, a.axis)) < 1e-6
               for fi in sides]
    if all(tangent) and abs(a.span - math.pi) <= 0.02 * math.pi:
        reach = max(dot(sub(p, mid_line), d) for fi in sides for e in unique(fi.face, TopAbs_EDGE)
                    for p in edge_points(e))
    else:
        reach = _leaves_by(a, sides, mid_line, d, tol * 10)
        if reach is None:
            return None
    step = max(1e-4, 1e-3 * a.r0)
    if mat.inside(add(mid_line, mul(d, reach + step))):
        return None  # the walls end on material: a closed pocket's round end
    inner = add(a.origin, mul(d, (min(reach, 0.0) - a.r0) / 2))  # in the slot, halfway to its round end
    open_lo = not mat.inside(add(inner, mul(a.axis, a.t0 - step)))
    open_hi = not mat.inside(add(inner, mul(a.axis, a.t1 + step)))
    if not (open_lo or open_hi):
        return None
    lo = past_end(infos, a.origin, a.axis, a.t0, -1.0, tol * 10, (MOUTH_CHAMFER,)) if open_lo else a.t0
    hi = past_end(infos, a.origin, a.axis, a.t1, 1.0, tol * 10, (MOUTH_CHAMFER,)) if open_hi else a.t1
    through = open_lo and open_hi
    from_lo = entry_first(a.axis) if through else open_lo
    middle = add(a.origin, mul(d, (reach - a.r0) / 2))
    return {"center": add(middle, mul(a.axis, lo if from_lo else hi)), "length": reach + a.r0, "width": 2 * a.r0,
            "axis": mul(a.axis, 1.0 if from_lo else -1.0), "direction": d,
            "depth": None if through else hi - lo, "through": through, "open_end": True, "arc": None,
            "counterbore": None, "ends": ["round", "open"]}


def _rim_sides(infos, a: FaceInfo, tol: float) -> list[FaceInfo] | None:
    """The faces across a notch wall's two straight edges when a chamfer or a rounding round the rim
    it cuts (a knob's top) stopped them short of the wall's ends: the wall's only two edges that
    are lines along its axis over at least half its length, at two places round it; None otherwise."""
    length = a.t1 - a.t0
    out, at = [], []
    for j in a.neighbours:
        for k in a.edges.keys() & infos[j].edges.keys():
            pts = edge_points(a.edges[k], 2)
            if len(pts) != 3:
                continue
            v = sub(pts[2], pts[0])
            ln = norm(v)
            straight = norm(sub(pts[1], mul(add(pts[0], pts[2]), 0.5))) <= tol
            if ln < 0.5 * length or abs(dot(v, a.axis)) < ln - tol or not straight:
                continue
            w = sub(pts[0], a.origin)
            out.append(infos[j])
            at.append(sub(w, mul(a.axis, dot(w, a.axis))))
    if len(out) != 2 or norm(sub(at[0], at[1])) <= tol:
        return None
    return out


NOTCH_FACING = 0.5  # the surface a notch leaves by faces its opening within 60 degrees at its edges
NOTCH_CROSSING = math.cos(math.radians(15))  # and meets its wall at 15 degrees at least there


def _leaves_by(a: FaceInfo, sides: list[FaceInfo], p, d, tol: float) -> float | None:
    """Where a notch's centre line (from ``p`` on the axis of its wall ``a``, along ``d`` towards
    the opening) meets the surface it leaves by, or None. Both faces across the wall's straight
    edges lie on that one surface, a plane (one face, or two coplanar) or a cylinder (a knob's rim,
    in pieces); at each edge it faces the way the notch opens and crosses the wall, not tangent to
    it. So a pocket's rounded corner (tangent walls), a bay in a D pocket's flat (it faces back
    into the arc) and a hole crossed by a slot (two walls apart) are no notches."""
    s, t = sides
    if s.kind == "plane" and t.kind == "plane":
        if dot(s.normal, t.normal) < 1 - 1e-9 or abs(dot(sub(t.mid, s.mid), s.normal)) > tol:
            return None
    elif not (s.kind == t.kind == "cylinder" and (s is t or same_surface(s, t))):
        return None
    for fi in sides:
        for k in a.edges.keys() & fi.edges.keys():
            pts = edge_points(a.edges[k], 2)
            if not pts:
                return None
            q = pts[1]
            v = sub(q, a.origin)
            wall_n = unit(sub(mul(a.axis, dot(v, a.axis)), v))  # a concave wall's normal: to its axis
            n = void_normal(fi, q, a.axis)  # a side cylinder's axis is along a's: its lines are
            if dot(n, d) < NOTCH_FACING or abs(dot(n, wall_n)) > NOTCH_CROSSING:
                return None
    if s.kind == "plane":
        den = dot(d, s.normal)
        return dot(sub(s.mid, p), s.normal) / den
    # the cylinder: |(p - o) + x d| radially = R, the root nearest the notch's opening
    ax, r = s.axis, s.r0
    v = sub(p, s.origin)
    v = sub(v, mul(ax, dot(v, ax)))
    dd = sub(d, mul(ax, dot(d, ax)))
    qa, qb, qc = dot(dd, dd), 2 * dot(v, dd), dot(v, v) - r * r
    disc = qb * qb - 4 * qa * qc
    if qa <= 1e-12 or disc < 0:
        return None
    roots = [(-qb + sg * math.sqrt(disc)) / (2 * qa) for sg in (1.0, -1.0)]
    return min(roots, key=lambda x: abs(x))

"""Recognise grooves round a shaft and in a bore: flat, V and round-bottomed.

* **flat**: a cylinder all the way round (its faces on one axis line, one radius) with walls at
  both ends, coaxial rings (planes or cones), that rise from it: out round a shaft (a convex
  bottom: a circlip's groove), in within a bore (a concave one: an O-ring's; its faces are also in
  the hole's run, and the bore stays a hole). A shaft step, or a counterbore, has such a wall at one
  end only; a plate a tube passes through is no wall.
* **v**: two coaxial cones sloping opposite ways: convex ones meeting at their narrow ends round a
  shaft (a pulley's), concave ones meeting at their wide ends in a bore.
* **round**: a concave torus all the way round (``features_find.round_tubes``) whose edges meet the
  shaft's or bore's cylinder, or walls rising from them (a U groove).
* **face** (:func:`face_grooves`): a ring cut into a face round an axis (an O-ring face seal's):
  a concave full cylinder outside, a convex one inside (round the island), on one axis line, from
  one floor to open air. Found before holes: its outer wall is no blind hole.

Runs after holes and bosses (``features.find``): a groove's faces join the runs of the shaft, boss
or bore it is cut in, so none of them is cut in two. Heuristics on exact B-rep geometry.

Blocks nothing (a computation). OCP is imported at the top: jailed processes and tests only.
"""
from __future__ import annotations

from OCP.BRep import BRep_Tool
from OCP.TopoDS import TopoDS

from jail.cad.features_faces import FaceInfo, add, along_axis, dot, edge_points, mul, norm, sub, unit
from jail.cad.features_find import (FLOOR_ROUND, FULL, MOUTH_CHAMFER, MOUTH_ROUND, faces_across, lines, part_scale,
                                    past_end, round_tubes, segments)
from jail.cad.features_material import Material

RING_EDGES = 12  # a groove's wall: two circles and a seam, each circle in up to four arcs (a STEP's)


def _radii(fi: FaceInfo, origin, axis) -> list[float]:
    """Distances from the axis line of the points along ``fi``'s edges (not its seam: a cone's
    runs from one end circle to the other)."""
    out = []
    face = TopoDS.Face(fi.face)
    for e in fi.edges.values():
        if BRep_Tool.IsClosed_s(TopoDS.Edge(e), face):
            continue
        for p in edge_points(e):
            w = sub(p, origin)
            out.append(norm(sub(w, mul(axis, dot(w, axis)))))
    return out


def _on_axis(fi: FaceInfo, origin, axis, tol: float) -> bool:
    """A surface of revolution whose axis is the line through ``origin`` along ``axis``."""
    if abs(abs(dot(fi.axis, axis)) - 1) > 1e-9:
        return False
    return along_axis(fi.origin, origin, axis, tol) is not None


def _coaxial(fi: FaceInfo, origin, axis, tol: float) -> bool:
    """A plane square to the axis, or a cone round it: a ring wall of a groove."""
    if fi.kind == "plane":
        return fi.normal is not None and abs(abs(dot(fi.normal, axis)) - 1) < 1e-6
    return fi.kind == "cone" and _on_axis(fi, origin, axis, tol)


def _rise(walls: list[FaceInfo], origin, axis, r: float, outward: bool, tol: float) -> float | None:
    """How far the walls at one end of a groove's bottom reach from it (out round a shaft, in
    within a bore); None unless every wall is a coaxial ring, a plane or cone bounded by circles
    round the axis (the bottom's and one other), that does. A plate a tube passes through is no
    wall: its edges are elsewhere too (and a face of more than ``RING_EDGES`` edges is not
    sampled: a tube sheet's plate with 100 tubes cost 6.7 s of CPU)."""
    if not walls or not all(_coaxial(w, origin, axis, tol) and len(w.edges) <= RING_EDGES for w in walls):
        return None
    radii = [x for w in walls for x in _radii(w, origin, axis)]
    far = (max if outward else min)(radii, default=r)
    if any(abs(x - r) > tol and abs(x - far) > tol for x in radii):
        return None
    return abs(far - r) if abs(far - r) > tol else None


def _lip(walls: list[FaceInfo], origin, axis, r: float, outward: bool, tol: float) -> float | None:
    """How far the surface beyond a round groove's edge (at radius ``r``) rises from it: 0 where
    the shaft's (or bore's) own cylinder goes on, a coaxial ring's rise where there are walls (a U
    groove's); None for anything else."""
    if walls and all(w.kind == "cylinder" and abs(w.r0 - r) <= tol and _on_axis(w, origin, axis, tol) for w in walls):
        return 0.0
    return _rise(walls, origin, axis, r, outward, tol)


def _round_grooves(infos: list[FaceInfo], tol: float) -> list[dict]:
    """Grooves with a round bottom (:func:`_round_tubes`) whose edges meet the shaft's or bore's
    cylinder, or walls rising from them (a U groove)."""
    out = []
    for tb in round_tubes(infos, tol):
        tube = tb["faces"][0]
        origin, axis, internal = tube.origin, tube.axis, tb["internal"]
        bottom = tube.major + tube.minor if internal else tube.major - tube.minor
        depths = []
        for t, r in ((tb["t0"], tb["r0"]), (tb["t1"], tb["r1"])):
            rise = _lip(faces_across(infos, tb["faces"], origin, axis, t, tol), origin, axis, r, not internal, tol)
            depths.append(None if rise is None else abs(r - bottom) + rise)
        if None in depths:
            continue
        out.append({"center": add(origin, mul(axis, (tb["t0"] + tb["t1"]) / 2)), "axis": axis,
                    "diameter": 2 * bottom, "depth": min(depths), "width": tb["t1"] - tb["t0"],
                    "profile": "round", "internal": internal, "faces": tb["faces"]})
    return out


def grooves(infos: list[FaceInfo], used: set) -> list[dict]:
    """Grooves round a shaft (a circlip's, a pulley's V) and in a bore (an O-ring's, flat-bottomed).

    * **flat**: a cylinder all the way round (its faces on one axis line, one radius) with walls at
      both ends, coaxial rings (planes or cones), that rise from it: out round a shaft (a convex
      bottom), in within a bore (a concave one, whose faces the hole's run also holds: the hole
      stays a hole). A shaft step, or a counterbore, has such a wall at one end only.
    * **v**: two coaxial cones sloping opposite ways: convex ones meeting at their narrow ends round
      a shaft (a pulley's), concave ones meeting at their wide ends in a bore.
    * **round**: a concave torus all the way round (:func:`_round_grooves`), round a shaft or in a
      bore.

    ``diameter`` is the bottom's, ``depth`` to the lower of the two walls, ``width`` along the axis
    (the bottom's for flat, the opening's for v), ``center`` on the axis midway."""
    tol = 1e-6 * part_scale(infos) + 1e-6
    out = []
    for g in _round_grooves(infos, tol * 10):
        used.update(fi.index for fi in g.pop("faces"))
        out.append(g)
    cyl = [fi for fi in infos if fi.kind == "cylinder" and fi.span >= FULL * 0.5 and fi.concave is not None]
    for line in lines(cyl, tol * 10):
        origin, axis, segs = segments(line, tol * 10)
        for sg in segs:
            if sg["span"] < FULL or len({fi.concave for fi in sg["faces"]}) != 1:
                continue
            r, outward = sg["r0"], sg["faces"][0].concave is False
            walls = [faces_across(infos, sg["faces"], origin, axis, t, tol * 10) for t in (sg["t0"], sg["t1"])]
            rises = [_rise(w, origin, axis, r, outward, tol * 10) for w in walls]
            if None in rises:
                continue
            out.append({"center": add(origin, mul(axis, (sg["t0"] + sg["t1"]) / 2)), "axis": axis,
                        "diameter": 2 * r, "depth": min(rises), "width": sg["t1"] - sg["t0"], "profile": "flat",
                        "internal": not outward})
            used.update(fi.index for fi in sg["faces"])
            used.update(w.index for ws in walls for w in ws if w.kind == "cone")  # angled walls: not chamfers
    # a bore's cones are in its hole's run (``used``): an internal V's flanks are looked at all the same
    cones = [fi for fi in infos if fi.kind == "cone" and fi.concave is not None and fi.span >= FULL * 0.98
             and (fi.concave or fi.index not in used)]
    taken: set = set()
    for i, a in enumerate(cones):
        for b in cones[i + 1:]:
            if (a.index in taken or b.index in taken or b.concave != a.concave or b.index not in a.neighbours
                    or not _coaxial(b, a.origin, a.axis, tol * 10)):
                continue
            shift = dot(sub(b.origin, a.origin), a.axis)
            ar0, ar1, br0, br1 = a.r0, a.r1, b.r0, b.r1
            ts = (a.t0, a.t1, b.t0 + shift, b.t1 + shift)
            if (ar1 - ar0) * (br1 - br0) >= 0:
                continue  # sloping the same way: a taper in two faces
            # round a shaft the flanks meet at their narrow ends, in a bore at their wide ends
            bottom_a = ts[0] if (ar0 < ar1) != bool(a.concave) else ts[1]
            bottom_b = ts[2] if (br0 < br1) != bool(a.concave) else ts[3]
            if abs(bottom_a - bottom_b) > tol * 10:
                continue  # they meet at the other ends: a ridge, not a groove
            if a.concave:
                r = max(ar0, ar1, br0, br1)
                depth = r - max(min(ar0, ar1), min(br0, br1))
            else:
                r = min(ar0, ar1, br0, br1)
                depth = min(max(ar0, ar1), max(br0, br1)) - r
            out.append({"center": add(a.origin, mul(a.axis, (min(ts) + max(ts)) / 2)), "axis": a.axis,
                        "diameter": 2 * r, "depth": depth, "width": max(ts) - min(ts), "profile": "v",
                        "internal": bool(a.concave)})
            taken.update((a.index, b.index))
            used.update((a.index, b.index))
            break
    return out


def _past_rim(infos, origin, axis, t: float, outward: float, tol: float) -> float:
    """A face groove's wall end ``t`` moved past a fillet at the floor, a chamfer round the mouth
    or a rounded mouth all the way round."""
    return past_end(infos, origin, axis, t, outward, tol, (FLOOR_ROUND, MOUTH_CHAMFER, MOUTH_ROUND))


def face_grooves(infos: list[FaceInfo], mat: Material, used: set) -> list[dict]:
    """Grooves cut into a face round an axis (an O-ring face seal's, a flange's): a concave full
    cylinder (the outer wall) and a convex one inside it (the inner wall, round the island) on one
    axis line, ending at one floor (past a fillet there, a coaxial concave torus, on either wall),
    with the ring between them empty and open at the other end (the mouth), material beyond the
    floor. A cup with a post in it reads the same. Runs before holes: the outer wall is no blind
    hole, the island no boss.

    ``diameter`` is the outer wall's, ``width`` radial (the outer radius less the inner), ``depth``
    from the mouth to the floor (the lower wall's, when a rim is chamfered), ``center`` on the axis
    at the mouth, ``axis`` from the mouth into the material; ``face`` is True."""
    tol = 1e-6 * part_scale(infos) + 1e-6
    cyl = [fi for fi in infos if fi.index not in used and fi.kind == "cylinder" and fi.concave is not None
           and fi.span >= FULL * 0.5]
    out = []
    for line in lines(cyl, tol * 10):
        origin, axis, segs = segments(line, tol * 10)
        full = [s for s in segs if s["span"] >= FULL]
        for o in (s for s in full if s["faces"][0].concave):
            for i in (s for s in full if s["faces"][0].concave is False and s["r0"] < o["r0"] - tol * 10):
                if not (i["t1"] > o["t0"] + tol and o["t1"] > i["t0"] + tol):
                    continue  # no common axial range: a step, not a ring
                w = sub(o["faces"][0].mid, origin)
                ring = add(origin, mul(unit(sub(w, mul(axis, dot(w, axis)))), (o["r0"] + i["r0"]) / 2))
                step = max(1e-4, 1e-3 * (o["r0"] - i["r0"]))
                if mat.inside(add(ring, mul(axis, (max(o["t0"], i["t0"]) + min(o["t1"], i["t1"])) / 2))):
                    continue
                ends = []
                for ta, tb, sign in ((o["t0"], i["t0"], -1.0), (o["t1"], i["t1"], 1.0)):
                    fa, fb = (_past_rim(infos, origin, axis, t, sign, tol * 10) for t in (ta, tb))
                    far, near = (min(fa, fb), max(fa, fb)) if sign < 0 else (max(fa, fb), min(fa, fb))
                    ends.append((abs(fa - fb) <= tol * 10, mat.inside(add(ring, mul(axis, far + sign * step))),
                                 far, near))
                (even_lo, solid_lo, far_lo, near_lo), (even_hi, solid_hi, _, near_hi) = ends
                if solid_lo == solid_hi or not (even_lo if solid_lo else even_hi):
                    continue  # through (a loose island), closed, or walls ending at two floors
                floor, mouth, sign = (far_lo, near_hi, -1.0) if solid_lo else (ends[1][2], near_lo, 1.0)
                out.append({"center": add(origin, mul(axis, mouth)), "axis": mul(axis, sign), "diameter": 2 * o["r0"],
                            "depth": abs(mouth - floor), "width": o["r0"] - i["r0"], "profile": "flat",
                            "internal": False, "face": True})
                used.update(fi.index for s in (o, i) for fi in s["faces"])
                break
    return out

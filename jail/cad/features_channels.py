"""Recognise channels and steps: straight flat-floored cuts that run out of the part.

A **floor** is a planar face, or coplanar faces a groove along them splits (a V or a round groove
under their plane: a V-slot extrusion's marker groove; ``floor_faces``); a **wall** rises from it:
a planar face square to it, sharing an edge with it (or through a floor rounding, a concave quarter
cylinder along that edge, or a corner slope, a plane leaning between the two), lying wholly on the
floor's open side. Walls in one plane are one wall (a wall split by crossing cuts) when they
cover at least half its length (two blocks standing in a row are no wall).

* **Channel** (a slot with square or open ends, ``features_slots``' kind): two walls of one
  floor facing each other across it, the nearest such pair, with nothing between them. Its ends
  are read from what the walls meet there: an end wall facing back into the channel (or a
  corner radius turning into one) at both closes it, "square"; else it is "open" (a U
  channel across a block has two, a square-ended slot at an edge one). A wall meeting a half
  cylinder is a round-ended slot's (``features_slots`` finds those) and is left alone. A pair
  closed at both ends is a pocket (``features_pockets``), not listed here.
* **Step** (a rebate, a shoulder): one wall, its floor running from it to a free edge (nothing
  rises just past it: the part's side, an edge rounding or chamfer falls away). ``side`` points
  from the wall across the floor to that edge, no wider than the wall is long. Its ends are read
  as a channel's; a wall closed at both ends (a pocket's side, a channel's end wall) is no step.
  Past an open end the floor may run on as far as the step is wide or half as far as it is long
  (into the next step round a corner: a shoulder all round a block is four steps; the plate round
  a small block standing on it is none).

Either is entered where nothing stands over its walls (a pocket's walls read sideways are no
channel), past a chamfer or a rounding along their tops, from outside: nothing stands over its
mouth either (the corners of a T-slot's cavity, under its lips, are no steps). Its floor runs along the walls no
further than they do, out to the end walls (the plate round a rectangular boss, or between two
bosses or raised letters, is no floor of theirs). And it is cut from material, probed just
behind each wall (as far as the cut is wide) and under the floor (as deep as it is): a step
needs one of the two, a channel two of the three, a wall among them. So an L or U profile (a
bent bracket, a channel section) and the gaps between ribs or fins (a lego brick's inner
ridges) are shapes, not cuts, and are not listed. A notch reads as a cut from either face beside
it; :func:`find` keeps the reading entered from the larger face.

* **T-slot** (a channel's kind, with ``tee``): a channel whose walls have material over them, lips
  (planes facing its floor along both walls' tops) with a narrower mouth rising from their inner
  edges, open to the outside. Its width and depth are the mouth's and the whole depth; ``tee`` the
  cavity's width and height.

Not found: slanted walls (``features_drafted`` reads V grooves and dovetails), walls that are not
planes, a floor that is not one plane (a channel opening into a pocket at its floor's level), a
branch of a channel (its floor runs on into the channel it leaves).

Runs after pockets (``features.find``), on the faces the other finders left (``used``). Blocks
nothing (a computation); OCP is imported by the modules it uses: jailed processes and tests only.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from jail.cad import features_walls as fw
from jail.cad.features_faces import FaceInfo, cross, dot, mul
from jail.cad.features_find import part_scale
from jail.cad.features_material import Material


def _rising(floor: FaceInfo, infos, used: set, tol: float, cache: dict) -> list[tuple[FaceInfo, FaceInfo | None]]:
    """The walls rising from ``floor``: (wall, the floor rounding or corner slope between them or None)."""
    n, h0 = floor.normal, dot(floor.mid, floor.normal)
    members = _members(floor)
    out = []
    for j in floor.neighbours:
        g = infos[j]
        if j in used:
            continue
        if g.kind == "plane":
            cands, via = [g], None
            if g.normal is not None and fw.SQUARE_TO < dot(g.normal, n) < 1 - fw.SQUARE_TO:
                cands, via = [infos[k] for k in g.neighbours if k not in members], g  # a corner slope
        elif (g.kind == "cylinder" and g.concave and abs(dot(g.axis, n)) < fw.SQUARE_TO
              and g.span <= fw.CORNER_SPAN):
            cands, via = [infos[k] for k in g.neighbours if k not in members], g
        else:
            continue
        for w in cands:
            if (w.kind != "plane" or w.normal is None or w.index in used or abs(dot(w.normal, n)) > fw.SQUARE_TO
                    or (via is not None and not _along(via, w, n))):
                continue
            if fw.rises(w, n, h0, tol, cache):
                out.append((w, via))
    return out


def _along(via: FaceInfo, w: FaceInfo, n) -> bool:
    """Does ``via`` (a floor rounding: a cylinder; a corner slope: a plane) run along the corner
    between the floor (normal ``n``) and the wall ``w``, turning from one to the other? A slope
    leans towards the wall's side: its normal lies between the two."""
    if via.kind == "cylinder":
        return abs(dot(w.normal, via.axis)) <= fw.SQUARE_TO
    return abs(dot(via.normal, cross(n, w.normal))) <= fw.SQUARE_TO and dot(via.normal, w.normal) > fw.SQUARE_TO


def _members(floor) -> set:
    """The face indices of a floor (one face, or the coplanar faces of a floor a groove splits)."""
    return set(floor.index[1]) if isinstance(floor.index, tuple) else {floor.index}


def floor_faces(infos: list[FaceInfo], used: set, tol: float, cache: dict) -> list[FaceInfo]:
    """The planar faces that may be floors, those a groove along them splits joined as one: coplanar
    faces (normal and level) that a groove joins (``_across_groove``: a marker groove along a
    T-slot's floor). A joined floor is a ``FaceInfo`` of the first face's plane with the faces'
    edges and outer neighbours, its ``index`` ("floor", their indices)."""
    planes = [fi for fi in infos if fi.kind == "plane" and fi.normal is not None and fi.index not in used]
    keys = [(tuple(round(x, 9) for x in fi.normal), round(dot(fi.mid, fi.normal), 6)) for fi in planes]
    level: dict = {}
    for fi, k in zip(planes, keys):
        level.setdefault(k, set()).add(fi.index)
    out, joined = [], set()
    for fi, k in zip(planes, keys):
        if fi.index in joined:
            continue
        group, todo = {fi.index}, [fi]
        mates = level[k]
        while len(mates) > 1 and todo:
            for g in _across_groove(todo.pop(), infos, mates, tol, cache) - group:
                group.add(g)
                todo.append(infos[g])
        if len(group) == 1:
            out.append(fi)
            continue
        ids = tuple(sorted(group))
        joined.update(ids)
        members = [infos[i] for i in ids]
        edges = {k: e for g in members for k, e in g.edges.items()}
        nbrs = set().union(*(g.neighbours for g in members)) - group
        out.append(replace(fi, index=("floor", ids), edges=edges, neighbours=nbrs, outer=None, leans={}))
    return out


def _across_groove(f: FaceInfo, infos, mates: set, tol: float, cache: dict) -> set:
    """The faces of ``mates`` (coplanar with ``f``) that a groove along ``f`` joins to it: a round
    groove (a concave cylinder along the plane) or a V (two planes leaning to each other), its
    faces under the plane. A cut's square walls join nothing: two faces a through slot or a step
    leaves stay apart. Faces are placed (their points read) only for a groove that meets a mate."""
    n, h0 = f.normal, dot(f.mid, f.normal)

    def shaped(g: FaceInfo) -> bool:  # by its kind and direction alone
        if g.kind == "plane":
            return g.normal is not None and fw.SQUARE_TO < abs(dot(g.normal, n)) < 1 - fw.SQUARE_TO
        return g.kind == "cylinder" and bool(g.concave) and abs(dot(g.axis, n)) < fw.SQUARE_TO

    def under(g: FaceInfo) -> bool:  # wholly under the plane and off it: rising from it, turned over
        return fw.rises(g, mul(n, -1.0), -h0, tol, cache)

    out = set()
    for j in f.neighbours:
        g = infos[j]
        if not shaped(g):
            continue
        found = (g.neighbours & mates) - {f.index}
        if found and under(g):
            out |= found
        if g.kind == "plane":  # a V's other flank
            for k in g.neighbours - {f.index}:
                h = infos[k]
                found = (h.neighbours & mates) - {f.index}
                if found and h.kind == "plane" and shaped(h) and under(g) and under(h):
                    out |= found
    return out


def _mouth(walls, infos, fr: fw.Frame, depth: float, tol: float) -> float:
    """The area of the faces a cut is entered from: planes facing as its floor, at its walls' tops
    (next to them, or past a chamfer or a rounding along them)."""
    seen: dict = {}
    near = {j for w in walls for j in w.neighbours}
    for j in near | {k for i in near for k in infos[i].neighbours}:
        g = infos[j]
        if (g.kind == "plane" and dot(g.normal, fr.n) > 1 - 1e-6
                and abs(dot(g.mid, fr.n) - fr.h0 - depth) <= tol):
            seen[j] = g.area
    return sum(seen.values())


def find(infos: list[FaceInfo], mat: Material, used: set) -> tuple[list[dict], list[dict]]:
    """(channels as slots, steps); their walls (and floor roundings) join ``used``."""
    tol = 1e-6 * part_scale(infos) + 1e-6
    cache: dict = {}
    cands = []
    for floor in floor_faces(infos, used, tol, cache):
        cands += _candidates(floor, infos, mat, used, tol, cache)
    return _choose(cands, used)


def _walls(floor: FaceInfo, infos, used: set, tol: float, cache: dict) -> dict:
    """The floor's walls by plane: (faces with their floor roundings, frame, offset along the
    wall's normal, span along its own ``e``), for walls that cover half their span (a wall split by
    crossing cuts, not two blocks in a row)."""
    h0 = dot(floor.mid, floor.normal)
    out = {}
    for k, ws in fw.planes(_rising(floor, infos, used, tol, cache)).items():
        faces = [w for w, _ in ws]
        fr = fw.Frame(floor.normal, faces[0].normal, h0)
        span = fw.span(fw.points_of(faces, cache), fr.e)
        covered = sum(hi - lo for lo, hi in (fw.span(fw.points(w, cache), fr.e) for w in faces))
        if covered >= 0.5 * (span[1] - span[0]):
            out[k] = (ws, fr, dot(faces[0].mid, fr.a), span)
    return out


def _candidates(floor: FaceInfo, infos, mat: Material, used: set, tol: float, cache: dict) -> list[tuple]:
    """The cuts on ``floor``: each wall with the nearest wall facing it across the floor (a
    channel), or alone (a step). Each as (is a step, -the mouth's area, width, the floor, the walls
    and roundings, the faces that stop a step's ends, the entry)."""
    walls = _walls(floor, infos, used, tol, cache)
    out = []
    facing: dict = {}  # walls by their normal (a key's first part): a wall faces those of the opposite one
    for k in walls:
        facing.setdefault(k[0], []).append(k)
    for ka, (wa, fr, c_a, sa) in walls.items():
        faces_a, best = [w for w, _ in wa], None
        for kb in facing.get(tuple(-x for x in ka[0]), ()):
            _, fr_b, c_b, own_b = walls[kb]
            if dot(fr_b.a, fr.a) > -1 + 1e-9:
                continue
            gap, sb = -c_b - c_a, (-own_b[1], -own_b[0])  # b's e is -a's
            if gap > tol and min(sa[1], sb[1]) - max(sa[0], sb[0]) > tol and (best is None or gap < best[0]):
                best = (gap, kb, sb)
        if best is not None:
            gap, kb, sb = best
            if kb < ka:
                continue  # each pair once
            parts = wa + walls[kb][0]
            found, also = _channel(floor, infos, mat, fr, faces_a, [w for w, _ in walls[kb][0]], c_a, gap, sa, sb,
                                   tol, cache) or (None, set())
            stops: set = set()
        else:
            parts, also = wa, set()
            found, stops = _step(floor, infos, mat, fr, faces_a, c_a, sa, tol, cache) or (None, set())
        if found is not None:
            mouth = _mouth([w for w, _ in parts], infos, fr, found["depth"], tol * 10)
            taken = {w.index for w, _ in parts} | {v.index for _, v in parts if v is not None} | also
            out.append((best is None, -round(mouth, 6), round(found["width"], 6), frozenset(_members(floor)),
                        taken, stops, found))
    return out


def _choose(cands: list[tuple], used: set) -> tuple[list[dict], list[dict]]:
    """A notch reads as a cut from either face beside it (a rebate from the top or the side, a
    square-ended slot at an edge from its floor or its end wall): channels first, then each in the
    reading entered from the larger face, then the narrower. No face is a wall of two cuts, or the
    floor of one and a wall of another; a channel's floor has no step (its end wall); of two steps on
    one floor where one's wall stops the other (a stopped rebate, read along its wall or its end
    wall) the first is kept, while steps round the corners of a shoulder are all kept."""
    channels, steps, walls_taken, floors, channel_floors = [], [], set(), set(), set()
    on_floor: dict = {}  # floor: the walls of its steps, and the end walls that stop them
    for is_step, _, _, fl, taken, stops, found in sorted(cands, key=lambda c: c[:3]):
        if taken & walls_taken or taken & floors or fl & walls_taken:
            continue
        walls, ends = on_floor.setdefault(fl, (set(), set()))
        if is_step and (fl in channel_floors or taken & ends or stops & walls):
            continue
        walls_taken |= taken
        floors |= fl
        if is_step:
            walls.update(taken)
            ends.update(stops)
        else:
            channel_floors.add(fl)
        (steps if is_step else channels).append(found)
    used |= walls_taken
    return channels, steps


def _height(walls, infos, fr: fw.Frame, cache: dict) -> tuple[float, bool]:
    """How far the walls rise above the floor, past a chamfer or a rounding along their tops (a
    plane leaning back from the cut, a convex cylinder along it, no taller than the wall, leading to
    a face square to the cut's axis); and whether their tops meet only such faces (False: a face
    slanting off, not a strip: a V groove's other side, the land between two V grooves, a slope the
    cut runs into)."""
    pts = [fw.points_of(walls, cache)]
    top = fw.span(pts[0], fr.n)[1]
    plain = True
    for w in walls:
        for j in w.neighbours:
            g = infos[j]
            lean = 0.0 if g.normal is None or g.kind != "plane" else dot(g.normal, fr.n)
            if not (fw.SQUARE_TO < lean < 1 - fw.SQUARE_TO or (g.kind == "cylinder" and g.concave is False
                                                               and abs(dot(g.axis, fr.n)) < fw.SQUARE_TO)):
                continue
            shared = fw.shared_points(w, g, cache)
            if not shared or any(abs(dot(p, fr.n) - top) > 1e-6 * max(1.0, abs(top)) + 1e-6 for p in shared):
                continue  # not along the wall's top
            g_pts = fw.points(g, cache)
            hi = fw.span(g_pts, fr.n)[1]
            if hi - top <= top - fr.h0 and _leads_to_mouth(g, w, infos, fr, hi, cache):
                pts.append(g_pts)  # a strip no taller than the wall: a chamfer or a rounding
            elif g.kind == "plane":
                plain = False
    return fw.span(np.vstack(pts), fr.n)[1] - fr.h0, plain


def _leads_to_mouth(g: FaceInfo, wall: FaceInfo, infos, fr: fw.Frame, hi: float, cache: dict) -> bool:
    """Is ``g`` (a face along a wall's top) a strip: a chamfer or a rounding, meeting at its top
    (``hi`` along the cut's axis) a plane square to the axis?"""
    for k in g.neighbours:
        h = infos[k]
        if (k != wall.index and h.kind == "plane" and h.normal is not None and dot(h.normal, fr.n) > 1 - 1e-6
                and abs(dot(h.mid, fr.n) - hi) <= 1e-6 * max(1.0, abs(hi)) + 1e-6):
            return True
    return False


def _full_width(floor: FaceInfo, fr: fw.Frame, s: tuple[float, float], far: float, tol: float, cache: dict) -> bool:
    """Does the floor's far side (``far`` across from the wall) run the wall's length ``s``: a band,
    not a triangle meeting the wall at a point?"""
    pts = fw.points(floor, cache)
    across, along = pts @ np.asarray(fr.a, float), pts @ np.asarray(fr.e, float)
    edge = along[across >= far - 1e-3 * (far - float(across.min())) - tol]
    return bool(edge.size) and float(edge.min()) <= s[0] + tol and float(edge.max()) >= s[1] - tol


def _channel(floor, infos, mat, fr, faces_a, faces_b, c_a, gap, sa, sb, tol, cache) -> tuple[dict, set] | None:
    """The channel (or T-slot) the walls ``faces_a`` and ``faces_b`` make on ``floor``, and the other
    faces it takes (a T-slot's lips and mouth walls); None for none."""
    if fw.round_end(faces_a + faces_b, infos, fr.n):
        return None
    s = (max(sa[0], sb[0]), min(sa[1], sb[1]))
    if not fw.floor_within(floor, fr, (s[0] - gap / 2, s[1] + gap / 2), tol * 10, cache):
        return None  # its floor runs on past the walls (further than an end's corner radius could)
    ends, reach, _ = fw.ends((faces_a, faces_b), infos, fr, s, tol * 10, cache)
    if "open" not in ends or not fw.floor_within(floor, fr, reach, tol * 10, cache):
        return None  # closed at both ends (a pocket), or its floor runs on past the walls
    h_a, h_b = (_height(faces, infos, fr, cache)[0] for faces in (faces_a, faces_b))
    depth, mid, s_mid = min(h_a, h_b), c_a + gap / 2, (s[0] + s[1]) / 2
    if not all(fw.full_height(f, fr, (lo, hi), tol * 10, cache) for f, (lo, hi) in ((faces_a, sa), (faces_b, sb))):
        return None  # a wall is no upright band
    step = max(1e-4, 1e-3 * min(gap, depth))
    if mat.inside(fr.point(mid, s_mid, depth / 2)):
        return None  # material between the walls
    if mat.inside(fr.point(c_a - step, s_mid, h_a + step)) or mat.inside(fr.point(c_a + gap + step, s_mid, h_b + step)):
        # material over a wall: a pocket's walls read sideways, or a T-slot's cavity under its lips
        return _tee(infos, mat, fr, (faces_a, faces_b), c_a, gap, depth, s, ends, tol, cache)
    on_a, on_b = (sum(fw.span(fw.points(faces[0], cache), fr.e)) / 2 for faces in (faces_a, faces_b))  # on each wall
    backed = [mat.inside(fr.point(c_a - 0.99 * gap, on_a, depth / 2)),
              mat.inside(fr.point(c_a + gap + 0.99 * gap, on_b, depth / 2)),
              mat.inside(fr.point(mid, s_mid, -0.99 * depth))]
    if not (backed[0] or backed[1]) or sum(backed) < 2:
        return None  # a U-shaped profile, or the gap between two ribs, not a cut
    if not mat.open_along(fr.point(mid, s_mid, depth), fr.n):
        return None  # entered from a cavity under an overhang (a T-slot's undercut), not from outside
    return fw.cut(fr, mid, s, ends, gap, depth,
                {"through": False, "open_end": True, "arc": None, "counterbore": None}), set()


def _lip(walls, infos, fr: fw.Frame, h: float, side: float, tol: float, cache: dict) -> tuple | None:
    """Over a T-slot cavity's wall (its faces, ``side`` +1 for the wall at -a, -1 for the other):
    the lip (a plane facing the floor along the wall's top, level ``h``) and the mouth wall rising
    from the lip's inner edge (a plane facing as the cavity wall, across the slot). As (the mouth
    wall's offset across, its top above the floor, the faces) or None."""
    for w in walls:
        for j in w.neighbours:
            lip = infos[j]
            if lip.kind != "plane" or lip.normal is None or dot(lip.normal, fr.n) > -1 + 1e-6:
                continue
            if abs(dot(lip.mid, fr.n) - fr.h0 - h) > tol:
                continue  # not at the wall's top
            for k in lip.neighbours:
                m = infos[k]
                if (k == w.index or m.kind != "plane" or m.normal is None
                        or dot(m.normal, fr.a) * side < 1 - 1e-6):
                    continue
                if abs(fw.span(fw.points(m, cache), fr.n)[0] - fr.h0 - h) > tol:
                    continue  # it rises from the lip
                top = _height([m], infos, fr, cache)[0]
                return dot(m.mid, fr.a), top, {j, k}
    return None


def _tee(infos, mat, fr: fw.Frame, walls, c_a: float, gap: float, h: float, s: tuple[float, float], ends, tol: float,
         cache: dict) -> tuple[dict, set] | None:
    """A T-slot read from its cavity (the floor and the walls ``walls`` facing each other ``gap``
    apart, ``h`` high): lips over both walls (material over them: the caller's probes) and a
    narrower mouth between them, open to the outside. No material is probed round the cavity: an
    extrusion profile's walls are thin. The slot's width and depth are the mouth's and the whole
    depth; ``tee`` the cavity's. Returned with its lips and mouth walls."""
    lips = [_lip(walls[0], infos, fr, h, 1.0, tol * 10, cache), _lip(walls[1], infos, fr, h, -1.0, tol * 10, cache)]
    if None in lips:
        return None
    (m_a, top_a, faces_a), (m_b, top_b, faces_b) = lips
    width, depth, mid, s_mid = m_b - m_a, min(top_a, top_b), (m_a + m_b) / 2, (s[0] + s[1]) / 2
    if not (tol < width < gap - tol and c_a + tol < m_a and m_b < c_a + gap - tol and depth > h + tol):
        return None  # the mouth lies within the cavity, narrower, and rises above it
    if mat.inside(fr.point(mid, s_mid, (h + depth) / 2)) or not mat.open_along(fr.point(mid, s_mid, depth), fr.n):
        return None  # the mouth is no open gap to the outside
    found = fw.cut(fr, mid, s, ends, width, depth, {"through": False, "open_end": True, "arc": None,
                                                  "counterbore": None, "tee": {"width": gap, "height": h}})
    return found, faces_a | faces_b


def _step(floor, infos, mat, fr, faces_a, c_a, sa, tol, cache) -> tuple[dict, set] | None:
    """The step ``faces_a`` make on ``floor``, and the end walls that stop it; None for no step."""
    if fw.round_end(faces_a, infos, fr.n):
        return None
    far = fw.span(fw.points(floor, cache), fr.a)[1]
    width = far - c_a
    if width <= tol or width > sa[1] - sa[0] + tol:
        return None  # wider than long (the plate round a small block)
    depth, plain = _height(faces_a, infos, fr, cache)
    if not plain:
        return None  # the wall's top meets a slope (two faces of a V groove), no face across the cut
    # past an open end, into the step round the corner: a lip or a shoulder, as deep as it is wide
    run_on = max(width, (sa[1] - sa[0]) / 2) if depth >= width - tol else 0.0
    if not fw.floor_within(floor, fr, (sa[0] - run_on, sa[1] + run_on), tol * 10, cache) or not fw.full_height(
            faces_a, fr, sa, tol * 10, cache):
        return None  # its floor runs on too far (round a pad), or the wall is no upright band
    if not _full_width(floor, fr, sa, far, tol * 10, cache):
        return None  # the floor is no band along the wall (a stopped V groove's end face)
    ends, reach, stops = fw.ends((faces_a,), infos, fr, sa, tol * 10, cache, run_on=run_on)
    if "open" not in ends or not fw.floor_within(floor, fr, reach, tol * 10, cache):
        return None  # closed at both ends (a pocket's or a channel's end), or its floor runs on past the wall
    s_mid = (sa[0] + sa[1]) / 2
    step = max(1e-4, 1e-3 * min(width, depth))
    if (mat.inside(fr.point(c_a + width / 2, s_mid, depth / 2)) or mat.inside(fr.point(far + 2 * step, s_mid, step))
            or mat.inside(fr.point(c_a - step, s_mid, depth + step))):
        return None  # material over the floor, rising past its far edge (a floor round a boss), or over the wall
    if not (mat.inside(fr.point(c_a + width / 2, s_mid, -0.99 * depth))
            or mat.inside(fr.point(c_a - 0.99 * width, s_mid, depth / 2))):
        return None  # an L-shaped profile, not a cut
    if not mat.open_along(fr.point(c_a + width / 2, s_mid, depth), fr.n):
        return None  # entered from a cavity under an overhang (a T-slot's undercut), not from outside
    return fw.cut(fr, c_a + width / 2, sa, ends, width, depth, {"side": fr.a}), stops

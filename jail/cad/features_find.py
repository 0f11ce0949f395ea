"""Recognise machining features on a solid's faces: holes, bosses, fillets, chamfers.

Slots, grooves and pockets have their own modules (``features_slots``, ``features_grooves``,
``features_pockets``), built on the coaxial runs, crossings and end readings here.

* **Holes**: concave (material outside) cylinders and cones grouped by their common axis line;
  a run of coaxial segments with a full 360-degree cylinder is one hole (a cylinder whose gap is
  a keyway counts: ``keyway`` width and depth; so does one closed by one or two flats, a D or
  double-D hole: ``flat`` count and size across; so does one over more than half a turn with any
  other gap: ``partial``, its wall open on one side). Each end (past a rounded floor or mouth: a
  coaxial torus, :func:`past_end`) is probed with a point on the axis just beyond it (``features_material``: a ray, or OCCT's classifier), or read from the face across it
  where that face says (``open_beyond``: a mouth in a plane, a floor): outside the material = open.
  Both ends open = through; one = blind, entered from the open end. A cone at the entry that widens
  towards it is a countersink (at least ``COUNTERSINK_MIN`` times the bore it leads into; narrower,
  a chamfer round the mouth), a wider cylinder at the entry a counterbore, further wider cylinders
  that reach an end past nothing narrower a stepped hole's ``bores``. A run with no cylinder
  whose wall is a cone at most ``DRAFT_MAX`` off its axis is a drafted hole (a moulded part's):
  ``draft`` is that angle, positive when it narrows deeper in, negative when it widens (an
  undercut), the diameter the wall's at the entry.
* **Bosses**: convex full cylinders (with convex coaxial cones) whose one end sits on material
  (the base) and the other is free; with no cylinder, a drafted cone (``draft``, positive when
  it narrows towards the top; the diameter at the base).
* **Fillets**: cylinders covering less than the full circle (a part's rounded corners are convex
  ones: never holes or bosses) and tori that roll onto the faces they round along two edges
  (``features_faces.rails``), unless every one of those is a smaller rounding (a gear's root land);
  **chamfers**: narrow planar faces whose normal lies between its two neighbours' and leans against
  each (a face square to one is a wall: a T-slot's mouth between its lip and flare; size from the
  cut triangle), smaller than one of them, not the band left between two chamfers
  (``_chamfer_strips``), and cones that are neither hole nor boss (nor a flank of a V-groove, nor a taper
  longer than its radius).
Heuristics on exact B-rep geometry; a face takes part in one feature at most.
"""
from __future__ import annotations

import math

from OCP.BRep import BRep_Tool
from OCP.Geom import Geom_Line
from OCP.GeomAPI import GeomAPI_IntCS
from OCP.TopoDS import TopoDS
from OCP.gp import gp_Dir, gp_Lin, gp_Pnt

from jail.cad.features_faces import (DRAFT_MAX, TWO_PI, TopAbs_VERTEX, FaceInfo, add, along_axis, cross, dot,
                                     edge_points, end_open, mul, norm, pieces_of, rails, sub, unique, unit)
from jail.cad import features_rounds
from jail.cad.features_material import Material

FULL = 0.98 * TWO_PI
# a concave cylinder over at least this much of a turn (and short of FULL) is a hole open on one
# side; over less, and at least WALL_MIN, a notch in the face it leaves by (features_slots)
PARTIAL_MIN = 1.05 * math.pi
WALL_MIN = 0.52 * math.pi
# a cone widening to a hole's entry is a countersink when at least this many times as wide as the
# bore it leads into (a flat head's seat: ISO 7046 heads are 1.6-2x their clearance holes); a
# narrower one is an edge broken round the mouth, a chamfer (1 mm on a d=10 hole: 1.2x)
COUNTERSINK_MIN = 1.5


def part_scale(infos) -> float:
    big = max((abs(c) for fi in infos for c in fi.mid), default=1.0)
    return max(1.0, big)


# ------------------------------------------------------------------ coaxial runs
def lines(faces: list[FaceInfo], tol: float) -> list[list[FaceInfo]]:
    """Faces grouped by axis line (parallel axes, lines within ``tol``), in the order each line is
    first met; a face joins the first line it fits. Lines are looked up by direction, then by the
    cell of their foot (the point nearest the origin) and the cells around it: a plate's 600 holes
    are 600 lines, and comparing each face with every line cost 0.8 s."""
    groups: list[tuple[tuple, tuple, list]] = []
    by_dir: list[tuple[tuple, dict]] = []  # a direction, and its lines' indices by foot cell
    size = max(tol, 1e-12)
    near = [(i, j, k) for i in (-1, 0, 1) for j in (-1, 0, 1) for k in (-1, 0, 1)]
    for fi in faces:
        cells = next((c for a, c in by_dir if abs(dot(a, fi.axis)) >= 1 - 1e-9), None)
        if cells is None:
            cells = {}
            by_dir.append((fi.axis, cells))
        foot = sub(fi.origin, mul(fi.axis, dot(fi.origin, fi.axis)))
        key = tuple(math.floor(c / size) for c in foot)
        best = None
        for di, dj, dk in near:
            for g in cells.get((key[0] + di, key[1] + dj, key[2] + dk), ()):
                origin, axis, _ = groups[g]
                if best is not None and g >= best or abs(dot(axis, fi.axis)) < 1 - 1e-9:
                    continue
                w = sub(fi.origin, origin)
                if norm(sub(w, mul(axis, dot(w, axis)))) <= tol:
                    best = g
        if best is None:
            cells.setdefault(key, []).append(len(groups))
            groups.append((fi.origin, fi.axis, [fi]))
        else:
            groups[best][2].append(fi)
    return [m for _, _, m in groups]


def segments(line: list[FaceInfo], tol: float) -> tuple[tuple, tuple, list[dict]]:
    """(origin, axis, segments): faces of one line with t measured from the first's origin;
    same-kind, same-radius faces over the same axial range merged (their spans added)."""
    origin, axis = line[0].origin, line[0].axis
    segs: list[dict] = []
    for fi in line:
        shift = dot(sub(fi.origin, origin), axis)
        s = {"kind": fi.kind, "t0": fi.t0 + shift, "t1": fi.t1 + shift, "r0": fi.r0, "r1": fi.r1,
             "span": fi.span, "faces": [fi]}
        for m in segs:
            if (m["kind"] == s["kind"] and abs(m["r0"] - s["r0"]) <= tol and abs(m["r1"] - s["r1"]) <= tol
                    and abs(m["t0"] - s["t0"]) <= tol and abs(m["t1"] - s["t1"]) <= tol):
                m["span"] += s["span"]
                m["faces"] += s["faces"]
                break
        else:
            segs.append(s)
    return origin, axis, segs


def _runs(segs: list[dict], tol: float) -> list[list[dict]]:
    """Segments in axial order, cut where there is a gap along the axis."""
    runs: list[list[dict]] = []
    for s in sorted(segs, key=lambda s: (s["t0"], s["t1"])):
        if runs and s["t0"] <= max(x["t1"] for x in runs[-1]) + tol:
            runs[-1].append(s)
        else:
            runs.append([s])
    return runs


def _radius_at(run, t, tol) -> float:
    best = 0.0
    for s in run:
        if abs(s["t0"] - t) <= tol:
            best = max(best, s["r0"])
        if abs(s["t1"] - t) <= tol:
            best = max(best, s["r1"])
    return best


def entry_first(axis) -> bool:
    """For a through hole with the same ends: enter where ``axis`` (t growing) points down
    (-Z), else towards -Y, else -X: a plate drilled from the top."""
    for c in (axis[2], axis[1], axis[0]):
        if abs(c) > 1e-9:
            return c < 0
    return True


def _enter_a(across_a: FaceInfo | None, across_b: FaceInfo | None, axis) -> bool:
    """For a through hole with the same ends: enter at end a (t low)? From the outside, when one
    end opens into another hole's wall (a cross hole into a bore, a radial hole into a hub's bore:
    the face across is concave); else as :func:`entry_first` says."""
    inner_a, inner_b = (bool(f is not None and f.concave) for f in (across_a, across_b))
    if inner_a != inner_b:
        return inner_b
    return entry_first(axis)


def draft(s: dict) -> float | None:
    """A cone segment's angle to its axis (radians) when it is a drafted wall: at most ``DRAFT_MAX``."""
    if s["kind"] != "cone":
        return None
    a = math.atan2(abs(s["r1"] - s["r0"]), max(abs(s["t1"] - s["t0"]), 1e-12))
    return a if a <= DRAFT_MAX else None


def _coaxial_runs(cands: list[FaceInfo], tol: float, bridge=None, drafted: bool = False):
    """``(origin, axis, run, cylinders, t_start, t_end)`` for each run of full-turn coaxial
    segments of ``cands`` that holds a cylinder (what holes and bosses are made of); with
    ``drafted``, a run with no cylinder but a drafted cone (:func:`draft`) too, its drafted cones
    then in place of the cylinders. A segment short of a full turn counts when
    ``bridge(segment, origin, axis)`` returns what closes its gap (a keyway), kept in the segment
    as ``"bridge"``."""
    for line in lines(cands, tol * 10):
        origin, axis, segs = segments(line, tol * 10)
        for s in segs:
            if s["span"] < FULL and bridge is not None:
                s["bridge"] = bridge(s, origin, axis)
        segs = [s for s in segs if s["span"] >= FULL or s.get("bridge")]
        for run in _runs(segs, tol * 10):
            cyl = [s for s in run if s["kind"] == "cylinder"]
            if not cyl and drafted:
                cyl = [s for s in run if draft(s) is not None]
            if cyl:
                yield origin, axis, run, cyl, min(s["t0"] for s in run), max(s["t1"] for s in run)


# ------------------------------------------------------------------ where a hole meets its surface
def _edge_span(edge, origin, axis) -> tuple[float, float]:
    """The axial extent (min t, max t) of an edge, sampled along the curve."""
    ts = [dot(sub(p, origin), axis) for p in edge_points(edge)] or [math.nan]
    return min(ts), max(ts)


def _line_hits(fi: FaceInfo, origin, axis) -> list[float]:
    """Where the axis line meets the (untrimmed) surface of ``fi``, as t along ``axis`` (a B-spline
    face's analytic surface when it has one: its patch ends where the face does)."""
    line = Geom_Line(gp_Lin(gp_Pnt(*origin), gp_Dir(*axis)))
    try:
        surface = fi.surface if fi.surface is not None else BRep_Tool.Surface_s(TopoDS.Face(fi.face))
        inter = GeomAPI_IntCS(line, surface)
    except Exception:  # noqa: BLE001 - OCCT's Standard_Failure on an awkward surface: no crossing
        return []
    if not inter.IsDone():
        return []
    return [dot(sub((q.X(), q.Y(), q.Z()), origin), axis)
            for q in (inter.Point(i) for i in range(1, inter.NbPoints() + 1))]


def axis_crossing(infos, run, origin, axis, t_end: float, radius: float, tol: float) -> tuple[float, FaceInfo | None]:
    """The t where the hole's axis meets the surface it opens onto at its end ``t_end``.

    ``t_end`` is the run's axial extreme: on a flat face square to the axis that is the crossing;
    where the hole meets a tilted or curved face, its edge there is a curve spanning a range of
    t and the extreme is its far tip; where it curves over the mouth (a hole through a sphere),
    the edge is a circle short of where the axis meets it. The surface is one across an edge of
    the run that reaches ``t_end``; the axis line meets it (untrimmed: the hole took that part
    away) at the crossing nearest ``t_end`` of all such faces, no further than the edge's span
    plus ``radius``. A cone or cylinder round the axis itself is no such surface: the axis meets
    a cone only at its apex (a chamfer cone cut short, its apex inside the hole). Returns that t
    and the face across (``t_end`` and None when nothing qualifies)."""
    mine = {fi.index for s in run for fi in s["faces"]}
    best: tuple[float, FaceInfo] | None = None
    for s in run:
        for fi in s["faces"]:
            for j in sorted(fi.neighbours - mine):
                g = infos[j]
                if (g.kind in ("cone", "cylinder") and abs(abs(dot(g.axis, axis)) - 1) < 1e-9
                        and along_axis(g.origin, origin, axis, tol) is not None):
                    continue
                spans = [_edge_span(fi.edges[k], origin, axis) for k in fi.edges.keys() & g.edges.keys()]
                if not spans:
                    continue
                lo, hi = min(x[0] for x in spans), max(x[1] for x in spans)
                if not lo - tol <= t_end <= hi + tol:
                    continue  # an edge at the other end
                # the crossing nearest the end: within the edge's span where the face is tilted,
                # within about a radius beyond it where the face curves over the mouth (a sphere)
                reach = hi - lo + radius + tol
                for t in _line_hits(g, origin, axis):
                    if abs(t - t_end) <= reach and (best is None or abs(t - t_end) < abs(best[0] - t_end)):
                        best = (t, g)
    return best if best is not None else (t_end, None)


def faces_across(infos, faces: list[FaceInfo], origin, axis, t_end: float, tol: float) -> list[FaceInfo]:
    """The faces across the circular edges of ``faces`` at ``t_end`` (along ``axis`` from ``origin``)."""
    mine = {fi.index for fi in faces}
    out: dict[int, FaceInfo] = {}
    for fi in faces:
        for j in fi.neighbours - mine:
            spans = [_edge_span(fi.edges[k], origin, axis) for k in fi.edges.keys() & infos[j].edges.keys()]
            if spans and all(abs(lo - t_end) <= tol and abs(hi - t_end) <= tol for lo, hi in spans):
                out[j] = infos[j]
    return list(out.values())


def open_beyond(infos, faces: list[FaceInfo], origin, axis, t_end: float, sign: float, probes, mat: Material,
                tol: float) -> bool:
    """Is the region just beyond the end ``t_end`` of ``faces`` (a hole's or pocket's walls; beyond:
    along ``axis`` times ``sign``) outside the material? Read from the face across that end when it
    says (``end_open``: a mouth in a plane, or a floor), else from probes at the points
    ``probes()`` gives (outside at all of them)."""
    said = end_open(faces, faces_across(infos, faces, origin, axis, t_end, tol), mul(axis, sign))
    if said is not None:
        mat.said += 1
        return said
    return not any(mat.inside(p) for p in probes())


def round_tubes(infos: list[FaceInfo], tol: float) -> list[dict]:
    """The bottoms of round grooves: the concave faces of one torus (OCCT may split it along or
    round its tube) that together go all the way round and reach past the tube's extreme on both
    sides along the axis (a fillet at a boss' foot stops there). ``internal``: in a bore (the
    tube's outer half), else round a shaft (its inner half); ``t0``/``t1``/``r0``/``r1`` the axial
    extremes in the torus' own frame (its centre at t = 0) and the radii there."""
    tubes: dict[tuple, list[FaceInfo]] = {}  # one torus: same centre, axis and radii
    for fi in infos:
        if fi.kind == "torus" and fi.concave:
            key = tuple(round(x / tol) for x in (*fi.origin, fi.major, fi.minor)) + tuple(round(x, 6) for x in fi.axis)
            tubes.setdefault(key, []).append(fi)
    out = []
    for faces in tubes.values():
        sides = set()
        for fi in faces:
            w = sub(fi.mid, fi.origin)
            sides.add(norm(sub(w, mul(fi.axis, dot(w, fi.axis)))) > fi.major)
        bands: dict = {}  # faces over the same axial range: their spans add up
        for fi in faces:
            band = (round(fi.t0 / tol), round(fi.t1 / tol))
            bands[band] = bands.get(band, 0.0) + fi.span
        lo, hi = min(faces, key=lambda fi: fi.t0), max(faces, key=lambda fi: fi.t1)
        if len(sides) != 1 or min(bands.values()) < FULL or not (lo.t0 < -tol and hi.t1 > tol):
            continue
        out.append({"faces": faces, "internal": sides.pop(), "t0": lo.t0, "r0": lo.r0, "t1": hi.t1, "r1": hi.r1})
    return out


def step_rounds(infos: list[FaceInfo], walls: list[FaceInfo], tol: float) -> set[int]:
    """The coaxial tori that round a step inside a hole (a counterbore's, a stepped bore's), as
    indices: the round in the floor's corner (concave) or on the narrow bore's mouth (convex). One
    end is on the end of a wall in ``walls`` (concave cylinders and cones) at that wall's radius,
    the other where another wall on the same axis ends, or another such round (the step's flat
    floor between them). Joined to the hole's run they keep it one hole, as an unrounded step is;
    without them the wide bore's run ended at the round, and the narrow bore beyond it made it
    "through" (or the floor made it blind). A blind hole's rounded floor, a hole's rounded mouth
    on the part's face (nothing on the axis ends beyond) are none. They are still listed as
    fillets (the corner's radius)."""
    def frame(fi, others) -> list[tuple[int, tuple]]:
        """(index, its two (t, r) ends) of each of ``others`` on ``fi``'s axis, in ``fi``'s frame."""
        out = []
        for w in others:
            if w.index == fi.index or abs(abs(dot(w.axis, fi.axis)) - 1) > 1e-9:
                continue
            shift = along_axis(w.origin, fi.origin, fi.axis, tol)
            if shift is None:
                continue
            out.append((w.index, ((w.t0 + shift, w.r0), (w.t1 + shift, w.r1))))
        return out

    tori = [fi for fi in infos if fi.kind == "torus" and fi.concave is not None]
    on_wall: dict[int, tuple] = {}  # a torus with an end on a wall's end: (that end, the other end, the wall)
    for fi in tori:
        ends = frame(fi, walls)
        for a, b in (((fi.t0, fi.r0), (fi.t1, fi.r1)), ((fi.t1, fi.r1), (fi.t0, fi.r0))):
            on = {i for i, es in ends if any(abs(t - a[0]) <= tol and abs(r - a[1]) <= tol for t, r in es)}
            if on:
                on_wall[fi.index] = (b[0], on)
                break
    out: set[int] = set()
    partners = walls + [fi for fi in tori if fi.index in on_wall]
    for fi in tori:
        if fi.index not in on_wall:
            continue
        t_other, on = on_wall[fi.index]
        if any(i not in on and any(abs(t - t_other) <= tol for t, _ in es) for i, es in frame(fi, partners)):
            out.add(fi.index)
    return out


# ------------------------------------------------------------------ holes
def _along_wall(infos, seg: dict, origin, axis, tol: float) -> dict[int, int]:
    """The faces next to a hole's wall (the segment ``seg``) along edges that run its whole length
    (the edges of its gap), each with how many such edges it shares."""
    mine = {fi.index for fi in seg["faces"]}
    meets: dict[int, int] = {}
    for fi in seg["faces"]:
        for j in fi.neighbours - mine:
            for k in fi.edges.keys() & infos[j].edges.keys():
                lo, hi = _edge_span(fi.edges[k], origin, axis)
                if hi - lo >= seg["t1"] - seg["t0"] - tol:
                    meets[j] = meets.get(j, 0) + 1
    return meets


def _keyway(infos, seg: dict, origin, axis, tol: float) -> dict | None:
    """A bore's keyway: the gap in a hole's wall (a concave cylinder over more than half a turn, not
    all the way round) closed by a rectangular channel along the axis: two planar walls running
    the wall's length, facing each other across the gap, and a floor square to them. ``width``
    between the walls; ``depth`` from the bore's wall to the floor (the floor's distance from the
    axis less the radius). None for any other gap (a hole breaking out of the part's side)."""
    r = seg["r0"]
    if seg["kind"] != "cylinder" or not PARTIAL_MIN <= seg["span"] < FULL:
        return None
    mine = {fi.index for fi in seg["faces"]}
    walls = {j: infos[j] for j in _along_wall(infos, seg, origin, axis, tol)}
    if len(walls) != 2:
        return None
    a, b = walls.values()
    if (any(w.kind != "plane" or not w.normal or abs(dot(w.normal, axis)) > 1e-6 for w in (a, b))
            or dot(a.normal, b.normal) > -1 + 1e-6):
        return None
    width = dot(sub(b.mid, a.mid), a.normal)  # each wall's outward normal points into the channel
    if not tol < width < 2 * r or dot(sub(a.mid, b.mid), b.normal) <= tol:
        return None
    floors = [infos[j] for j in (a.neighbours & b.neighbours) - mine
              if infos[j].kind == "plane" and infos[j].normal and abs(dot(infos[j].normal, a.normal)) < 1e-6
              and abs(dot(infos[j].normal, axis)) < 1e-6]
    if len(floors) != 1:
        return None
    depth = abs(dot(sub(floors[0].mid, origin), floors[0].normal)) - r
    return {"width": width, "depth": depth} if depth > tol else None


def _gap(infos, seg: dict, origin, axis, tol: float) -> dict | None:
    """What closes the gap in a hole's wall (a concave cylinder over more than half a turn, short of
    a full one): ``{"keyway": ...}`` (:func:`_keyway`), else ``{"partial": True}``: a hole whose wall
    is open on one side (drilled across a part's edge, a saddle, a bore with two keyways). None
    for a wall of half a turn or less (a slot's end, a fillet)."""
    if seg["kind"] != "cylinder" or not PARTIAL_MIN <= seg["span"] < FULL:
        return None
    if _slot_wall(infos, seg, tol):
        return None
    kw = _keyway(infos, seg, origin, axis, tol)
    if kw is not None:
        return {"keyway": kw}
    flat = _flats(infos, seg, origin, axis, tol)
    return {"flat": flat} if flat is not None else {"partial": True}


def _flats(infos, seg: dict, origin, axis, tol: float) -> dict | None:
    """A D hole's flat, or a double-D's two: planes along the axis, each meeting the wall along two
    of its edges that run the wall's length (a chord across the circle), facing the axis, and no
    other face along such an edge. ``count``; ``across``: from one flat to the wall opposite (a D),
    between the flats (a double D). None for any other gap (a hole breaking out of a side: that
    face faces away from the axis; a keyhole's slot: each wall meets it along one edge)."""
    r = seg["r0"]
    meets = _along_wall(infos, seg, origin, axis, tol)
    if not 1 <= len(meets) <= 2 or any(n != 2 for n in meets.values()):
        return None
    dists = []
    for j in meets:
        fl = infos[j]
        if fl.kind != "plane" or not fl.normal or abs(dot(fl.normal, axis)) > 1e-6:
            return None
        dist = dot(sub(origin, fl.mid), fl.normal)  # its normal points out of the material: at the axis
        if not tol < dist < r:
            return None
        dists.append(dist)
    if len(dists) == 2:
        a, b = (infos[j].normal for j in meets)
        return {"count": 2, "across": sum(dists)} if dot(a, b) < -1 + 1e-6 else None
    return {"count": 1, "across": r + dists[0]}


def _slot_wall(infos, seg: dict, tol: float) -> bool:
    """Is this concave wall, over more than half a turn, the outer wall of an arc slot swept that
    far: its one face's straight edges meet two narrower concave half cylinders (the slot's round
    ends)?"""
    if len(seg["faces"]) != 1:
        return False
    ends = sides_of(infos, seg["faces"][0], tol)
    return ends is not None and all(fi.kind == "cylinder" and fi.concave and fi.r0 < seg["r0"]
                                    and abs(fi.span - math.pi) <= 0.02 * math.pi for fi in ends)


def holes(infos: list[FaceInfo], mat: Material, used: set) -> list[dict]:
    """Holes; a round groove in a bore (a concave torus) joins the bore's run, so the bore stays
    one hole (as a flat groove's bottom, a concave cylinder, does)."""
    tol = 1e-6 * part_scale(infos) + 1e-6
    round_in = {fi.index for tb in round_tubes(infos, tol * 10) if tb["internal"] for fi in tb["faces"]}
    # a face over more than a quarter turn: a double D's two walls are 94 degrees each at least (a
    # pocket's 90-degree corner is none)
    walls = [fi for fi in infos if fi.index not in used and fi.kind in ("cylinder", "cone") and fi.concave
             and fi.span >= WALL_MIN]
    rounds = step_rounds([fi for fi in infos if fi.index not in used], walls, tol * 10)
    cands = walls + [fi for fi in infos if fi.index in round_in | rounds and fi.index not in used]
    out = []
    for origin, axis, run, cyl, ta, tb in _coaxial_runs(
            cands, tol, lambda s, o, a: _gap(infos, s, o, a, tol * 10), drafted=True):
        wall = {id(s) for s in cyl}  # the hole's own wall: its cylinders, or its drafted cones
        drafted = cyl[0]["kind"] == "cone"
        rmain = min(min(s["r0"], s["r1"]) for s in cyl)
        step = max(1e-4, 1e-3 * rmain)
        faces = [fi for s in run for fi in s["faces"]]
        # a fillet round a blind end's floor (a concave coaxial torus): the end is past it (a probe
        # just beyond the wall would be in the hole still, and call it through)
        near = {j for fi in faces for j in fi.neighbours}
        fa, fb = (past_end(infos, origin, axis, t, sign, tol * 10, (FLOOR_ROUND, FLOOR_BALL), near)
                  for t, sign in ((ta, -1.0), (tb, 1.0)))
        open_a, open_b = (
            open_beyond(infos, faces, origin, axis, t, sign,
                        lambda t=t, sign=sign: [add(origin, mul(axis, t + sign * step))], mat, tol * 10)
            for t, sign in ((fa, -1.0), (fb, 1.0)))
        if not (open_a or open_b):
            continue  # a closed cavity, not a hole
        ra, rb = _radius_at(run, ta, tol * 10), _radius_at(run, tb, tol * 10)
        rmax = max(max(s["r0"], s["r1"]) for s in run)
        # an open end past a rounded mouth (a convex coaxial torus): the entry is the face beyond it
        ma, mb = (past_end(infos, origin, axis, t, sign, tol * 10, (MOUTH_ROUND,), near) if is_open else t
                  for t, sign, is_open in ((ta, -1.0, open_a), (tb, 1.0, open_b)))
        (ca, across_a), (cb, across_b) = (axis_crossing(infos, run, origin, axis, t, rmax, tol * 10) if m == t
                                          else (m, None) for t, m in ((ta, ma), (tb, mb)))
        if open_a and open_b:
            first = ra > rb + tol or (abs(ra - rb) <= tol and _enter_a(across_a, across_b, axis))
        else:
            first = open_a
        sign = 1.0 if first else -1.0
        t_entry = ta if first else tb
        axis_in = mul(axis, sign)
        t_in, t_out = (ca, cb) if first else (cb, ca)
        t_far = tb if first else ta
        if (t_in - t_far) * sign >= 0:  # a crossing past the far end (a sphere the hole opens into
            t_in = t_entry               # dips below its floor on the axis): the wall's end, then
        inset = (t_in - t_entry) * sign  # how far inside the extreme the axis meets the entry face

        def s_of(t):
            return (t - ta) if first else (tb - t)
        parts = []
        for s in run:
            a, b = s_of(s["t0"]), s_of(s["t1"])
            r_near, r_far = (s["r0"], s["r1"]) if a <= b else (s["r1"], s["r0"])
            parts.append({"kind": s["kind"], "s0": min(a, b), "s1": max(a, b), "r_near": r_near,
                          "r_far": r_far, "wall": id(s) in wall, "faces": s["faces"]})
        parts.sort(key=lambda p: p["s0"])
        through = open_a and open_b
        countersink = counterbore = mouth_chamfer = None
        p0 = parts[0]
        if p0["kind"] == "cone" and not p0["wall"] and p0["s0"] <= tol * 10 and p0["r_near"] > p0["r_far"] + tol:
            if p0["r_near"] >= COUNTERSINK_MIN * p0["r_far"]:
                half = math.atan2(p0["r_near"] - p0["r_far"], max(p0["s1"] - p0["s0"], 1e-12))
                countersink = {"diameter": 2 * p0["r_near"], "angle": math.degrees(2 * half)}
            else:  # an edge broken round the mouth (or a counterbore's): a chamfer
                mouth_chamfer = p0
        wide = [p for p in parts if p["kind"] == "cylinder" and p["r_near"] > rmain + tol * 10]
        if wide and wide[0]["s0"] <= (p0["s1"] if countersink or mouth_chamfer else 0.0) + tol * 10:
            # to its floor: past a round or a chamfer in its floor's corner (in the run: it starts
            # at the wall's end, at the wall's radius)
            floor = _corner(parts, wide[0], "s1", tol * 10)
            counterbore = {"diameter": 2 * wide[0]["r_near"], "depth": floor - inset}
        bores = _bores(parts, [p for p in wide if not (counterbore and p is wide[0])], through, inset, tol * 10)
        wall_end = max(p["s1"] for p in parts if p["wall"])
        # a chamfer round a flat floor (a cone narrowing to a circle, not to a point: no drill's) is
        # part of the depth
        floor_cone = [p for p in parts if p["kind"] == "cone" and not p["wall"] and p["s0"] >= wall_end - tol * 10
                      and p["r_near"] > p["r_far"] > max(tol * 10, 1e-3 * rmain)]
        wall_end = max([wall_end] + [p["s1"] for p in floor_cone])
        bottom = wall_end - inset + (abs(fb - tb) if first else abs(fa - ta))
        main = min((p for p in parts if p["wall"]), key=lambda p: p["s0"])
        out.append({"center": add(origin, mul(axis, t_in)), "axis": axis_in,
                    "diameter": 2 * (main["r_near"] if drafted else rmain),
                    # positive: narrower deeper in (it leaves a mould); negative: wider (an undercut)
                    "draft": (math.degrees(draft(cyl[0])) * (1.0 if main["r_far"] <= main["r_near"] else -1.0)
                              if drafted else None),
                    "depth": None if through else bottom, "through": through, "countersink": countersink,
                    "counterbore": counterbore, "bores": bores,
                    "length": abs(t_out - t_in) if through else bottom,
                    "keyway": next((s["bridge"]["keyway"] for s in cyl if s.get("bridge", {}).get("keyway")), None),
                    "flat": next((s["bridge"]["flat"] for s in cyl if s.get("bridge", {}).get("flat")), None),
                    "partial": any(s.get("bridge", {}).get("partial", False) for s in cyl)})
        # a through hole's exit chamfer (a cone widening out of the far end), and a chamfer round the
        # mouth, have no field of the hole's: they stay chamfers
        end = max(p["s1"] for p in parts)
        as_chamfers = {fi.index for p in parts if through and p["kind"] == "cone" and not p["wall"]
                       and p["s1"] >= end - tol * 10 and p["r_far"] > p["r_near"] + tol * 10
                       and p is not parts[0] for fi in p["faces"]}
        as_chamfers |= {fi.index for fi in (mouth_chamfer or {}).get("faces", ())}
        # and a chamfer in a wider bore's floor corner, as a round there stays a fillet
        as_chamfers |= {fi.index for w in wide for q in _in_corner(parts, w, tol * 10) if q["kind"] == "cone"
                        and not q["wall"] and q["r_near"] > q["r_far"] + tol * 10 for fi in q["faces"]}
        for s in run:  # a step's round stays a fillet too (the corner radius)
            used.update(fi.index for fi in s["faces"] if fi.index not in rounds and fi.index not in as_chamfers)
    return out


def _in_corner(parts, p, tol: float) -> list[dict]:
    """The round or chamfer in bore ``p``'s floor corner, deeper in: coaxial tori or cones in the
    run that start at its end, at its radius."""
    return [q for q in parts if q["kind"] in ("torus", "cone") and abs(q["s0"] - p["s1"]) <= tol
            and abs(q["r_near"] - p["r_far"]) <= tol]


def _corner(parts, p, at: str, tol: float) -> float:
    """Where a bore ends once a round or a chamfer in its floor's corner is counted (a coaxial torus
    or cone starting at the bore's end, at its radius): ``at`` "s1" (a floor deeper in) or "s0"."""
    if at == "s1":
        return max([p["s1"]] + [q["s1"] for q in _in_corner(parts, p, tol)])
    return min([p["s0"]] + [q["s0"] for q in parts if q["kind"] in ("torus", "cone")
                            and abs(q["s1"] - p["s0"]) <= tol and abs(q["r_far"] - p["r_near"]) <= tol])


def _bores(parts: list[dict], wide: list[dict], through: bool, inset: float, tol: float) -> list[dict]:
    """A stepped hole's bores besides its counterbore: cylinders wider than its diameter that reach
    the entry (or a through hole's far end) past nothing narrower (a groove in the bore, narrower
    on both sides, is none: it is a groove). Each is ``{diameter, start, end}``, measured along the
    axis from the entry, past a round or a chamfer in its floor's corner; the same radius over
    adjoining faces is one bore."""
    out: list[dict] = []
    for p in sorted(wide, key=lambda p: p["s0"]):
        r = p["r_near"]
        near = [q for q in parts if q["s1"] <= p["s0"] + tol]
        far = [q for q in parts if q["s0"] >= p["s1"] - tol]
        to_entry = all(min(q["r_near"], q["r_far"]) >= r - tol for q in near)
        to_exit = through and all(min(q["r_near"], q["r_far"]) >= r - tol for q in far)
        if not (to_entry or to_exit):
            continue
        start = (_corner(parts, p, "s0", tol) if to_exit and not to_entry else p["s0"]) - inset
        end = (_corner(parts, p, "s1", tol) if to_entry else p["s1"]) - inset
        last = out[-1] if out else None
        if last and abs(last["diameter"] - 2 * r) <= 2 * tol and start <= last["end"] + tol:
            last["end"] = max(last["end"], end)
        else:
            out.append({"diameter": 2 * r, "start": max(start, 0.0), "end": end})
    return out


# ------------------------------------------------------------------ bosses
def bosses(infos: list[FaceInfo], mat: Material, used: set) -> list[dict]:
    """Bosses; a round groove round a shaft (a concave torus) joins the shaft's run, so a grooved
    shaft is not two bosses either side of its groove (a flat groove's bottom, a convex cylinder,
    is in the run already)."""
    tol = 1e-6 * part_scale(infos) + 1e-6
    round_out = {fi.index for tb in round_tubes(infos, tol * 10) if not tb["internal"] for fi in tb["faces"]}
    cands = [fi for fi in infos if fi.index not in used and ((fi.kind in ("cylinder", "cone")
             and fi.concave is False and fi.span >= FULL * 0.5) or fi.index in round_out)]
    out = []
    for origin, axis, run, cyl, ta, tb in _coaxial_runs(cands, tol, drafted=True):
        drafted = cyl[0]["kind"] == "cone"
        r = max(max(s["r0"], s["r1"]) for s in cyl)
        mid = cyl[0]["faces"][0].mid
        w = sub(mid, origin)
        rdir = unit(sub(w, mul(axis, dot(w, axis))))
        step = max(1e-4, 1e-3 * r)
        probe = add(origin, mul(rdir, 0.95 * r))
        # past a rounded top (a convex coaxial torus): a probe beside the wall's end is in it
        near = {j for s in run for fi in s["faces"] for j in fi.neighbours}
        ra, rb = (past_end(infos, origin, axis, t, sign, tol * 10, (MOUTH_ROUND,), near)
                  for t, sign in ((ta, -1.0), (tb, 1.0)))
        in_a = mat.inside(add(probe, mul(axis, ra - step)))
        in_b = mat.inside(add(probe, mul(axis, rb + step)))
        if in_a == in_b:
            continue  # a free cylinder (the whole part, a shaft end) or a neck
        base, sign = (ta, 1.0) if in_a else (tb, -1.0)
        slope = None
        if drafted:  # the wall's radius at the end nearest the base; positive: narrower towards the top
            s = min(cyl, key=lambda s: min(abs(s["t0"] - base), abs(s["t1"] - base)))
            r, r_top = (s["r0"], s["r1"]) if abs(s["t0"] - base) <= abs(s["t1"] - base) else (s["r1"], s["r0"])
            slope = math.degrees(draft(s)) * (1.0 if r_top <= r else -1.0)
        base = past_end(infos, origin, axis, base, -sign, tol * 10, (FLOOR_ROUND,))
        out.append({"center": add(origin, mul(axis, base)), "axis": mul(axis, sign), "diameter": 2 * r,
                    "height": abs((rb if in_a else ra) - base),
                    "draft": slope})
        walls = {id(s) for s in cyl}
        for s in run:  # a chamfer on the boss' top stays a chamfer
            used.update(fi.index for fi in s["faces"] if fi.kind == "cylinder" or id(s) in walls)
    return out


def fillet_foot(infos, origin, axis, t, outward: float, tol: float, near=None, convex: bool = False,
                round_span: float = FULL) -> float:
    """``t`` moved past a concave coaxial torus (a fillet at the boss' foot, round a blind hole's
    floor) that starts at ``t``; with ``convex``, past convex ones that go ``round_span`` round
    together (all the way: a hole's rounded mouth, a boss' rounded top; half: a slot's end; a
    part's rounded edge partly round the axis is not one). ``near``: the indices of the faces to
    look at (the walls' neighbours), else every face."""
    span, far = 0.0, t
    for fi in (infos if near is None else (infos[j] for j in near)):
        if fi.kind != "torus" or fi.concave is None or fi.concave == convex or abs(abs(dot(fi.axis, axis)) - 1) > 1e-9:
            continue
        shift = along_axis(fi.origin, origin, axis, tol)
        if shift is None:
            continue
        lo, hi = fi.t0 + shift, fi.t1 + shift
        if outward < 0 and abs(hi - t) <= max(tol, 1e-6 * fi.minor):
            if not convex:
                return lo
            span, far = span + fi.span, lo
        if outward > 0 and abs(lo - t) <= max(tol, 1e-6 * fi.minor):
            if not convex:
                return hi
            span, far = span + fi.span, hi
    return far if span >= round_span else t


# ------------------------------------------------------------------ ends and sides
FLOOR_ROUND, FLOOR_CHAMFER, MOUTH_CHAMFER, MOUTH_ROUND = "floor round", "floor chamfer", "mouth chamfer", "mouth round"
FLOOR_BALL = "floor ball"


def ball_floor(infos, origin, axis, t: float, outward: float, tol: float, near=None) -> float:
    """``t`` (the end of a wall round the line through ``origin`` along ``axis``) moved to the far pole
    of a concave sphere centred on that line whose cap starts there and only narrows (a ball-end
    mill's floor; the wall's end is its rim), else ``t``. Without it the probe beyond the wall's end was in the
    cap's air, and a ball-ended blind hole read "through"."""
    for fi in (infos if near is None else (infos[j] for j in near)):
        if fi.sphere is None or not fi.concave:
            continue
        tc = along_axis(fi.sphere[0], origin, axis, tol)
        if tc is None:
            continue
        pole = tc + outward * fi.sphere[1]
        # the cap beyond the wall's end, its centre not: it only narrows (a floor); a centre beyond
        # makes it bulge wider than the hole (a spherical cavity the hole opens into)
        if (pole - t) * outward > tol and (tc - t) * outward <= tol:
            return pole
    return t


def past_end(infos, origin, axis, t: float, outward: float, tol: float, kinds, near=None,
             round_span: float = FULL) -> float:
    """``t``, the end of a wall round the line through ``origin`` along ``axis`` (``outward``: the
    way out of the wall there), moved past the first of ``kinds`` that starts there: a rounded
    floor or a fillet round a boss' foot (``FLOOR_ROUND``: a concave coaxial torus), a chamfered
    floor (``FLOOR_CHAMFER``: a coaxial cone narrowing outwards), a chamfered mouth
    (``MOUTH_CHAMFER``: one widening outwards) or a rounded mouth or top (``MOUTH_ROUND``: convex
    coaxial tori going ``round_span`` round together) or a ball-end's floor (``FLOOR_BALL``: a concave
    sphere on the axis, ``ball_floor``). ``near``: the indices of the faces to look at, else every
    face. ``t`` itself when none starts there."""
    for kind in kinds:
        if kind == FLOOR_ROUND:
            moved = fillet_foot(infos, origin, axis, t, outward, tol, near)
        elif kind == FLOOR_BALL:
            moved = ball_floor(infos, origin, axis, t, outward, tol, near)
        elif kind == MOUTH_ROUND:
            moved = fillet_foot(infos, origin, axis, t, outward, tol, near, convex=True, round_span=round_span)
        else:
            moved = entry_cone(infos, origin, axis, t, outward, tol, narrowing=kind == FLOOR_CHAMFER, near=near)
        if moved != t:
            return moved
    return t


def entry_cone(infos, origin, axis, t_end: float, outward: float, tol: float, narrowing: bool = False,
               near=None) -> float:
    """``t_end`` (an open end of a wall round the line through ``origin`` along ``axis``) moved past
    a coaxial cone that starts there and widens outwards: the chamfer round the opening's edge;
    with ``narrowing``, one that narrows outwards: a chamfer round a floor. ``near``: the indices
    of the faces to look at, else every face."""
    for fi in (infos if near is None else (infos[j] for j in near)):
        if fi.kind != "cone" or abs(abs(dot(fi.axis, axis)) - 1) > 1e-9:
            continue
        shift = along_axis(fi.origin, origin, axis, tol)
        if shift is None:
            continue
        lo, hi = fi.t0 + shift, fi.t1 + shift
        if outward > 0 and abs(lo - t_end) <= tol and (fi.r1 > fi.r0) != narrowing:
            return hi
        if outward < 0 and abs(hi - t_end) <= tol and (fi.r0 > fi.r1) != narrowing:
            return lo
    return t_end


def sides_of(infos, a: FaceInfo, tol: float) -> list[FaceInfo] | None:
    """The faces across a half cylinder's two straight edges (lines along its axis), one per edge;
    None unless there are exactly two such edges."""
    length = a.t1 - a.t0
    out = []
    for j in a.neighbours:
        for k in a.edges.keys() & infos[j].edges.keys():
            lo, hi = _edge_span(a.edges[k], a.origin, a.axis)
            if hi - lo >= length - tol:
                out.append(infos[j])
    return out if len(out) == 2 else None


# ------------------------------------------------------------------ fillets and chamfers
def _where(groups: dict, key, fi: FaceInfo, extra: dict) -> None:
    g = groups.setdefault(key, dict(extra, count=0, centers=[]))
    g["count"] += 1
    g["centers"].append(fi.mid)


RAILS = 2  # a fillet rolls onto the faces it rounds along (at least) two edges (``rails``)


def _round_radius(fi: FaceInfo, memo: dict) -> float:
    """The radius a face rounds with: a cylinder's, a torus' tube's, a B-spline rounding's
    (``features_rounds``, read once into ``memo``); 0 for any other face."""
    if fi.kind == "cylinder":
        return fi.r0
    if fi.kind == "torus":
        return fi.minor
    if fi.kind != "other":
        return 0.0
    if fi.index not in memo:
        memo[fi.index] = features_rounds.rounding(fi)
    return memo[fi.index][0] if memo[fi.index] else 0.0


def _pieces(infos: list[FaceInfo], used: set, kinds: tuple) -> list[FaceInfo]:
    """The faces of ``kinds`` short of a full turn not taken yet: where the pieces of a rounding or a
    chamfer that other cuts left apart are looked for (``pieces_of``)."""
    return [fi for fi in infos if fi.index not in used and fi.kind in kinds and fi.span < FULL]


def fillets(infos: list[FaceInfo], used: set) -> list[dict]:
    groups: dict = {}
    memo: dict = {}  # B-spline roundings by face index
    # a round round an axis (a torus) that other cuts left in pieces is one; a cylinder's pieces
    # apart along it stay apart (a hinge's knuckles, a bend cut by a relief)
    apart = _pieces(infos, used, ("torus",))
    for fi in infos:
        if fi.index in used:
            continue
        if fi.kind == "cylinder" and fi.span < FULL:
            r, convex = fi.r0, not fi.concave
        elif fi.kind == "torus":
            r, convex = fi.minor, not fi.concave
        elif fi.kind == "other" and _round_radius(fi, memo):
            r, convex = memo[fi.index]  # a rounding along a curved edge (a B-spline face)
        else:
            continue
        on = sorted(rails(fi, infos), key=lambda j: infos[j].kind == "other")  # B-spline faces last: slow to read
        if len(on) < RAILS or all(0 < _round_radius(infos[j], memo) < r * (1 - 1e-6) for j in on):
            continue  # no rounding of two faces: a turned land, a gear's tip, an arc of an outline,
            # or a face that smaller roundings blend into (a gear's root between its root fillets)
        used.update(pieces_of(fi, infos, apart))  # one fillet, however many faces it was left in
        convex = bool(convex)
        # one group per radius within a tolerance (a rounded key splits equal radii that straddle
        # its rounding, and a part read turned another way would group them differently)
        key = next((k for k in groups if k[1] == convex and abs(k[0] - r) <= 1e-5 * max(1.0, r)), (r, convex))
        _where(groups, key, fi, {"radius": r, "convex": convex})
    return sorted(groups.values(), key=lambda g: (g["radius"], not g["convex"]))


CHAMFER_SQUARE = math.radians(89)  # a chamfer leans against both faces it joins: less than this to each


def _chamfer_legs(fi: FaceInfo, by_index) -> tuple[float, float] | None:
    """The two legs of a planar chamfer face (``_chamfer_reading``), or None."""
    r = _chamfer_reading(fi, by_index)
    return None if r is None else r[0]


def _chamfer_reading(fi: FaceInfo, by_index) -> tuple[tuple[float, float], tuple[int, int]] | None:
    """(the two legs, the two planes it joins) of a planar chamfer face, or None when it does not
    look like one: a strip smaller than one of the two planes it joins (a chamfer wider than the
    band of side left beside it is one), its normal between theirs and leaning against each (not
    square to one: ``CHAMFER_SQUARE``), both edges convex (the walls of a polygonal hole meet at
    concave corners: not chamfers), and cut into the corner they made: behind both planes (a hollow
    part's rim between two opposite inner walls is in front of them), meeting each along a line
    parallel to the edge they would make, narrower across it than the wider of the two (a polygonal
    prism's side is as wide as the sides beside it, whatever letters cut its area down). Of several
    such pairs, the one whose smaller face is the largest (a thin box's upright chamfer joins its
    sides' bands, not the facets at its corners), then the one giving the shortest legs."""
    bigger = fi.area * (1 + 1e-6)  # a chamfer is smaller than one of the faces it joins
    planes = [by_index[j] for j in sorted(fi.neighbours)
              if by_index[j].kind == "plane" and by_index[j].normal
              and dot(sub(by_index[j].mid, fi.mid), fi.normal) < 0]  # convex edge: the face falls away
    big = [a for a in planes if a.area > bigger]  # each pair has one (a plate's top with 625 holes: none)
    best = None
    for a in big:
        for b in planes:
            if b is a or (b.area > bigger and b.index < a.index):
                continue  # each pair once
            na, nb, n = a.normal, b.normal, fi.normal
            phi = math.acos(max(-1.0, min(1.0, dot(na, nb))))
            if phi < math.radians(20) or phi > math.radians(160):
                continue
            th_a = math.acos(max(-1.0, min(1.0, dot(n, na))))
            th_b = math.acos(max(-1.0, min(1.0, dot(n, nb))))
            if abs(th_a + th_b - phi) > 1e-4 or th_a < 1e-3 or th_b < 1e-3:
                continue  # the normal is not between the two neighbours'
            if max(th_a, th_b) > CHAMFER_SQUARE:
                continue  # square to one of them: a wall (a T-slot's mouth between its lip and flare)
            if dot(sub(fi.mid, a.mid), na) >= 0 or dot(sub(fi.mid, b.mid), nb) >= 0:
                continue  # not in the corner the two planes make
            edge_dir = unit(cross(na, nb))
            if not (_meets_along(fi, a, edge_dir) and _meets_along(fi, b, edge_dir)):
                continue  # not along the edge they would make (a thin box's corner: its mitres)
            # width of the strip: across it, in its plane (every vertex lies on one of its two long
            # edges, also where an end is mitred; its area over its length undercounts a trapezoid)
            w = _extent(fi, unit(cross(n, edge_dir)))
            if w <= 1e-9:
                continue
            if w * (1 + 1e-6) >= max(_extent(g, unit(cross(g.normal, edge_dir))) for g in (a, b)):
                continue  # as wide as the faces it joins (a polygon's side, its area cut down by letters)
            c = math.pi - th_a - th_b
            if c <= 1e-6:
                continue
            legs = (w * math.sin(th_b) / math.sin(c), w * math.sin(th_a) / math.sin(c))
            key = (-min(a.area, b.area), sum(legs))
            if best is None or key < best[0]:
                best = (key, legs, (a.index, b.index))
    return None if best is None else best[1:]


def _remnant(fi: FaceInfo, infos, planes: dict) -> bool:
    """Is ``fi`` in one plane with a larger face that is no chamfer: a strip left of a face a cut
    went through (the land between a V groove's wall and the part's side), not a chamfer? Two
    pieces of one chamfer (a slot across a chamfered edge) are both chamfers. ``planes``: the
    part's planar faces by rounded normal, filled on first use."""
    if not planes:
        for g in infos:
            if g.kind == "plane" and g.normal:
                planes.setdefault(tuple(round(x, 3) for x in g.normal), []).append(g)
    level = dot(fi.normal, fi.mid)
    tol = 1e-7 * max(1.0, abs(level)) + 1e-7
    return any(g.index != fi.index and g.area > fi.area and dot(g.normal, fi.normal) > 1 - 1e-9
               and abs(dot(fi.normal, g.mid) - level) <= tol and _chamfer_legs(g, infos) is None
               for g in planes.get(tuple(round(x, 3) for x in fi.normal), ()))


def _extent(fi: FaceInfo, d) -> float:
    ts = []
    for vx in unique(fi.face, TopAbs_VERTEX):
        p = BRep_Tool.Pnt_s(TopoDS.Vertex(vx))
        ts.append(dot((p.X(), p.Y(), p.Z()), d))
    return max(ts) - min(ts) if ts else 0.0


def _groove_flank(fi: FaceInfo, infos) -> bool:
    """A cone meeting another cone on the same axis that slopes the other way: one flank of a
    V-groove (a pulley's), not a chamfer."""
    for j in fi.neighbours:
        o = infos[j]
        if o.kind != "cone" or abs(abs(dot(o.axis, fi.axis)) - 1) > 1e-9:
            continue
        w = sub(o.origin, fi.origin)
        if norm(sub(w, mul(fi.axis, dot(w, fi.axis)))) > 1e-6 * max(1.0, norm(fi.origin)):
            continue
        if (fi.r1 - fi.r0) * (o.r1 - o.r0) < 0:
            return True
    return False


CHAMFER_LEGS_MAX = 5.0  # a chamfer's longer leg at most this many times its shorter (an angle of 11.3 degrees)


def chamfers(infos: list[FaceInfo], used: set) -> list[dict]:
    """Planar chamfers (``_chamfer_strips``) and conical ones, grouped by size; legs more than
    ``CHAMFER_LEGS_MAX`` apart are none."""
    groups: dict = {}
    strips = _chamfer_strips(infos, used)
    apart = _pieces(infos, used, ("cone",))
    for fi in infos:
        if fi.index in used:
            continue
        if fi.kind == "plane" and fi.normal:
            legs = strips.get(fi.index)
        elif fi.kind == "cone":
            if _groove_flank(fi, infos):
                continue
            legs = (abs(fi.r1 - fi.r0), abs(fi.t1 - fi.t0))
            if math.hypot(*legs) > max(fi.r0, fi.r1):
                continue  # longer than its radius: a taper (a cup's wall, a point), not a chamfer
        else:
            continue
        if legs is None:
            continue
        a, b = sorted(legs, reverse=True)
        if b * CHAMFER_LEGS_MAX < a:
            continue  # legs more than 5:1 apart: a loft's flat side, a mesh's sliver, not a chamfer
        equal = abs(a - b) <= 1e-4 * max(a, 1e-9) + 1e-7
        used.update(pieces_of(fi, infos, apart) if fi.kind == "cone" else (fi.index,))  # a split cone: one chamfer
        size, size2 = (a, b) if not equal else ((a + b) / 2, None)
        # one group per size within a tolerance, as fillets; its size the smallest member's, so the
        # order the faces come in (a part turned another way) does not choose it
        key = next((k for k in groups if _close(k[0], size) and (k[1] is None) == (size2 is None)
                    and (size2 is None or _close(k[1], size2))), (size, size2))
        _where(groups, key, fi, {"size": size, "size2": size2})
        g = groups[key]
        g["size"] = min(g["size"], size)
        if size2 is not None:
            g["size2"] = min(g["size2"], size2)
    return sorted(groups.values(), key=lambda g: g["size"])


def _meets_along(fi: FaceInfo, g: FaceInfo, d) -> bool:
    """Do ``fi`` and ``g`` share a straight edge along the unit direction ``d``? A chamfer meets each
    face it joins along a line parallel to the edge it took off."""
    for k in fi.edges.keys() & g.edges.keys():
        pts = edge_points(fi.edges[k], 2)
        if len(pts) == 3:
            v = sub(pts[2], pts[0])
            ln = norm(v)
            if ln > 1e-12 and norm(cross(mul(v, 1.0 / ln), d)) <= 1e-6 and norm(
                    cross(sub(pts[1], pts[0]), d)) <= 1e-6 * max(1.0, ln):
                return True
    return False


def _chamfer_strips(infos: list[FaceInfo], used: set) -> dict:
    """The legs of the planar faces that read as chamfers (``_chamfer_reading``, no remnant of a face
    a cut went through: ``_remnant``) by index, once those that read as chamfers between chamfers
    are set aside: a face whose two planes both read as chamfers is the band of side left between
    them (a plate chamfered top and bottom), unless those are such bands themselves (a thin box's
    upright edge, chamfered with the others, between two sides' bands), and two faces that each join
    the other are neither (an elongated hexagon's short sides)."""
    planes: dict = {}
    read = {fi.index: r for fi in infos if fi.index not in used and fi.kind == "plane" and fi.normal
            for r in (_chamfer_reading(fi, infos),) if r is not None and not _remnant(fi, infos, planes)}
    between = {i for i, r in read.items() if all(j in read for j in r[1])}
    # a band between two chamfers goes; a chamfer between two such bands (a thin box's upright edge,
    # chamfered with all the others) stays
    read = {i: r for i, r in read.items() if i not in between or all(j in between for j in r[1])}
    return {i: r[0] for i, r in read.items() if not any(j in read and i in read[j][1] for j in r[1])}


def _close(x: float, y: float) -> bool:
    return abs(x - y) <= 1e-5 * max(1.0, abs(x))

"""Patterns among holes (or bosses, slots, pockets, pads): bolt circles, grids and linear arrays.

Members are grouped when they have the same diameter, the same kind (through/blind, countersink,
counterbore) and axes the same way (radial patterns: any axes); their centres are projected onto the
plane across the axis. A lattice of a group whose members enter at several levels along the axis
stands when the levels rise or fall one way along each of its rows (a stepped plate drilled through,
holes drilled down into a sloping face); otherwise (a C-beam's flanges) each level is searched on its own.
A group that is no lattice as a whole may hold one beside a bolt circle: the members off the circle
(a plate's row of mounting holes beside a flange's circle); a square on a circle is also a 2x2 grid;
members still loose may make rows (``_rows``: a bar's two rows at two pitches).

* a **bolt circle**: three or more members on one circle, equally spaced all the way round; an
  **arc**: four or more on one circle, equally spaced but for one wider gap (a polar array over part
  of a turn, a bolt circle with a hole left out), ``start_angle`` at the member after the gap;
* a **grid**: the members of a group are exactly an ``nx x ny`` lattice (nx, ny >= 2) along two
  directions of that plane (the part's axes when the holes run along X, Y or Z, or within 2.6
  degrees of one: then made square to them; else, or when the
  lattice is turned in its plane, the direction from one centre to its nearest neighbour and the
  one square to it), equal pitch each;
* a **linear array**: three or more members on one line with equal pitch (not already a grid);
* a grid or linear array with **empty positions** (``empty``, ``_gapped``): when no full lattice
  holds the members, one with a few positions left empty (a 3x3 grid round a central boss, a row
  with a hole left out): at most a quarter of them, two members or more on every row and column of
  a grid, five positions or more in a row, every member at one level;
* **staggered** rows: rows along one of the part's axes at one pitch, equally spaced, every other
  row shifted by half the pitch, rows of one parity alike (a honeycomb block; not a grid);
* a **bundle**: staggered rows of different lengths, each without a gap (a heat exchanger's tube
  sheet: a round bundle on a triangular pitch), three rows or more, seven members or more;
* a **radial pattern**: three or more members whose axes lie in one plane and meet at one point
  (holes drilled from a hub's outside towards its axis), centres at one distance from that point
  and equally spaced all the way round; ``axis`` is the hub's (square to the plane). A member is
  in one radial pattern at most (the largest).

A bolt circle made of some members of a grid or an array (the four holes of one of its squares) is
not listed: the lattice already says where they are. A circle of the whole group is (a 2x2 grid).
Nor is one with another member of the group on a side of its polygon, or on a side carried on by
one more of its length (a square of holes out of two longer rows).

Pure Python on the numbers the hole finder made; nothing here touches OCCT. A group larger than
``GROUP_CAP`` is not searched for bolt circles (the search is cubic).
"""
from __future__ import annotations

import itertools
import math

from jail.cad.features_faces import add, canonical_dir, cross, dot, mul, sub, unit
from jail.wire.caps import PATTERN_EMPTY_CAP

GROUP_CAP = 40


def _angle(y: float, x: float) -> float:
    """``atan2(y, x)`` in [-pi, pi): a member on the negative X side reads -180 degrees whatever the
    sign of the rounding noise in its y (+180 for one copy of a part and -180 for another put the
    circle's start at another member)."""
    a = math.atan2(y, x)
    return -math.pi if a > math.pi - 1e-9 else a


def _frame(axis):
    """Two unit directions square to ``axis`` and to each other: the part's two other axes when
    ``axis`` lies within 2.6 degrees of one, made square to it (taken as they are, 2.5 degrees
    off, they drew a bolt circle of r=10.7 as an ellipse 0.01 mm out of round: arcs, not the circle)."""
    a = canonical_dir(unit(axis))
    ref = (0.0, 0.0, 1.0)
    for k, (u, v) in ((2, ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0))), (0, ((0.0, 1.0, 0.0), (0.0, 0.0, 1.0))),
                      (1, ((1.0, 0.0, 0.0), (0.0, 0.0, 1.0)))):
        if abs(a[k]) > 0.999:
            if abs(a[k]) == 1.0:
                return u, v
            u = unit(sub(u, mul(a, dot(u, a))))
            v = sub(v, mul(a, dot(v, a)))
            return u, unit(sub(v, mul(u, dot(v, u))))
    u = unit(cross(ref, a))
    return u, unit(cross(a, u))


def _groups(items: list[dict], tol: float, parallel: bool = True) -> list[list[int]]:
    """Indices of same-kind members (diameter, ``sig``), with axes the same way unless ``parallel`` is
    off (a tube sheet's bosses up and its bosses down are two patterns, one over the other)."""
    groups: list[list[int]] = []
    for i, it in enumerate(items):
        for g in groups:
            h = items[g[0]]
            if (abs(h["diameter"] - it["diameter"]) <= tol and h["sig"] == it["sig"]
                    and (not parallel or dot(h["axis"], it["axis"]) > 1 - 1e-6)):
                g.append(i)
                break
        else:
            groups.append([i])
    return groups


def _circle(p, q, r):
    """Centre (2D) of the circle through three 2D points, or None when they are in line (to within
    1e-9 of their spread: eight channels in a row read a circle of radius 1.6e17 from the last
    digits of their centres)."""
    ax, ay = p
    bx, by = q
    cx, cy = r
    d = 2 * (ax * (by - cy) + bx * (cy - ay) + cx * (ay - by))
    if abs(d) < max(1e-12, 1e-9 * max(math.dist(p, q), math.dist(q, r), math.dist(p, r)) ** 2):
        return None
    ux = ((ax * ax + ay * ay) * (by - cy) + (bx * bx + by * by) * (cy - ay) + (cx * cx + cy * cy) * (ay - by)) / d
    uy = ((ax * ax + ay * ay) * (cx - bx) + (bx * bx + by * by) * (ax - cx) + (cx * cx + cy * cy) * (bx - ax)) / d
    return ux, uy


def _bolt_circles(idx, pts2, tol):
    found = []
    seen = set()
    for a, b, c in itertools.combinations(range(len(idx)), 3):
        ctr = _circle(pts2[a], pts2[b], pts2[c])
        if ctr is None:
            continue
        rad = math.dist(ctr, pts2[a])
        members = [k for k in range(len(idx)) if abs(math.dist(ctr, pts2[k]) - rad) <= tol]
        key = tuple(members)
        if len(members) < 3 or key in seen:
            continue
        seen.add(key)
        spaced = _spacing([_angle(pts2[k][1] - ctr[1], pts2[k][0] - ctr[0]) for k in members], rad, tol)
        if spaced is not None:
            found.append((ctr, rad, members, *spaced))
    # keep the largest circles; drop one whose members are all in a bigger one with the same centre
    found.sort(key=lambda x: -len(x[2]))
    out = []
    for ctr, rad, members, a0, step, full in found:
        if any(set(members) <= set(m) and math.dist(ctr, c2) <= tol for c2, _, m, *_ in out):
            continue
        out.append((ctr, rad, members, a0, step, full))
    return out


def _spacing(angles: list[float], rad: float, tol: float) -> tuple[float, float, bool] | None:
    """``(start, step, full)`` for points at ``angles`` on a circle of radius ``rad``: equally spaced
    all the way round (full; start at the smallest angle), or, four or more, but for one wider gap
    (an arc; start after the gap); None otherwise."""
    angs = sorted(angles)
    gaps = [b - a for a, b in zip(angs, angs[1:])] + [angs[0] + 2 * math.pi - angs[-1]]
    eq = max(1e-3, tol / max(rad, 1e-9))
    step = 2 * math.pi / len(angs)
    if all(abs(g - step) <= eq for g in gaps):
        return angs[0], step, True
    step = min(gaps)
    wide = [i for i, g in enumerate(gaps) if abs(g - step) > eq]
    if len(angs) >= 4 and len(wide) == 1 and step > eq:  # members apart, not all at one angle
        return angs[(wide[0] + 1) % len(angs)], step, False
    return None


def _sides_go_on(members, pts2, ctr, tol) -> bool:
    """Whether another member of the group lies on a side of the polygon the circle's members
    make, or on that side carried on by one more of its length: the circle is a few holes of
    longer rows (two rows of a connector: every four holes two pitches apart are 'a bolt circle')."""
    order = sorted(members, key=lambda k: _angle(pts2[k][1] - ctr[1], pts2[k][0] - ctr[0]))
    others = [pts2[k] for k in range(len(pts2)) if k not in set(members)]
    for a, b in zip(order, order[1:] + order[:1]):
        (ax, ay), (bx, by) = pts2[a], pts2[b]
        dx, dy = bx - ax, by - ay
        side = math.hypot(dx, dy)
        if side <= tol:
            continue
        for ox, oy in others:
            along = ((ox - ax) * dx + (oy - ay) * dy) / side  # from a towards b
            off = abs((ox - ax) * dy - (oy - ay) * dx) / side
            if off <= tol and -side - tol <= along <= 2 * side + tol:
                return True
    return False


def _levels(vals, tol):
    """Distinct values (clustered within ``tol``), sorted."""
    out: list[float] = []
    for v in sorted(vals):
        if not out or v - out[-1] > tol:
            out.append(v)
    return out


def _even(levels, tol) -> float | None:
    if len(levels) < 2:
        return None
    steps = [b - a for a, b in zip(levels, levels[1:])]
    return steps[0] if all(abs(s - steps[0]) <= tol for s in steps) else None


def _lattice(g, pts3, o, u, v, of: str, tol: float, gaps: bool = False) -> dict | None:
    """The group ``g`` (centres ``pts3``) as a grid along ``u`` and ``v`` (equal pitch each, every
    cell filled) or a linear array along one of them; None when it is neither. With ``gaps``, a
    lattice with a few positions left empty stands too (``_gapped``)."""
    pts2 = [(dot(sub(p, o), u), dot(sub(p, o), v)) for p in pts3]
    us, vs = _levels([p[0] for p in pts2], tol), _levels([p[1] for p in pts2], tol)
    cells = {(next(i for i, x in enumerate(us) if abs(x - p[0]) <= tol),
              next(j for j, y in enumerate(vs) if abs(y - p[1]) <= tol)) for p in pts2}
    full = len(cells) == len(g) == len(us) * len(vs)
    pu, pv = _even(us, tol), _even(vs, tol)
    if full and len(us) >= 2 and len(vs) >= 2 and pu is not None and pv is not None:
        return {"type": "grid", "of": of, "count": len(g), "counts": [len(us), len(vs)],
                "pitch": [pu, pv], "directions": [u, v], "members": list(g)}
    if full and len(g) >= 3 and (len(us) == 1 or len(vs) == 1):
        levels, d = (us, u) if len(vs) == 1 else (vs, v)
        p = _even(levels, tol)
        if p is not None:
            order = sorted(range(len(g)), key=lambda k: dot(sub(pts3[k], o), d))
            return {"type": "linear", "of": of, "count": len(g), "pitch": p, "direction": d,
                    "members": [g[k] for k in order]}
    if gaps and len(cells) == len(g):
        return _gapped(g, pts3, o, u, v, of, tol, us, vs, cells)
    return None


# a lattice with positions left empty (``_gapped``): at most one position in GAP_SHARE empty, at most
# EMPTY_MAX empty (each is listed); a row of ROW_MIN positions or more
GAP_SHARE, EMPTY_MAX, ROW_MIN = 4, PATTERN_EMPTY_CAP, 5


def _on_pitch(levels, tol) -> tuple[float, list[int]] | None:
    """``levels`` (sorted) on one pitch with some steps left out: the smallest step, and each
    level's position counted in it from the first; None when a step is no whole number of it, or
    more than ``EMPTY_MAX`` positions are left out."""
    steps = [b - a for a, b in zip(levels, levels[1:])]
    if not steps:
        return None
    p = min(steps)
    if p <= tol:
        return None
    pos = [0]
    for s in steps:
        k = round(s / p)
        if k < 1 or abs(s - k * p) > tol:
            return None
        pos.append(pos[-1] + k)
        if pos[-1] + 1 - len(pos) > EMPTY_MAX:
            return None
    return p, pos


def _gapped(g, pts3, o, u, v, of: str, tol: float, us, vs, cells) -> dict | None:
    """A grid (every row and column holding a member) or a linear array on one pitch, with a few
    positions left empty: a 3x3 grid round a central boss, a row with one hole left out. At most
    one position in ``GAP_SHARE`` empty, a row of ``ROW_MIN`` positions or more (three holes with a
    gap between two are no row), a grid with two members or more on each of its rows and columns
    (so 3x3 or more: five holes of a 3x2 grid are a row of three and two more), at most
    ``EMPTY_MAX`` empty, and every member entering at one level along the axis (an empty
    position's entry is then that level). ``empty`` lists the empty positions' centres; None when
    the members make no such lattice."""
    a = canonical_dir(unit(cross(u, v)))
    h0 = dot(pts3[0], a)
    if any(abs(dot(p, a) - h0) > tol for p in pts3):
        return None
    pts2 = [(dot(sub(p, o), u), dot(sub(p, o), v)) for p in pts3]
    if len(us) >= 2 and len(vs) >= 2:
        pu, pv = _even(us, tol), _even(vs, tol)
        if pu is None or pv is None:
            return None
        if any(sum(1 for c in cells if c[0] == i) < 2 for i in range(len(us))) or \
                any(sum(1 for c in cells if c[1] == j) < 2 for j in range(len(vs))):
            return None
        spots = [(i, j) for j in range(len(vs)) for i in range(len(us)) if (i, j) not in cells]
        n = len(us) * len(vs)
        if not spots or len(spots) * GAP_SHARE > n or len(spots) > EMPTY_MAX:
            return None
        lift = mul(a, h0 - dot(o, a))  # from ``o``'s level (another member's, maybe) to the members'
        empty = [add(add(o, lift), add(mul(u, us[i]), mul(v, vs[j]))) for i, j in spots]
        return {"type": "grid", "of": of, "count": len(g), "counts": [len(us), len(vs)],
                "pitch": [pu, pv], "directions": [u, v], "members": list(g), "empty": empty}
    if len(us) != 1 and len(vs) != 1:
        return None
    levels, d, k = (us, u, 0) if len(vs) == 1 else (vs, v, 1)
    line = _on_pitch(levels, tol)
    if line is None:
        return None
    p, pos = line
    n = pos[-1] + 1
    spots = sorted(set(range(n)) - set(pos))
    if n < ROW_MIN or not spots or len(spots) * GAP_SHARE > n or len(spots) > EMPTY_MAX:
        return None
    start = pts3[min(range(len(g)), key=lambda i: pts2[i][k])]
    order = sorted(range(len(g)), key=lambda i: dot(sub(pts3[i], o), d))
    return {"type": "linear", "of": of, "count": len(g), "pitch": p, "direction": d,
            "members": [g[i] for i in order], "empty": [add(start, mul(d, p * i)) for i in spots]}


def _staggered(g, pts3, o, u, v, of: str, tol: float, bundle: bool = False) -> dict | None:
    """The group ``g`` as staggered rows: rows along ``u`` at one pitch, equally spaced along ``v``,
    every other row shifted by half the pitch (a honeycomb's centres; build123d's HexLocations), a
    full block: every row two members or more in a run with no gap, rows of one parity alike. With
    ``bundle``: rows of any length, each in a run with no gap, on the same half-pitch lattice (a
    round bundle of tubes). None otherwise."""
    pts2 = [(dot(sub(p, o), u), dot(sub(p, o), v)) for p in pts3]
    vs = _levels([p[1] for p in pts2], tol)
    q = _even(vs, tol)
    if q is None or len(vs) < (3 if bundle else 2) or (bundle and len(g) < 7):
        return None
    rows = [sorted(k for k in range(len(g)) if abs(pts2[k][1] - y) <= tol) for y in vs]
    rows = [sorted(r, key=lambda k: pts2[k][0]) for r in rows]
    if any(len(r) < (1 if bundle else 2) for r in rows):
        return None
    longest = max(rows, key=len)
    if len(longest) < 2:
        return None
    p = pts2[longest[1]][0] - pts2[longest[0]][0]
    if p <= tol or any(abs(pts2[b][0] - pts2[a][0] - p) > tol for r in rows for a, b in zip(r, r[1:])):
        return None
    if bundle:  # every row on the lattice: its start half a pitch off the row before's
        x0 = pts2[rows[0][0]][0]
        for i, r in enumerate(rows):
            off = ((pts2[r[0]][0] - x0) / p - 0.5 * (i % 2)) % 1.0
            if min(off, 1.0 - off) * p > tol:
                return None
        if all(len(r) == len(rows[i % 2]) and abs(pts2[r[0]][0] - pts2[rows[i % 2][0]][0]) <= tol
               for i, r in enumerate(rows)):
            return None  # a block: staggered rows say it
        return {"type": "bundle", "of": of, "count": len(g), "counts": [len(longest), len(rows)],
                "pitch": [p, q], "directions": [u, v], "members": [g[k] for r in rows for k in r]}
    # the whole block: every other row starts where the first does, the rows between half a pitch
    # before or after it, and rows of one parity are alike (a round bundle of tubes is not a grid)
    odd = pts2[rows[1][0]][0] - pts2[rows[0][0]][0]
    if abs(abs(odd) - p / 2) > tol:
        return None
    for i, r in enumerate(rows):
        like = rows[i % 2]
        if len(r) != len(like) or abs(pts2[r[0]][0] - pts2[like[0]][0]) > tol:
            return None
    return {"type": "staggered", "of": of, "count": len(g), "counts": [max(len(r) for r in rows), len(rows)],
            "pitch": [p, q], "directions": [u, v], "members": [g[k] for r in rows for k in r]}


def _row_frames(pts3, axis, tol: float) -> list:
    """Frames across ``axis`` along each way from the group's first centre to its nearest others
    (a honeycomb's rows run three ways, its six nearest neighbours alike far), each with the
    direction square to it; none when the centres coincide."""
    a = canonical_dir(unit(axis))
    p0 = pts3[0]
    ws = [sub(sub(q, p0), mul(a, dot(sub(q, p0), a))) for q in pts3[1:]]
    near = min((dot(w, w) for w in ws), default=0.0)
    if near <= 1e-18:
        return []
    out = []
    for w in ws:
        if abs(math.sqrt(dot(w, w)) - math.sqrt(near)) <= tol:
            u = canonical_dir(unit(w))
            if all(abs(abs(dot(u, f[0])) - 1) > 1e-9 for f in out):
                out.append((u, unit(cross(a, u))))
    return out


def _own_frame(pts3, axis):
    """Two directions across ``axis`` along a group's own rows: from its first centre to the
    nearest other one, and square to that; (None, None) when they coincide."""
    a = canonical_dir(unit(axis))
    p0 = pts3[0]
    q = min(pts3[1:], key=lambda p: dot(sub(p, p0), sub(p, p0)))
    w = sub(q, p0)
    w = sub(w, mul(a, dot(w, a)))
    if dot(w, w) <= 1e-18:
        return None, None
    u = canonical_dir(unit(w))
    return u, unit(cross(a, u))


def _meet(p1, d1, p2, d2, tol):
    """Where two lines (point, unit direction) meet, or None when they are parallel or pass
    further than ``tol`` apart."""
    n = cross(d1, d2)
    nn = dot(n, n)
    if nn < 1e-12:
        return None
    w = sub(p2, p1)
    if abs(dot(w, n)) / math.sqrt(nn) > tol:
        return None
    return add(p1, mul(d1, dot(cross(w, d2), n) / nn))


def _off_line(q, p, d) -> float:
    """The distance of point ``q`` from the line through ``p`` along unit ``d``."""
    w = sub(q, p)
    r = sub(w, mul(d, dot(w, d)))
    return math.sqrt(dot(r, r))


def _radials(items: list[dict], of: str, tol: float) -> list[dict]:
    """Radial patterns (module docstring): for each pair of members whose axes meet, the members
    whose axes pass through that point square to the pair's plane, at the same distance from it."""
    out: list[dict] = []
    for g in _groups(items, tol, parallel=False):
        if not 3 <= len(g) <= GROUP_CAP:
            continue
        seen: set = set()
        for i, j in itertools.combinations(g, 2):
            a, b = items[i], items[j]
            c = _meet(a["center"], unit(a["axis"]), b["center"], unit(b["axis"]), tol)
            if c is None:
                continue
            hub = canonical_dir(unit(cross(a["axis"], b["axis"])))
            rad = math.dist(a["center"], c)
            members = [k for k in g if abs(dot(unit(items[k]["axis"]), hub)) <= 1e-6
                       and _off_line(c, items[k]["center"], unit(items[k]["axis"])) <= tol
                       and abs(math.dist(items[k]["center"], c) - rad) <= tol]
            key = tuple(members)
            if len(members) < 3 or key in seen or rad <= tol:
                continue
            seen.add(key)
            u, v = _frame(hub)
            ang = {k: _angle(dot(sub(items[k]["center"], c), v), dot(sub(items[k]["center"], c), u))
                   for k in members}
            spaced = _spacing(list(ang.values()), rad, tol)
            if spaced is not None and spaced[2]:  # all the way round
                out.append({"type": "radial", "of": of, "center": c, "radius": rad, "count": len(members),
                            "axis": hub, "start_angle": math.degrees(spaced[0]),
                            "pitch_angle": math.degrees(spaced[1]), "members": sorted(members, key=ang.get)})
    out.sort(key=lambda p: -p["count"])
    kept: list[dict] = []
    for p in out:  # a member is in one radial pattern at most, the largest (a cube's side holes: round Z,
        if not any(set(p["members"]) & set(q["members"]) for q in kept):  # not round X and Y too)
            kept.append(p)
    return kept


def find(items: list[dict], of: str, tol: float = 1e-3) -> list[dict]:
    """Patterns among ``items`` (dicts with ``center``, ``axis``, ``diameter``, ``sig``); each
    pattern names its members by index into ``items``."""
    out: list[dict] = []
    for g in _groups(items, tol):
        if len(g) < 3:
            continue
        whole = _group_patterns(g, items, of, tol)
        levels = _at_levels(g, items, tol)
        if len(levels) > 1:  # a lattice across levels that alternate is none; each level may have its own
            whole = [p for p in whole if p["type"] not in LATTICES or _levels_in_runs(p, items, tol)]
            if not any(p["type"] in LATTICES and len(p["members"]) == len(g) for p in whole):
                apart = [p for lv in levels if len(lv) >= 3 for p in _group_patterns(lv, items, of, tol)]
                if _covered(apart) >= _covered(whole):
                    whole = apart
        out += whole
    return out + _radials(items, of, tol)


LATTICES = ("grid", "linear", "staggered", "bundle")


def _covered(pats: list[dict]) -> int:
    return len({m for p in pats for m in p["members"]})


def _at_levels(g: list[int], items: list[dict], tol: float) -> list[list[int]]:
    """The group ``g`` split by where its members' centres lie along their axis (within ``tol``)."""
    a = canonical_dir(unit(items[g[0]]["axis"]))
    h = {i: dot(items[i]["center"], a) for i in g}
    out: list[list[int]] = []
    for i in sorted(g, key=h.get):
        if out and h[i] - h[out[-1][-1]] <= tol:
            out[-1].append(i)
        else:
            out.append([i])
    return [sorted(lv) for lv in out]


def _levels_in_runs(p: dict, items: list[dict], tol: float) -> bool:
    """Whether the members' centres of the lattice ``p`` (a grid, an array, staggered rows) rise or
    fall one way along each of its rows and columns: holes drilled through a stepped plate (the
    upper step's entries above the lower's) or down into a sloping face, read across the axis as
    one lattice. Not so when levels alternate (a C-beam's flanges drilled in turn: two rows, not
    one at half their pitch) or members lie one over another."""
    a = canonical_dir(unit(items[p["members"][0]]["axis"]))
    o = items[p["members"][0]]["center"]
    dirs = p["directions"] if "directions" in p else [p["direction"]]
    cs = [sub(items[m]["center"], o) for m in p["members"]]
    for k, d in enumerate(dirs):
        across = [dot(c, dirs[1 - k]) for c in cs] if len(dirs) == 2 else [0.0] * len(cs)
        lines: dict[int, list[tuple[float, float]]] = {}
        rows = _levels(across, tol)
        for c, x in zip(cs, across):
            row = min(range(len(rows)), key=lambda r: abs(rows[r] - x))
            lines.setdefault(row, []).append((dot(c, d), dot(c, a)))
        for pts in lines.values():
            hs = [h for _, h in sorted(pts)]
            steps = [b - x for x, b in zip(hs, hs[1:])]
            if any(s > tol for s in steps) and any(s < -tol for s in steps):
                return False
    return True


def _group_patterns(g: list[int], items: list[dict], of: str, tol: float) -> list[dict]:
    """The patterns of one group of like members (``find``): a lattice of the whole group, or
    staggered rows, then bolt circles and arcs, on centres projected across their axis."""
    out: list[dict] = []
    if len(g) < 3:
        return out
    axis = items[g[0]]["axis"]
    u, v = _frame(axis)
    o = items[g[0]]["center"]
    pts3 = [items[i]["center"] for i in g]
    pts2 = [(dot(sub(p, o), u), dot(sub(p, o), v)) for p in pts3]
    heights = [dot(sub(p, o), canonical_dir(unit(axis))) for p in pts3]
    found = _any_lattice(g, pts3, o, u, v, axis, of, tol)
    turned = [(u2, v2) for u2, v2 in _row_frames(pts3, axis, tol)
              if min(abs(dot(u2, u)), abs(dot(u2, v))) > 1e-6]  # a block of rows turned in their plane
    for bundle in (False, True):
        for fu, fv in [(u, v)] + ([] if bundle else turned):  # a bundle with a tube out reads
            if found is None:                                   # gapless along another way
                both = [x for x in (_staggered(g, pts3, o, fu, fv, of, tol, bundle),
                                    _staggered(g, pts3, o, fv, fu, of, tol, bundle)) if x]
                found = max(both, key=lambda x: x["counts"][0], default=None)  # the longer rows read better
    if found is not None:
        out.append(found)
    lattice = found is not None  # a grid or an array: the whole group
    circles = []
    if len(g) <= GROUP_CAP:
        for ctr, rad, members, a0, step, full in _bolt_circles(g, pts2, tol):
            if lattice and len(members) < len(g):
                continue  # four holes of a grid's square: the grid says it
            if _sides_go_on(members, pts2, ctr, tol):
                continue  # a square cut out of longer rows: the rows say it
            h = sum(heights[k] for k in members) / len(members)
            c3 = add(add(o, add(mul(u, ctr[0]), mul(v, ctr[1]))), mul(canonical_dir(unit(axis)), h))
            ang = {k: (_angle(pts2[k][1] - ctr[1], pts2[k][0] - ctr[0]) - a0) % (2 * math.pi)
                   for k in members}  # from the first member round the circle
            circles.append({"type": "bolt_circle" if full else "arc", "of": of, "center": c3, "radius": rad,
                            "count": len(members), "axis": canonical_dir(unit(axis)),
                            "start_angle": math.degrees(a0), "pitch_angle": math.degrees(step),
                            "members": [g[k] for k in sorted(members, key=lambda k: ang[k] + 1e-9 * k)]})
    if not lattice:  # the members off a circle may be a grid or a row (a motor's bolt circle, the plate's corners)
        for c in sorted(circles, key=lambda c: -c["count"]):
            on = set(c["members"])
            rest = [k for k in range(len(g)) if g[k] not in on]
            if len(rest) >= 3 and (lat := _any_lattice([g[k] for k in rest], [pts3[k] for k in rest], o, u, v,
                                                      axis, of, tol)) is not None:
                out.append(lat)
                circles = [x for x in circles if x is c or not set(x["members"]) < set(lat["members"])]
                break
        loose = [k for k in range(len(g)) if all(g[k] not in x["members"] for x in circles + out)]
        if len(loose) >= 3:  # rows among them (two rows of a bar's mounting holes at two pitches)
            out += _rows([g[k] for k in loose], [pts3[k] for k in loose], o, u, v, axis, of, tol)
        for c in circles:  # a square of four on a circle is also a 2x2 grid, as a whole group of four is
            lat = _any_lattice(c["members"], [items[m]["center"] for m in c["members"]], o, u, v, axis, of, tol) \
                if c["count"] == 4 and c["type"] == "bolt_circle" and len(c["members"]) < len(g) else None
            if lat is not None and all(set(x["members"]) != set(lat["members"]) for x in out):
                out.append(lat)
    return circles + out  # circles first, as a drawing calls them out


def _rows(g, pts3, o, u, v, axis, of: str, tol: float) -> list[dict]:
    """Linear arrays among members that make no lattice together: lines of three or more members,
    equally spaced, none missing, along ``u``, ``v`` (the part's axes) or from the first member to
    its nearest others (rows turned in their plane). The way that holds the most members in rows
    first, then the same among the members left (a board's two rows of pins, and a column of three
    beside them)."""
    out: list[dict] = []
    left = list(range(len(g)))
    for _ in range(3):
        best: list[dict] = []
        sub_g, sub_p = [g[k] for k in left], [pts3[k] for k in left]
        ways = [(u, v)] + [(fu, fv) for fu, fv in _row_frames(sub_p, axis, tol)
                           if min(abs(dot(fu, u)), abs(dot(fu, v))) > 1e-6]
        for d, e in [w for fu, fv in ways for w in ((fu, fv), (fv, fu))]:
            across = [dot(sub(p, o), e) for p in sub_p]
            found = []
            for level in _levels(across, tol):
                line = [k for k in range(len(sub_g)) if abs(across[k] - level) <= tol]
                if len(line) >= 3 and (lat := _lattice([sub_g[k] for k in line], [sub_p[k] for k in line], o, d,
                                                       e, of, tol)) is not None and lat["type"] == "linear":
                    found.append(lat)
            if _covered(found) > _covered(best):
                best = found
        if not best:
            break
        out += best
        taken = {m for p in best for m in p["members"]}
        left = [k for k in left if g[k] not in taken]
        if len(left) < 3:
            break
    return out


def _any_lattice(g, pts3, o, u, v, axis, of: str, tol: float) -> dict | None:
    """``_lattice`` along ``u`` and ``v``, else along the members' own rows (turned in their plane);
    a full lattice either way before one with empty positions."""
    u2, v2 = _own_frame(pts3, axis)  # the row's or the grid's own directions, when turned
    ways = [(u, v)] + ([(u2, v2)] if u2 is not None and min(abs(dot(u2, u)), abs(dot(u2, v))) > 1e-6 else [])
    for gaps in (False, True):
        for fu, fv in ways:
            found = _lattice(g, pts3, o, fu, fv, of, tol, gaps)
            if found is not None:
                return found
    return None

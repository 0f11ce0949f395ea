"""The frame and the walls of a straight cut, shared by the channel, step and slanted-cut finders.

A cut is read in its floor's ``Frame``: ``n`` out of the floor, ``a`` across the walls, ``e`` along
them. Here: the points along a face's edges (read once per call, in ``cache``), a wall rising from
a floor (``rises``), walls in one plane taken as one (``planes``), what closes a cut's ends
(``ends``: an end wall facing back, slanted, or through a corner radius; else open), whether its
floor stays between them (``floor_within``) and its walls stand their full height at both
(``full_height``), and the reply's entry (``cut``). ``features_channels`` reads square walls with
these, ``features_drafted`` slanted ones.

Blocks nothing (a computation); OCP is imported by the modules it uses: jailed processes and tests only.
"""
from __future__ import annotations

import itertools
import math

import numpy as np

from jail.cad.features_faces import FaceInfo, add, canonical_dir, cross, dot, edge_points, mul, unit

SQUARE_TO = 1e-6        # a wall's normal is square to its floor's within this (a sine)
CORNER_SPAN = 0.6 * math.pi  # a corner radius turns by a quarter; a slot's round end by a half
QUICK_EDGES = 8  # a face's edges read one by one before all its points


class Frame:
    """Coordinates of a floor: ``n`` out of the floor, ``a`` a wall's normal, ``e`` along the wall;
    ``h0`` the floor's level along ``n``."""

    def __init__(self, n, a, h0: float):
        self.n, self.a, self.e, self.h0 = n, a, unit(cross(n, a)), h0

    def point(self, across: float, along: float, up: float):
        return add(add(mul(self.a, across), mul(self.e, along)), mul(self.n, self.h0 + up))


def _edge(fi: FaceInfo, k, cache: dict) -> list:
    """Points along ``fi``'s edge ``k`` (its index in the shape), read once."""
    pts = cache.get(("e", k))
    if pts is None:
        pts = cache[("e", k)] = edge_points(fi.edges[k])
    return pts


def points(fi: FaceInfo, cache: dict) -> np.ndarray:
    """Points along a face's edges (an array of rows), read once."""
    pts = cache.get(fi.index)
    if pts is None:
        pts = cache[fi.index] = np.array([p for k in fi.edges for p in _edge(fi, k, cache)] or [fi.mid], float)
    return pts


def points_of(faces, cache: dict) -> np.ndarray:
    return np.vstack([points(w, cache) for w in faces])


def span(pts: np.ndarray, d) -> tuple[float, float]:
    v = pts @ np.asarray(d, float)
    return float(v.min()), float(v.max())


def shared_points(a: FaceInfo, b: FaceInfo, cache: dict) -> list:
    return [p for k in a.edges.keys() & b.edges.keys() for p in _edge(a, k, cache)]


def rises(w: FaceInfo, n, h0: float, tol: float, cache: dict) -> bool:
    """Does ``w`` lie wholly on the open side of the floor plane (``n``, level ``h0``), and off it?
    Its first few edges are read one by one, stopping at a point behind the plane (a plate's face
    with 3 750 holes is no wall of its side face: its first edge says so), then all its points."""
    for k in itertools.islice(w.edges, QUICK_EDGES):
        if any(dot(p, n) - h0 < -tol for p in _edge(w, k, cache)):
            return False
    lo, hi = span(points(w, cache), n)
    return lo - h0 >= -tol and hi - h0 > tol


def planes(walls) -> dict:
    """Walls by their plane (normal, offset): a wall split in two is one."""
    out: dict = {}
    for w, via in walls:
        key = (tuple(round(x, 6) for x in w.normal), round(dot(w.normal, w.mid), 5))
        out.setdefault(key, []).append((w, via))
    return out


def round_end(faces, infos, n) -> bool:
    """Does a wall meet a half cylinder along ``n`` (a slot's or a stadium's round end)?"""
    return any(infos[j].kind == "cylinder" and infos[j].concave and abs(abs(dot(infos[j].axis, n)) - 1) < 1e-9
               and infos[j].span > CORNER_SPAN for w in faces for j in w.neighbours)


def _end(faces, infos, fr: Frame, s_end: float, sign: float, tol: float,
         cache: dict) -> tuple[str, float, set]:
    """What a wall (its faces) meets at the end ``s_end`` along ``fr.e`` (``sign``: which end):
    ("square", how far past the end the floor may run: a corner radius, a corner chamfer or a slanted
    end wall's reach, else 0; the end wall and its corner face) for an end wall facing back (directly,
    slanted, or through a corner radius), else ("open", 0, none)."""
    for w in faces:
        for j in w.neighbours:
            g = infos[j]
            pts = shared_points(w, g, cache)
            if not pts or any(abs(dot(p, fr.e) - s_end) > tol for p in pts):
                continue  # not across this end
            if g.kind == "plane" and dot(g.normal, fr.e) * sign < -1 + 1e-6:
                return "square", 0.0, {j}
            if g.kind == "plane" and dot(g.normal, fr.e) * sign < -SQUARE_TO:  # a slanted end wall, a chamfer
                return "square", max(0.0, span(points(g, cache), mul(fr.e, sign))[1] - sign * s_end), {j}
            if g.kind == "cylinder" and g.concave and abs(abs(dot(g.axis, fr.n)) - 1) < 1e-9:
                return "square", g.r0, {j} | (g.neighbours - {w.index})  # a corner radius into the end wall
    return "open", 0.0, set()


def ends(walls, infos, fr: Frame, s: tuple[float, float], tol: float, cache: dict,
          run_on: float = 0.0) -> tuple[list[str], tuple[float, float], set]:
    """Both ends' kinds; the floor's span along the walls that they allow: out to the end walls
    past their corner radii, and ``run_on`` past an open end (a step's floor runs on into the
    floor of the step it meets at a corner: a shoulder all round a block); the faces that stop
    the ends. ``walls``: each wall's faces (one, a step's; two, a channel's): an end is square
    when it closes every wall, else open."""
    kinds, reach, stops = [], [], set()
    for x, sign in ((s[0], -1.0), (s[1], 1.0)):
        read = [_end(faces, infos, fr, x, sign, tol, cache) for faces in walls]
        square = all(k == "square" for k, _, _ in read)
        kinds.append("square" if square else "open")
        reach.append(x + sign * (max(r for _, r, _ in read) if square else run_on))
        if square:
            stops.update(*(f for _, _, f in read))
    return kinds, (reach[0], reach[1]), stops


def cut(fr: Frame, mid_across: float, s: tuple[float, float], ends: list[str], width: float,
         depth: float, extra: dict) -> dict:
    """The reply's entry: ``direction`` towards the open end when one is open (else along the walls,
    canonical), ``ends`` in that order; ``center`` mid-length where the cut is entered."""
    e = fr.e
    d = canonical_dir(e)
    if ends.count("open") == 1:
        d = e if ends[1] == "open" else mul(e, -1.0)
    if dot(d, e) < 0:
        ends = ends[::-1]
    out = {"center": fr.point(mid_across, (s[0] + s[1]) / 2, depth), "axis": mul(fr.n, -1.0), "direction": d,
           "width": width, "length": s[1] - s[0], "depth": depth, "ends": ends}
    out.update(extra)
    return out


def floor_within(floor: FaceInfo, fr: Frame, s: tuple[float, float], tol: float, cache: dict) -> bool:
    """Does the floor run along the walls no further than ``s``?"""
    lo, hi = span(points(floor, cache), fr.e)
    return lo >= s[0] - tol and hi <= s[1] + tol


def full_height(walls, fr: Frame, s: tuple[float, float], tol: float, cache: dict) -> bool:
    """Does the wall stand its full height at both ends of ``s`` (an upright band, not a disc's
    segment meeting the floor along its chord)?"""
    pts = points_of(walls, cache)
    along, up = pts @ np.asarray(fr.e, float), pts @ np.asarray(fr.n, float)
    slack = 1e-3 * (up.max() - fr.h0) + tol
    return all(bool((up[np.abs(along - x) <= slack] >= up.max() - slack).any()) for x in s)

"""Roundings along curved edges: B-spline faces of one radius across, as fillets.

A fillet along a spline edge (a cam's rounded top, a spline pocket's rounded floor) is no cylinder
or torus: OCCT makes it a B-spline surface that a ball of the fillet's radius rolls along. Such a
face reads as a fillet of that radius when, at every point of a ``GRID`` x ``GRID`` grid over its
UV box, one principal curvature is the same (within ``SAME``, relative) and larger in magnitude
than the other, and its cross-section sweeps less than ``SWEEP_MAX`` (a swept pipe's goes all
the way round; a swept half-pipe channel is a groove, not a rounding). It may go all the way
along a closed outline (a cam's rounded top: a seam along it). A spline profile's
straight wall (one curvature 0) and a freeform surface (none constant) are not.

The radius is read to 5 significant digits (the surfaces are approximations: 0.7499994 for 0.75).
Convex (material inside the rounding, an outside edge) when the centre of curvature lies behind the
outward normal (``BRepGProp_Face``: orientation-aware, never build123d's Python methods).

Blocks nothing (a computation); the launcher checks the reply. OCP is imported at the top: only
jailed processes and tests import this module.
"""
from __future__ import annotations

import math

from OCP.BRepAdaptor import BRepAdaptor_Surface
from OCP.BRepLProp import BRepLProp_SLProps
from OCP.BRepTools import BRepTools
from OCP.GeomAbs import GeomAbs_BezierSurface, GeomAbs_BSplineSurface
from OCP.TopoDS import TopoDS

from jail.cad.features_faces import FaceInfo, dot

GRID = 5  # samples each way over the face's UV box
SAME = 1e-3  # relative spread of the constant curvature (OCCT's fillet surfaces are approximations)
SWEEP_MAX = 0.95 * math.pi  # a rounding's cross-section turns less than a half-pipe's
ACROSS_SAMPLES = 16  # points along the cross-section to measure the angle it turns


def rounding(fi: FaceInfo) -> tuple[float, bool] | None:
    """``(radius, convex)`` when ``fi`` (kind "other") is a B-spline rounding, else None."""
    face = TopoDS.Face(fi.face)
    ad = BRepAdaptor_Surface(face)
    if ad.GetType() not in (GeomAbs_BSplineSurface, GeomAbs_BezierSurface) or fi.normal is None:
        return None
    u0, u1, v0, v1 = BRepTools.UVBounds_s(face)
    props = BRepLProp_SLProps(ad, 2, 1e-9)
    first = None
    ks = []
    # the middle first: most freeform faces are told apart there and at the next sample
    points = [((i + 0.5) / GRID, (j + 0.5) / GRID) for i in range(GRID) for j in range(GRID)]
    points.sort(key=lambda p: (p[0] - 0.5) ** 2 + (p[1] - 0.5) ** 2)
    for a, b in points:
        props.SetParameters(u0 + (u1 - u0) * a, v0 + (v1 - v0) * b)
        if not props.IsCurvatureDefined():
            return None
        k_max, k_min = props.MaxCurvature(), props.MinCurvature()
        big, other = (k_max, k_min) if abs(k_max) >= abs(k_min) else (k_min, k_max)
        if first is None:
            first = big
            if abs(first) < 1e-9:
                return None
        if abs(big - first) > SAME * abs(first) or abs(other) >= abs(big) * (1 - SAME):
            return None
        ks.append(big)
    k = sum(ks) / len(ks)
    if _sweep(ad, props, u0, u1, v0, v1, k) >= SWEEP_MAX:
        return None
    props.SetParameters((u0 + u1) / 2, (v0 + v1) / 2)
    n = props.Normal()
    # the centre of curvature is at P + N / k; convex when it lies inside (against the outward normal)
    convex = dot((n.X() / k, n.Y() / k, n.Z() / k), fi.normal) < 0
    # to 5 significant digits: OCCT's rolling-ball surfaces are approximations (0.7499994 for 0.75)
    return float(f"{1.0 / abs(k):.5g}"), convex


def _sweep(ad, props, u0, u1, v0, v1, k: float) -> float:
    """The angle the cross-section turns: along the UV direction whose iso-line curves at ``k``,
    its length (chords at ``ACROSS_SAMPLES`` points) times ``|k|``."""
    best = None
    for along_u in (True, False):
        pts = []
        for i in range(ACROSS_SAMPLES + 1):
            t = i / ACROSS_SAMPLES
            u, v = ((u0 + (u1 - u0) * t, (v0 + v1) / 2) if along_u else ((u0 + u1) / 2, v0 + (v1 - v0) * t))
            p = ad.Value(u, v)
            pts.append((p.X(), p.Y(), p.Z()))
        length = sum(math.dist(pts[i], pts[i + 1]) for i in range(ACROSS_SAMPLES))
        bend = _bend(pts)
        if bend is not None and (best is None or abs(bend - abs(k)) < abs(best[0] - abs(k))):
            best = (bend, length)
    return math.inf if best is None else best[1] * abs(k)


def _bend(pts) -> float | None:
    """The curvature of the circle through a polyline's first, middle and last points (None: straight)."""
    a, b, c = pts[0], pts[len(pts) // 2], pts[-1]
    ab, bc, ca = math.dist(a, b), math.dist(b, c), math.dist(c, a)
    u = [b[i] - a[i] for i in range(3)]
    w = [c[i] - a[i] for i in range(3)]
    cr = (u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0])
    area2 = math.sqrt(dot(cr, cr))
    if area2 <= 1e-12 * max(ab, bc, ca) ** 2:
        return None
    return 2 * area2 / (ab * bc * ca)

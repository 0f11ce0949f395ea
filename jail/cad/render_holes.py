"""Rendering: which pixels are seen through the mouth of a hole, so a hole reads as a hole.

A hole's wall is a concave cylinder all the way round (the material outside it), or a concave
cone at most ``DRAFT_MAX`` off its axis (a drafted hole, a moulded part's: its mouths differ in
radius); OCCT may split it into faces that together go round (an imported STEP's two halves), and
a STEP file written all in NURBS holds it as B-spline faces (rational arcs swept along lines,
read as the cylinder or cone they lie on). Each
end of the wall is a disk across the hole: a *mouth*. A pixel is seen through a mouth when its line of sight crosses
that disk inside the circle and what it shows lies behind the disk: the hole's own wall and
bottom, or whatever is seen through a through hole (the plate behind it, the ground).

A *window* (a through pocket: straight walls all round a void, open at both ends, found by the
``features`` op's pocket finder on the solid's faces, its ends read from the faces across them,
never probed) is treated alike: its mouth is the outline the walls' planes bound at its end
nearer the viewer, so a rectangular window with the part's far wall behind it reads as a
window, not a painted rectangle; a window with a convex corner (an L) is inside its outline's
corners at that end (even-odd), since "inside every wall" would cut its mouth short. Blind
pockets are drawn as they are (an open box's inside is one), as are slots; solids of more than
``WINDOW_FACES`` faces are not searched for windows.

This is object space, on purpose: the depth image alone cannot tell a hole from a pocket's
corner (a floor between a boss and two walls is ringed by nearer edges exactly like a hole,
and an open box's corner was darkened as if it were one).

Blocks nothing (a picture). OCP is imported in the function that uses it.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = ["Mouths", "seen_through"]

FULL = 0.98 * 2 * math.pi
WINDOW_FACES = 1000  # the window search reads every face: ~0.05 ms each


class _FacesOnly:
    """Material probes that never answer "open": a window's ends must be read from its faces."""
    said = 0

    def inside(self, p) -> bool:
        return True


class Mouths:
    """Gathers the round hole walls of a mesh's faces; ``disks()`` gives their end disks."""

    def __init__(self):
        self._walls: dict = {}  # key: (ends, radii) rounded -> [end0, end1, radius0, radius1, span]
        # (end0, end1, unit axis, bounding radius twice, walls (k, 6) or None, outlines at both ends or None)
        self.windows: list[tuple] = []

    def add_windows(self, solid) -> None:
        """Note the through pockets of ``solid`` (a TopoDS_Solid) of at most ``WINDOW_FACES`` faces."""
        from OCP.TopAbs import TopAbs_FACE
        from OCP.TopExp import TopExp_Explorer
        from jail.cad import features_faces, features_pockets
        ex, n = TopExp_Explorer(solid, TopAbs_FACE), 0
        while ex.More():
            n += 1
            if n > WINDOW_FACES:
                return
            ex.Next()
        for p in features_pockets.pockets(features_faces.faces_of(solid, light=True), _FacesOnly(), set()):
            if not p["through"]:
                continue
            e0, e1 = (np.array(e, np.float64) for e in p["ends"])
            n = e1 - e0
            ln = float(np.linalg.norm(n))
            if ln <= 0:
                continue
            if p["convex"]:  # inside = on the inner side of every wall
                walls = np.array([(*q, *m) for q, m in p["walls"]], np.float64).reshape(-1, 6)
                rad = math.hypot(p["width"], p["length"]) / 2
                self.windows.append((e0, e1, n / ln, rad, rad, walls, None))
            elif p["outlines"] is not None and None not in p["outlines"]:  # inside its outline
                outl = tuple(np.array(o, np.float64).reshape(-1, 3) for o in p["outlines"])
                r0, r1 = (float(np.linalg.norm(o - e, axis=1).max()) for o, e in zip(outl, (e0, e1)))
                self.windows.append((e0, e1, n / ln, r0, r1, None, outl))

    def add(self, face) -> None:
        """Note ``face`` (a TopoDS_Face of a solid) when it is part of a hole's round wall."""
        from OCP.BRepAdaptor import BRepAdaptor_Surface
        from OCP.BRepTools import BRepTools
        from OCP.GeomAbs import GeomAbs_BSplineSurface, GeomAbs_Cone, GeomAbs_Cylinder
        from OCP.TopAbs import TopAbs_REVERSED
        from jail.cad.features_faces import DRAFT_MAX  # a steeper cone is a countersink or chamfer, no wall
        ad = BRepAdaptor_Surface(face, False)
        kind = ad.GetType()
        if kind == GeomAbs_BSplineSurface and _arcs_by_lines(ad):
            self._add_spline(face)
            return
        if kind == GeomAbs_Cylinder:
            surf = ad.Cylinder()
            r, slope, along = surf.Radius(), 0.0, 1.0
        elif kind == GeomAbs_Cone:
            surf = ad.Cone()
            a = surf.SemiAngle()
            if abs(a) > DRAFT_MAX:
                return
            r, slope, along = surf.RefRadius(), math.sin(a), math.cos(a)
        else:
            return
        pos = surf.Position()
        # the surface's own normal points away from the axis on a right-handed cylinder or cone; a
        # reversed face turns it round: the material's outward normal points to the axis = a hole
        if pos.Direct() != (face.Orientation() == TopAbs_REVERSED):
            return
        umin, umax, vmin, vmax = BRepTools.UVBounds_s(face)
        o, d = pos.Location(), pos.Direction()
        o = np.array([o.X(), o.Y(), o.Z()])
        d = np.array([d.X(), d.Y(), d.Z()])
        # a point at (u, v) lies v * along up the axis, r + v * slope from it
        (e0, r0), (e1, r1) = sorted(((o + d * v * along, r + v * slope) for v in (vmin, vmax)),
                                    key=lambda e: tuple(e[0]))
        self._note(e0, e1, r0, r1, min(abs(umax - umin), 2 * math.pi))

    def _add_spline(self, face) -> None:
        """Note a B-spline face that lies on a cylinder or a cone (an all-NURBS STEP file's hole
        wall), read as ``features`` reads it (``features_faces.face_info``: the analytic surface,
        the axial extent and the angle spanned from its edges), when it is a hole's wall."""
        from jail.cad.features_faces import DRAFT_MAX, face_info
        fi = face_info(0, face)
        if fi.kind not in ("cylinder", "cone") or not fi.concave or fi.t1 <= fi.t0:
            return
        if math.atan2(abs(fi.r1 - fi.r0), fi.t1 - fi.t0) > DRAFT_MAX:
            return  # a countersink or chamfer
        o, d = np.array(fi.origin), np.array(fi.axis)
        (e0, r0), (e1, r1) = sorted(((o + d * fi.t0, fi.r0), (o + d * fi.t1, fi.r1)), key=lambda e: tuple(e[0]))
        self._note(e0, e1, r0, r1, fi.span)

    def _note(self, e0, e1, r0: float, r1: float, span: float) -> None:
        q = 1e-4  # mm: the halves of one wall have the same ends
        key = tuple(round(c / q) for e in (e0, e1) for c in e) + (round(r0 / q), round(r1 / q))
        w = self._walls.setdefault(key, [e0, e1, r0, r1, 0.0])
        w[4] += span

    def disks(self) -> np.ndarray:
        """``(k, 11)``: the two end centres (3 + 3), the unit axis (3) and the radius at each end
        (a drafted wall's differ) of every full round wall."""
        out = []
        for e0, e1, r0, r1, span in self._walls.values():
            n = e1 - e0
            ln = float(np.linalg.norm(n))
            if span >= FULL and ln > 0 and r0 > 0 and r1 > 0:
                out.append((*e0, *e1, *(n / ln), r0, r1))
        return np.array(out, np.float64).reshape(-1, 11)


def _arcs_by_lines(ad) -> bool:
    """Is a B-spline surface rational, of degree 2 one way and of degree 1 the other (arcs swept
    along lines): how OCCT's NURBS conversion and other CAD systems write a cylinder or a cone? A cheap
    test before reading the surface it lies on (a freeform part's faces are not)."""
    bs = ad.BSpline()
    # OCCT's conversion may flag its weights rational the other way (the converted cylinder: U)
    return (sorted((bs.UDegree(), bs.VDegree())) == [1, 2]) and (bs.IsURational() or bs.IsVRational())


def _in_outline(corners: np.ndarray, c, n, r, u, d, A, B, E) -> np.ndarray:
    """Which points ``c + A r + B u + E d`` (on the mouth's plane, ``n`` its normal) lie inside the
    polygon ``corners`` (on that plane, in order), by the even-odd rule, in a basis of the plane."""
    b1 = np.cross(n, r if abs(float(n @ r)) < 0.9 else u)
    b1 /= np.linalg.norm(b1)
    b2 = np.cross(n, b1)
    x = A * float(r @ b1) + B * float(u @ b1) + E * float(d @ b1)
    y = A * float(r @ b2) + B * float(u @ b2) + E * float(d @ b2)
    q = corners - c
    px, py = q @ b1, q @ b2
    odd = np.zeros(np.broadcast(x, y).shape, bool)
    for i in range(len(px)):
        x0, y0, x1, y1 = px[i], py[i], px[i - 1], py[i - 1]
        if y0 == y1:
            continue
        odd ^= ((y0 > y) != (y1 > y)) & (x < x0 + (y - y0) * (x1 - x0) / (y1 - y0))
    return odd


def seen_through(disks: np.ndarray, z: np.ndarray, view, ox: int, oy: int, windows=()) -> np.ndarray:
    """The pixels of ``z`` (output-size depths of a window at ``ox``, ``oy`` of ``view``; inf where
    empty) whose line of sight crosses a wall's mouth (of ``disks``, or of ``windows``: see
    ``Mouths``; the end nearer the viewer: what the far one shows was seen through the near one)
    inside its circle (inside every wall's plane), with the surface it shows more than two pixels'
    size behind it. Each mouth is looked at inside its own square."""
    out = np.zeros(z.shape, bool)
    if not len(disks) and not windows:
        return out
    ch, cw = z.shape
    mm = view.mm_per_px
    r, u, d = (np.asarray(a, np.float64) for a in (view.r, view.u, view.d))
    eps = 2.0 * mm
    rows = [(row[0:3], row[3:6], row[6:9], float(row[9]), float(row[10]), None, None) for row in disks]
    for e0, e1, n, r0, r1, walls, outl in rows + list(windows):
        near0 = float(e0 @ d) >= float(e1 @ d)
        c, rad = (e0, r0) if near0 else (e1, r1)
        nd = float(n @ d)
        if abs(nd) < 0.05 or rad < mm:
            continue  # seen edge-on, or smaller than a pixel
        cr, cu, cd = float(c @ r), float(c @ u), float(c @ d)
        # the mouth's square in window pixels (the circle projects inside it)
        cx = (cr - view.cu) / mm + view.w / 2 - ox
        cy = -(cu - view.cv) / mm + view.h / 2 - oy
        k = rad / mm + 1
        x0, x1 = max(int(cx - k), 0), min(int(cx + k) + 1, cw)
        y0, y1 = max(int(cy - k), 0), min(int(cy + k) + 1, ch)
        if x0 >= x1 or y0 >= y1:
            continue
        # a pixel's line of sight is p = a r + b u + e d; relative to the centre (r, u, d are
        # orthonormal) A = a - c.r, B = b - c.u, and on the disk's plane E = e - c.d follows
        A = (((np.arange(x0, x1) + ox + 0.5) - view.w / 2) * mm + view.cu - cr)[None, :]
        B = ((view.h / 2 - (np.arange(y0, y1) + oy + 0.5)) * mm + view.cv - cu)[:, None]
        E = (A * float(n @ r) + B * float(n @ u)) * (-1.0 / nd)
        if outl is not None:  # the point c + A r + B u + E d inside the outline at that end
            inside = _in_outline(outl[0] if near0 else outl[1], c, n, r, u, d, A, B, E)
        elif walls is None:
            inside = A * A + B * B + E * E <= rad * rad
        else:  # the point c + A r + B u + E d on the inner side of every wall (normals point in)
            inside = np.ones(E.shape, bool)
            for w in walls:
                q, m = w[0:3], w[3:6]
                inside &= float((c - q) @ m) + A * float(r @ m) + B * float(u @ m) + E * float(d @ m) >= 0.0
        zz = z[y0:y1, x0:x1]
        behind = np.isfinite(zz) & (-zz < E + (cd - eps))  # depth grows away: e of the surface = -z
        out[y0:y1, x0:x1] |= inside & behind
    return out

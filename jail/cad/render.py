"""Render the session's shapes to a PNG: the ``render`` op (views, four-view sheet, sections).

Runs inside a jailed, *disposable* next (see ``jail/session_proc.py``): whatever the user's code
did to build123d, numpy or this module in the session, the process exits after the reply, and the
launcher checks only the PNG's outer format (signature, IHDR size, byte cap) before passing it on.

How: OCCT meshes each shape (``BRepMesh_IncrementalMesh``, not in parallel: the jail allows no
threads), the triangles are rasterised with numpy only (a z-buffer filled by batched bounding-box
tests, no per-triangle Python loop), shaded per pixel (Lambert, smooth within a face), edges are
found in image space (B-rep face boundaries, silhouettes, depth creases), everything is drawn at
twice the size and averaged down (anti-aliasing), and Pillow adds labels and encodes the PNG.
No VTK, OpenGL, X or EGL; no font files (Pillow's built-in default font). Objects without
faces (wires, lines, sketch outlines) are drawn as lines over the shaded image (no depth test).

What it blocks: sizes outside ``MIN_PX..MAX_PX`` and meshes over ``MAX_TRIANGLES`` are refused with
a ``RenderError`` before any large allocation. What it does not: bound the time OCCT takes to
mesh or cut a huge model (the launcher's wall-clock kill does), or keep a user who patched OCP,
numpy or Pillow in their session from getting a wrong picture of their own model.
"""

from __future__ import annotations

import io
import math
from typing import Any

import numpy as np

from jail.cad.measure import MeasureError, select_shapes, f as _f

__all__ = ["RenderError", "render", "VIEWS", "MIN_PX", "MAX_PX", "MAX_TRIANGLES", "PALETTE"]

MIN_PX, MAX_PX = 64, 1600
MAX_TRIANGLES = 1_000_000
MAX_OBJECTS = 64
MAX_EDGES = 20_000  # edges drawn as lines, for objects without faces
SS = 2  # supersampling factor for images up to SS_MAX_PIXELS output pixels; larger ones are drawn 1:1
SS_MAX_PIXELS = 1_000_000
ANGULAR = 0.5  # mesh angular deflection (rad); the linear one is half an output pixel
BUDGET = 1 << 20  # pixels per rasteriser batch

# camera (azimuth, elevation) in degrees: azimuth 0 looks from the front (camera on -Y),
# 90 from the right (camera on +X); elevation 90 looks down from +Z.
VIEWS = {"iso": (45.0, math.degrees(math.atan(1 / math.sqrt(2)))), "top": (0.0, 90.0),
         "bottom": (0.0, -90.0), "front": (0.0, 0.0), "back": (180.0, 0.0), "right": (90.0, 0.0),
         "left": (-90.0, 0.0)}
SHEET = (("top", 0, 0), ("iso", 1, 0), ("front", 0, 1), ("right", 1, 1))  # third-angle layout

PALETTE = [(74, 144, 217), (230, 126, 34), (46, 175, 92), (200, 60, 70), (142, 96, 196),
           (22, 170, 170), (214, 178, 32), (150, 100, 70), (120, 130, 145), (220, 110, 170)]
BG = np.array([250, 250, 250], np.float32)
EDGE = np.array([28, 30, 34], np.float32)
GRID = np.array([226, 230, 236], np.float32)


class RenderError(ValueError):
    """A request that cannot be rendered; the message is meant for the assistant."""


# ------------------------------------------------------------------ geometry


def _unit(v) -> np.ndarray:
    v = np.asarray(v, np.float64)
    n = float(np.linalg.norm(v))
    if not math.isfinite(n) or n < 1e-12:
        raise RenderError("a direction vector must be finite and non-zero")
    return v / n


def camera(azimuth: float, elevation: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(right, up, toward_viewer)`` unit vectors for an orthographic camera."""
    a, e = math.radians(azimuth), math.radians(elevation)
    d = np.array([math.sin(a) * math.cos(e), -math.cos(a) * math.cos(e), math.sin(e)])
    r = np.array([math.cos(a), math.sin(a), 0.0])
    u = np.cross(d, r)
    return r, u / np.linalg.norm(u), d


def camera_along(d) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A camera looking along ``-d`` (the viewer on the ``d`` side), Z kept up where it can be."""
    d = _unit(d)
    if abs(d[2]) > 0.999:
        r = np.array([1.0, 0.0, 0.0])
    else:
        r = _unit(np.cross([0.0, 0.0, 1.0], d))
    u = np.cross(d, r)
    return r, u, d


class Mesh:
    """Triangles of a set of shapes: world vertices, per-vertex normals, and per triangle the
    object index, a global B-rep face index and a face flag (1 = a section cap)."""

    def __init__(self):
        self.verts: list = []
        self.normals: list = []
        self.tris: list = []
        self.obj: list = []
        self.face: list = []
        self.flag: list = []
        self.n_faces = 0
        self.n_tris = 0
        self._nv = 0

    def finish(self) -> "Mesh":
        cat = lambda xs, shape, dt: np.concatenate(xs).astype(dt) if xs else np.zeros(shape, dt)  # noqa: E731
        self.V = cat(self.verts, (0, 3), np.float64)
        self.N = cat(self.normals, (0, 3), np.float64)
        self.T = cat(self.tris, (0, 3), np.int64)
        self.O = cat(self.obj, (0,), np.int32)
        self.F = cat(self.face, (0,), np.int32)
        self.C = cat(self.flag, (0,), np.int8)
        return self


def _trsf_matrix(loc) -> np.ndarray | None:
    if loc.IsIdentity():
        return None
    t = loc.Transformation()
    return np.array([[t.Value(i, j) for j in range(1, 5)] for i in range(1, 4)])


def mesh_shapes(shapes: list, deflection: float, angular: float, *, max_triangles: int = MAX_TRIANGLES,
                cap_plane: tuple | None = None, allow_empty: bool = False) -> Mesh:
    """Mesh each TopoDS shape and gather its triangles. ``cap_plane`` = (point, normal): faces
    lying in that plane are flagged as section caps."""
    from OCP.BRepMesh import BRepMesh_IncrementalMesh
    from OCP.TopExp import TopExp_Explorer
    from OCP.TopAbs import TopAbs_FACE, TopAbs_SOLID
    from OCP.BRep import BRep_Tool
    from OCP.TopLoc import TopLoc_Location
    from OCP.TopoDS import TopoDS

    m = Mesh()
    polys = []
    if not shapes:
        raise RenderError("nothing to draw")
    for oi, shape in enumerate(shapes):
        # solid by solid, counting as we go: a compound of thousands of solids is refused at the
        # cap, not after meshing all of it; then the rest (free faces), already-meshed parts kept
        ex = TopExp_Explorer(shape, TopAbs_SOLID)
        count = 0
        while ex.More():
            solid = ex.Current()
            BRepMesh_IncrementalMesh(solid, deflection, False, angular, False)  # False: not in parallel
            fx = TopExp_Explorer(solid, TopAbs_FACE)
            while fx.More():
                poly = BRep_Tool.Triangulation_s(TopoDS.Face(fx.Current()), TopLoc_Location())
                count += poly.NbTriangles() if poly is not None else 0
                fx.Next()
            if m.n_tris + count > max_triangles:
                raise RenderError(f"the model needs more than {max_triangles} triangles at this size: "
                                  "render fewer objects or a smaller image")
            ex.Next()
        BRepMesh_IncrementalMesh(shape, deflection, False, angular, False)
        ex = TopExp_Explorer(shape, TopAbs_FACE)
        while ex.More():
            face = TopoDS.Face(ex.Current())
            loc = TopLoc_Location()
            poly = BRep_Tool.Triangulation_s(face, loc)
            if poly is not None:
                m.n_tris += poly.NbTriangles()
                if m.n_tris > max_triangles:
                    raise RenderError(f"the model needs more than {max_triangles} triangles at this size: "
                                      "render fewer objects or a smaller image")
                polys.append((oi, poly, loc))
            ex.Next()
    for oi, poly, loc in polys:
        nn, nt = poly.NbNodes(), poly.NbTriangles()
        if nn < 3 or nt < 1:
            continue
        pts = [poly.Node(i) for i in range(1, nn + 1)]
        v = np.array([(p.X(), p.Y(), p.Z()) for p in pts], np.float64)
        mat = _trsf_matrix(loc)
        if mat is not None:
            v = v @ mat[:, :3].T + mat[:, 3]
        t = np.array([poly.Triangle(i).Get() for i in range(1, nt + 1)], np.int64) - 1
        if t.min() < 0 or t.max() >= nn:
            continue
        a, b, c = v[t[:, 0]], v[t[:, 1]], v[t[:, 2]]
        tn = np.cross(b - a, c - a)  # area-weighted, consistently oriented within a face
        vn = np.zeros_like(v)
        for k in range(3):
            np.add.at(vn, t[:, k], tn)
        ln = np.linalg.norm(vn, axis=1, keepdims=True)
        vn = np.where(ln > 0, vn / np.where(ln > 0, ln, 1), 0.0)
        flag = 0
        if cap_plane is not None:
            p0, n = cap_plane
            dist = np.abs((v - p0) @ n)
            if float(dist.max()) <= max(1e-6, deflection * 0.01):
                flag = 1
        m.verts.append(v)
        m.normals.append(vn)
        m.tris.append(t + m._nv)
        m.obj.append(np.full(nt, oi, np.int32))
        m.face.append(np.full(nt, m.n_faces, np.int32))
        m.flag.append(np.full(nt, flag, np.int8))
        m._nv += nn
        m.n_faces += 1
    if not m.tris and not allow_empty:
        raise RenderError("nothing to draw: the objects have no faces")
    return m.finish()


def edge_polylines(shapes: list, deflection: float, max_edges: int = MAX_EDGES) -> list:
    """``[(object index, (k, 3) points)]`` for the edges of the objects that have no faces (wires,
    sketches' outlines, lines), which are drawn as lines over the shaded image."""
    from OCP.TopExp import TopExp_Explorer
    from OCP.TopAbs import TopAbs_EDGE, TopAbs_FACE
    from OCP.BRepAdaptor import BRepAdaptor_Curve
    from OCP.GCPnts import GCPnts_QuasiUniformDeflection
    from OCP.TopoDS import TopoDS
    out = []
    n = 0
    for oi, shape in enumerate(shapes):
        if _has(shape, TopAbs_FACE):
            continue
        ex = TopExp_Explorer(shape, TopAbs_EDGE)
        while ex.More():
            n += 1
            if n > max_edges:
                raise RenderError(f"more than {max_edges} edges to draw: render fewer objects")
            try:
                c = BRepAdaptor_Curve(TopoDS.Edge(ex.Current()))
                g = GCPnts_QuasiUniformDeflection(c, deflection, c.FirstParameter(), c.LastParameter())
                if g.IsDone() and g.NbPoints() >= 2:
                    k = min(g.NbPoints(), 2000)
                    pts = np.array([(q.X(), q.Y(), q.Z()) for q in (g.Value(i) for i in range(1, k + 1))])
                    if np.isfinite(pts).all():
                        out.append((oi, pts))
            except Exception:  # noqa: BLE001 - a degenerate edge is skipped, not fatal
                pass
            ex.Next()
    return out


def _draw_polylines(draw, view: "View", polys: list, x0: int = 0, y0: int = 0) -> None:
    for oi, pts in polys:
        x = (pts @ view.r - view.cu) / view.mm_per_px + view.w / 2 + x0
        y = -(pts @ view.u - view.cv) / view.mm_per_px + view.h / 2 + y0
        xy = [(float(a), float(b)) for a, b in zip(x, y) if abs(a) < 1e6 and abs(b) < 1e6]
        if len(xy) >= 2:
            draw.line(xy, fill=PALETTE[oi % len(PALETTE)], width=2, joint="curve")


def shapes_bbox(shapes: list) -> tuple[np.ndarray, np.ndarray]:
    from OCP.Bnd import Bnd_Box
    from OCP.BRepBndLib import BRepBndLib
    b = Bnd_Box()
    for s in shapes:
        try:  # exact geometry, not the (tolerance-enlarged) triangulation
            BRepBndLib.AddOptimal_s(s, b, False, False)
        except Exception:  # noqa: BLE001
            BRepBndLib.Add_s(s, b)
    if b.IsVoid():
        raise RenderError("the objects are empty (no bounding box)")
    lo, hi = b.CornerMin(), b.CornerMax()
    lo = np.array([lo.X(), lo.Y(), lo.Z()])
    hi = np.array([hi.X(), hi.Y(), hi.Z()])
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
        raise RenderError("the objects have no finite bounding box")
    return lo, hi


def _box_corners(lo, hi) -> np.ndarray:
    return np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])


# ------------------------------------------------------------------ rasteriser


def rasterize(px: np.ndarray, py: np.ndarray, pz: np.ndarray, tris: np.ndarray, W: int, H: int):
    """Z-buffer: ``(depth, triangle index)`` per pixel (flat arrays of H*W; index -1 = empty).

    ``px``/``py`` are pixel coordinates (x right, y down, pixel centres at +0.5), ``pz`` grows
    away from the viewer. Scanline spans, vectorised: every (triangle, pixel row) pair gets its
    covered x-interval from the three edge functions, the spans are expanded to pixels, and the
    nearest depth per pixel wins (``np.minimum.at``). Work is proportional to the pixels covered
    plus the rows spanned, whatever the triangles' shapes (long slivers cost no more than their
    area), in batches of about ``BUDGET`` pixels so memory stays bounded.
    """
    zbuf = np.full(H * W, np.inf, np.float32)
    tid = np.full(H * W, -1, np.int32)
    if len(tris) == 0:
        return zbuf, tid
    x, y, z = px[tris], py[tris], pz[tris]
    x0, x1, x2 = x[:, 0], x[:, 1], x[:, 2]
    y0, y1, y2 = y[:, 0], y[:, 1], y[:, 2]
    area = (x1 - x0) * (y2 - y0) - (x2 - x0) * (y1 - y0)
    with np.errstate(invalid="ignore", over="ignore"):
        imin = np.ceil(x.min(1) - 0.5)
        imax = np.floor(x.max(1) - 0.5)
        jmin = np.ceil(y.min(1) - 0.5)
        jmax = np.floor(y.max(1) - 0.5)
    ok = (np.abs(area) > 1e-12) & np.isfinite(area) & np.isfinite(z).all(1)
    ok &= (imax >= 0) & (imin <= W - 1) & (jmax >= 0) & (jmin <= H - 1) & (imin <= imax) & (jmin <= jmax)
    idx = np.nonzero(ok)[0]
    if not len(idx):
        return zbuf, tid
    imin = np.clip(imin[idx], 0, W - 1).astype(np.int64)
    imax = np.clip(imax[idx], 0, W - 1).astype(np.int64)
    jmin = np.clip(jmin[idx], 0, H - 1).astype(np.int64)
    jmax = np.clip(jmax[idx], 0, H - 1).astype(np.int64)
    x0, x1, x2, y0, y1, y2 = (v[idx] for v in (x0, x1, x2, y0, y1, y2))
    z0, z1, z2 = z[idx, 0], z[idx, 1], z[idx, 2]
    inv = 1.0 / area[idx]
    # edge functions (barycentric w0, w1, w2) and depth as planes a*cx + b*cy + c
    A1, B1 = (y2 - y0) * inv, -(x2 - x0) * inv
    A2, B2 = -(y1 - y0) * inv, (x1 - x0) * inv
    C1, C2 = -(A1 * x0 + B1 * y0), -(A2 * x0 + B2 * y0)
    edges = ((-A1 - A2, -B1 - B2, 1.0 - C1 - C2), (A1, B1, C1), (A2, B2, C2))
    dz1, dz2 = z1 - z0, z2 - z0
    Az, Bz, Cz = A1 * dz1 + A2 * dz2, B1 * dz1 + B2 * dz2, z0 + C1 * dz1 + C2 * dz2
    rows = jmax - jmin + 1
    est = np.abs(area[idx]) * 0.5 + rows + (imax - imin + 1)  # pixels, roughly
    eps = 1e-7
    # batches of triangles by estimated pixels; a batch's rows are expanded at once
    cut = np.searchsorted(np.cumsum(est), np.arange(BUDGET, est.sum() + BUDGET, BUDGET))
    start = 0
    for stop in np.unique(np.append(cut, len(idx))):
        stop = int(min(max(stop, start + 1), len(idx)))
        if start >= len(idx):
            break
        tr = np.arange(start, stop)
        start = stop
        nr = rows[tr]
        rt = np.repeat(tr, nr)  # one entry per (triangle, row)
        j = jmin[rt] + (np.arange(len(rt)) - np.repeat(np.cumsum(nr) - nr, nr))
        cy = j + 0.5
        lo = np.full(len(rt), -np.inf)
        hi = np.full(len(rt), np.inf)
        with np.errstate(divide="ignore", invalid="ignore"):
            for A, B, C in edges:
                a = A[rt]
                b = B[rt] * cy + C[rt]
                bound = (-eps - b) / a  # a*cx + b >= -eps
                pos, neg = a > 1e-12, a < -1e-12
                lo = np.where(pos, np.maximum(lo, bound), lo)
                hi = np.where(neg, np.minimum(hi, bound), hi)
                lo = np.where(~pos & ~neg & (b < -eps), np.inf, lo)
            il = np.maximum(np.ceil(lo - 0.5), imin[rt])
            ir = np.minimum(np.floor(hi - 0.5), imax[rt])
        L = np.where(ir >= il, ir - il + 1, 0).astype(np.int64)
        L[~np.isfinite(il) | ~np.isfinite(ir)] = 0
        il = np.where(L > 0, il, 0).astype(np.int64)
        # expand spans to pixels in sub-batches of about BUDGET pixels
        cl = np.cumsum(L)
        r0 = 0
        while r0 < len(L):
            base = cl[r0 - 1] if r0 else 0
            r1 = int(np.searchsorted(cl, base + BUDGET, side="right"))
            r1 = max(r1, r0 + 1)
            Ls = L[r0:r1]
            n = int(Ls.sum())
            if n:
                rr = np.repeat(np.arange(r0, r1), Ls)
                off = np.arange(n) - np.repeat(np.cumsum(Ls) - Ls, Ls)
                ii = il[rr] + off
                jj = j[rr]
                t = rt[rr]
                pix = jj * W + ii
                zv = (Az[t] * (ii + 0.5) + Bz[t] * (jj + 0.5) + Cz[t]).astype(np.float32)
                np.minimum.at(zbuf, pix, zv)
                win = zv <= zbuf[pix]
                tid[pix[win]] = idx[t[win]].astype(np.int32)
            r0 = r1
    return zbuf, tid


# ------------------------------------------------------------------ one view


class View:
    """A camera plus the pixel mapping: world -> (x, y) pixels at supersampled size."""

    def __init__(self, r, u, d, center_uv, mm_per_px: float, w: int, h: int, ss: int = SS):
        self.r, self.u, self.d = r, u, d
        self.ss = ss  # supersampling: drawn at ss x the size, averaged down
        self.cu, self.cv = center_uv
        self.mm_per_px = mm_per_px  # at output size
        self.w, self.h = w, h

    def project(self, pts: np.ndarray):
        s = self.ss / self.mm_per_px
        px = (pts @ self.r - self.cu) * s + self.w * self.ss / 2
        py = -(pts @ self.u - self.cv) * s + self.h * self.ss / 2
        pz = -(pts @ self.d)
        return px, py, pz


def _fit(points: np.ndarray, r, u, w: int, h: int, fill: float = 0.86) -> tuple[tuple, float]:
    us, vs = points @ r, points @ u
    du, dv = float(us.max() - us.min()), float(vs.max() - vs.min())
    mm = max(du / (w * fill), dv / (h * fill), 1e-9)
    return ((us.max() + us.min()) / 2, (vs.max() + vs.min()) / 2), mm


def _down(a: np.ndarray, ss: int = 2) -> np.ndarray:
    """Average ss x ss blocks (ss = 1 or 2)."""
    if ss == 1:
        return a.astype(np.float32, copy=False)
    return (a[0::2, 0::2] + a[1::2, 0::2] + a[0::2, 1::2] + a[1::2, 1::2]) * np.float32(0.25)


def shade(mesh: Mesh, view: View, *, hatch_caps: bool = True, flat_fill: bool = False):
    """Rasterise and shade ``mesh`` at supersampled size; returns (rgb (h,w,3) float32,
    coverage (h,w) float32) at output size, to be composed over a background.

    Shading is Gouraud-interpolated Lambert (per-vertex intensity, so planar faces are flat and
    curved ones smooth), two-sided (normal orientation does not matter)."""
    SS = view.ss
    W, H = view.w * SS, view.h * SS
    px, py, pz = view.project(mesh.V)
    zbuf, tid = rasterize(px, py, pz, mesh.T, W, H)
    hit = tid >= 0
    # per pixel: a colour index into `pal` (objects, then background, then edge) and an affine
    # shade: colour = pal[index] * scale + offset (lit faces: scale = intensity; fills: lighter)
    npal = len(PALETTE)
    pal = np.array([*PALETTE, tuple(BG), tuple(EDGE)], np.float32)
    BGI, EDGEI = npal, npal + 1
    index = np.full(H * W, BGI, np.int16)
    scale = np.ones(H * W, np.float32)
    offset = np.zeros(H * W, np.float32)
    fid = np.full(H * W, -1, np.int32)
    if hit.any():
        light = _unit(view.d * 1.0 + view.u * 0.45 - view.r * 0.25)
        lam = np.abs(mesh.N @ light)
        facing = np.abs(mesh.N @ view.d)
        iv = 0.30 + 0.62 * lam + 0.10 * facing ** 24  # per-vertex intensity
        T = mesh.T
        x0, y0 = px[T[:, 0]], py[T[:, 0]]
        x1, y1 = px[T[:, 1]], py[T[:, 1]]
        x2, y2 = px[T[:, 2]], py[T[:, 2]]
        area = (x1 - x0) * (y2 - y0) - (x2 - x0) * (y1 - y0)
        inv = 1.0 / np.where(np.abs(area) > 1e-12, area, 1e-12)
        A1, B1 = (y2 - y0) * inv, -(x2 - x0) * inv
        A2, B2 = -(y1 - y0) * inv, (x1 - x0) * inv
        C1, C2 = -(A1 * x0 + B1 * y0), -(A2 * x0 + B2 * y0)
        i0, d1, d2 = iv[T[:, 0]], iv[T[:, 1]] - iv[T[:, 0]], iv[T[:, 2]] - iv[T[:, 0]]
        # intensity as a plane over the triangle (Gouraud), clamped to its vertex range
        ka = (A1 * d1 + A2 * d2).astype(np.float32)
        kb = (B1 * d1 + B2 * d2).astype(np.float32)
        kc = (i0 + C1 * d1 + C2 * d2).astype(np.float32)
        lo_i = iv[T].min(1).astype(np.float32)
        hi_i = iv[T].max(1).astype(np.float32)
        pix = np.nonzero(hit)[0]
        t = tid[pix]
        cx = (pix % W).astype(np.float32) + np.float32(0.5)
        cy = (pix // W).astype(np.float32) + np.float32(0.5)
        inten = np.clip(ka[t] * cx + kb[t] * cy + kc[t], lo_i[t], hi_i[t])
        index[pix] = (mesh.O % npal).astype(np.int16)[t]
        if flat_fill:
            scale[pix] = 0.35
            offset[pix] = 255 * 0.65
        else:
            scale[pix] = inten
        if hatch_caps:
            cap = np.nonzero(mesh.C[t] == 1)[0]
            if len(cap):
                pc = pix[cap]
                stripe = ((pc % W) + (pc // W)) % (7 * SS) < SS
                scale[pc] = np.where(stripe, np.float32(0.55), np.float32(0.35))
                offset[pc] = np.where(stripe, np.float32(0.0), np.float32(255 * 0.65))
        fid[pix] = mesh.F[t]
    # edges: B-rep face boundaries and silhouettes (face id changes), depth creases
    fid2 = fid.reshape(H, W)
    edge = np.zeros((H, W), bool)
    dx = fid2[:, 1:] != fid2[:, :-1]
    dy = fid2[1:, :] != fid2[:-1, :]
    edge[:, 1:] |= dx
    edge[1:, :] |= dy
    if SS > 1:  # both sides of the boundary: about one output pixel wide after averaging
        edge[:, :-1] |= dx
        edge[:-1, :] |= dy
    z2 = np.where(hit, zbuf, np.float32(np.nan)).reshape(H, W)
    thr = np.float32(3.0 * view.mm_per_px / SS)
    with np.errstate(invalid="ignore"):
        lap_x = np.abs(z2[:, 2:] + z2[:, :-2] - 2 * z2[:, 1:-1]) > thr
        lap_y = np.abs(z2[2:, :] + z2[:-2, :] - 2 * z2[1:-1, :]) > thr
    edge[:, 1:-1] |= lap_x
    edge[1:-1, :] |= lap_y
    ef = edge.reshape(-1)
    index[ef] = EDGEI
    scale[ef] = 1.0
    offset[ef] = 0.0
    out = np.empty((view.h, view.w, 3), np.float32)
    for c in range(3):
        out[..., c] = _down((pal[:, c][index] * scale + offset).reshape(H, W), SS)
    cov = _down((hit | ef).astype(np.float32).reshape(H, W), SS)
    return out, cov


# ------------------------------------------------------------------ drawing helpers


def _font(size: int = 13):
    from PIL import ImageFont
    try:
        return ImageFont.load_default(size=size)
    except Exception:  # noqa: BLE001 - an older Pillow or no FreeType: the bitmap font
        return ImageFont.load_default()


def _nice(x: float) -> float:
    if not (x > 0 and math.isfinite(x)):
        return 1.0
    e = 10 ** math.floor(math.log10(x))
    for m in (1, 2, 5, 10):
        if m * e >= x:
            return m * e
    return 10 * e


def _nice_floor(x: float) -> float:
    if not (x > 0 and math.isfinite(x)):
        return 1.0
    e = 10 ** math.floor(math.log10(x))
    for m in (5, 2, 1):
        if m * e <= x:
            return m * e
    return e


def _fmt(v: float) -> str:
    if abs(v) < 1e-9:
        return "0"
    return f"{v:.6g}"


def _scale_bar(draw, x: int, y: int, mm_per_px: float, max_px: int, font) -> None:
    length = _nice_floor(max_px * mm_per_px)
    n = int(round(length / mm_per_px))
    if n < 4:
        return
    c = (40, 40, 40)
    draw.line([(x, y), (x + n, y)], fill=c, width=2)
    draw.line([(x, y - 4), (x, y + 3)], fill=c, width=1)
    draw.line([(x + n, y - 4), (x + n, y + 3)], fill=c, width=1)
    draw.text((x + n + 5, y - 7), f"{_fmt(length)} mm", fill=c, font=font)


def _triad(draw, view: View, cx: int, cy: int, size: int, font) -> None:
    for vec, name, col in (((1, 0, 0), "X", (210, 50, 50)), ((0, 1, 0), "Y", (40, 160, 60)),
                           ((0, 0, 1), "Z", (50, 90, 220))):
        v = np.array(vec, float)
        sx, sy = float(v @ view.r), -float(v @ view.u)
        if abs(sx) + abs(sy) < 0.15:
            draw.ellipse([cx - 3, cy - 3, cx + 3, cy + 3], outline=col)
            draw.text((cx + 5, cy - 14), name, fill=col, font=font)
            continue
        ex, ey = cx + sx * size, cy + sy * size
        draw.line([(cx, cy), (ex, ey)], fill=col, width=2)
        draw.text((ex + 2 * np.sign(sx) - 3, ey + 2 * np.sign(sy) - 7), name, fill=col, font=font)


def _legend(draw, names: list[str], x: int, y: int, font) -> None:
    shown = names[:12]
    for i, name in enumerate(shown):
        col = PALETTE[i % len(PALETTE)]
        yy = y + i * 16
        draw.rectangle([x, yy + 2, x + 10, yy + 12], fill=col, outline=(40, 40, 40))
        draw.text((x + 15, yy), name if len(name) <= 28 else name[:25] + "...", fill=(30, 30, 30), font=font)
    if len(names) > len(shown):
        draw.text((x, y + len(shown) * 16), f"... {len(names) - len(shown)} more", fill=(30, 30, 30), font=font)


def _compose(rgb: np.ndarray, cov: np.ndarray, bg: np.ndarray) -> np.ndarray:
    a = cov[..., None]
    return np.clip(rgb * a + bg * (1 - a), 0, 255).round().astype(np.uint8)


# ------------------------------------------------------------------ sections


def _plane(section: dict) -> tuple[np.ndarray, np.ndarray, str]:
    """(point, unit normal, label) from ``{"axis", "offset"}`` or ``{"point", "normal"}``."""
    if not isinstance(section, dict):
        raise RenderError("section must be an object: {axis, offset} or {point, normal}")
    if section.get("axis") is not None:
        axis = section.get("axis")
        if axis not in ("x", "y", "z", "X", "Y", "Z"):
            raise RenderError("section axis must be x, y or z")
        axis = axis.lower()
        off = _num(section.get("offset", 0.0), "section offset")
        n = {"x": [1.0, 0, 0], "y": [0, 1.0, 0], "z": [0, 0, 1.0]}[axis]
        p = [0.0, 0.0, 0.0]
        p["xyz".index(axis)] = off
        return np.array(p), np.array(n), f"{axis} = {_fmt(off)}"
    pt = section.get("point", [0, 0, 0])
    nv = section.get("normal")
    if not (isinstance(pt, (list, tuple)) and len(pt) == 3 and isinstance(nv, (list, tuple)) and len(nv) == 3):
        raise RenderError("section needs axis (+ offset) or point and normal (three numbers each)")
    p = np.array([_num(v, "section point") for v in pt])
    n = _unit([_num(v, "section normal") for v in nv])
    return p, n, f"point ({', '.join(_fmt(v) for v in p)}) normal ({', '.join(_fmt(v) for v in n)})"


def _num(v: Any, what: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise RenderError(f"{what} must be a number")
    x = float(v)
    if not math.isfinite(x) or abs(x) > 1e9:
        raise RenderError(f"{what} must be a finite number within +-1e9")
    return x


def _plane_frame(n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a = int(np.argmin(np.abs(n)))
    x = np.zeros(3)
    x[a] = 1.0
    x = _unit(x - n * (x @ n))
    return x, np.cross(n, x)


def _big_face(p0, n, L):
    from OCP.gp import gp_Pln, gp_Pnt, gp_Dir
    from OCP.BRepBuilderAPI import BRepBuilderAPI_MakeFace
    pln = gp_Pln(gp_Pnt(*map(float, p0)), gp_Dir(*map(float, n)))
    return BRepBuilderAPI_MakeFace(pln, -L, L, -L, L).Face()


def _boolean(kind: str, a, b):
    from OCP.BRepAlgoAPI import BRepAlgoAPI_Common
    op = BRepAlgoAPI_Common(a, b)
    try:
        op.SetRunParallel(False)
    except Exception:  # noqa: BLE001
        pass
    if not op.IsDone():
        raise RenderError(f"the {kind} could not be computed for this shape")
    return op.Shape()


def _has(shape, kind) -> bool:
    from OCP.TopExp import TopExp_Explorer
    return TopExp_Explorer(shape, kind).More()


def section_faces(shapes: list, p0, n, L: float) -> list:
    from OCP.TopAbs import TopAbs_SOLID, TopAbs_FACE
    out = []
    face = _big_face(p0, n, L)
    for s in shapes:
        if not _has(s, TopAbs_SOLID):
            out.append(None)
            continue
        r = _boolean("section", s, face)
        out.append(r if _has(r, TopAbs_FACE) else None)
    return out


def clipped(shapes: list, p0, keep_dir, L: float) -> list:
    """Each solid cut by the plane through ``p0`` normal to ``keep_dir``, keeping the part on the
    ``keep_dir`` side (a box of size 2L x 2L x L stands in for the half-space); non-solids as they are."""
    from OCP.gp import gp_Ax2, gp_Pnt, gp_Dir
    from OCP.BRepPrimAPI import BRepPrimAPI_MakeBox
    from OCP.TopAbs import TopAbs_SOLID
    k = _unit(keep_dir)
    x, _y = _plane_frame(k)
    corner = p0 - L * x - L * np.cross(k, x)
    box = BRepPrimAPI_MakeBox(gp_Ax2(gp_Pnt(*map(float, corner)), gp_Dir(*map(float, k)),
                                     gp_Dir(*map(float, x))), 2 * L, 2 * L, L).Shape()
    out = []
    for s in shapes:
        out.append(_boolean("clipped view", s, box) if _has(s, TopAbs_SOLID) else s)
    return out


# ------------------------------------------------------------------ the op


def _check_size(width: Any, height: Any) -> tuple[int, int]:
    for v, what in ((width, "width"), (height, "height")):
        if isinstance(v, bool) or not isinstance(v, int) or not (MIN_PX <= v <= MAX_PX):
            raise RenderError(f"{what} must be an integer from {MIN_PX} to {MAX_PX}")
    return int(width), int(height)


def _ss(width: int, height: int) -> int:
    return SS if width * height <= SS_MAX_PIXELS else 1


def _deflection(mm_per_px: float, diag: float) -> float:
    return max(mm_per_px * 0.5, diag * 2e-5, 1e-6)


def render(namespace: dict, objects: list[str] | None = None, view: str = "iso", *,
           azimuth: float | None = None, elevation: float | None = None, width: int = 800,
           height: int = 600, section: dict | None = None,
           max_triangles: int = MAX_TRIANGLES) -> tuple[bytes, dict]:
    """Render to PNG bytes; returns ``(png, meta)`` with meta ``{"view", "width", "height",
    "mm_per_px", "bbox", "objects", "triangles", "caption"}``."""
    width, height = _check_size(width, height)
    if objects is not None and (not isinstance(objects, list) or len(objects) > MAX_OBJECTS
                                or not all(isinstance(o, str) for o in objects)):
        raise RenderError(f"objects must be a list of at most {MAX_OBJECTS} names")
    if view not in VIEWS and view not in ("sheet", "section"):
        raise RenderError("view must be one of " + ", ".join([*VIEWS, "sheet", "section"]))
    try:
        sel = select_shapes(namespace, objects or None)
    except MeasureError as e:
        raise RenderError(str(e)) from None
    if len(sel) > MAX_OBJECTS:
        sel = sel[:MAX_OBJECTS]
    names = [n for n, _ in sel]
    shapes = [s for _, s in sel]
    lo, hi = shapes_bbox(shapes)
    diag = float(np.linalg.norm(hi - lo)) or 1.0
    if view == "section" and section is None:
        raise RenderError("view 'section' needs a section plane: {axis, offset} or {point, normal}")
    if view != "section" and view != "sheet" and (azimuth is not None or elevation is not None):
        az0, el0 = VIEWS[view]
        az = az0 if azimuth is None else _num(azimuth, "azimuth")
        el = el0 if elevation is None else _num(elevation, "elevation")
        if not -90.0 <= el <= 90.0:
            raise RenderError("elevation must be within -90..90 degrees")
        view_label = f"azimuth {_fmt(az)}, elevation {_fmt(el)}"
    elif view in VIEWS:
        az, el = VIEWS[view]
        view_label = view
    from PIL import Image, ImageDraw
    font = _font(13)
    small = _font(11)
    bbox_txt = "x".join(_fmt(_f(v, 4)) for v in (hi - lo))
    meta: dict = {"view": view, "width": width, "height": height, "objects": names,
                  "bbox": {"min": [_f(v) for v in lo], "max": [_f(v) for v in hi],
                           "size": [_f(v) for v in hi - lo]}}

    if view == "section":
        png, extra = _render_section(shapes, names, section, lo, hi, diag, width, height, font, small,
                                     max_triangles)
        meta.update(extra)
        meta["caption"] = (f"section {extra['plane']}: {extra['extent']}; 1 px = {_fmt(_f(extra['mm_per_px'], 3))} mm; "
                           f"objects {', '.join(names)[:300]}")
        return png, meta

    cap_plane = None
    if section is not None:
        p0, n, plabel = _plane(section)
        r_, u_, d_ = camera(az, el) if view != "sheet" else camera(*VIEWS["iso"])
        keep = -n if float(n @ d_) > 0 else n  # cut away the half facing the camera
        shapes = clipped(shapes, p0, keep, diag * 2 + float(np.abs(p0).max()))
        from OCP.TopAbs import TopAbs_FACE
        if not any(_has(sh, TopAbs_FACE) for sh in shapes):
            raise RenderError(f"cutting at {plabel} leaves nothing to see (the half facing the camera is cut "
                              f"away); bbox from ({', '.join(_fmt(_f(v, 4)) for v in lo)}) to "
                              f"({', '.join(_fmt(_f(v, 4)) for v in hi)})")
        cap_plane = (p0, n)
        meta["section"] = plabel

    if view == "sheet":
        pw, ph = width // 2, height // 2
        cams = {name: camera(*VIEWS[name]) for name, _, _ in SHEET}
        corners = _box_corners(lo, hi)
        mm = max(_fit(corners, c[0], c[1], pw, ph - 16)[1] for c in cams.values())
        mesh = mesh_shapes(shapes, _deflection(mm, diag), ANGULAR, max_triangles=max_triangles,
                           cap_plane=cap_plane, allow_empty=True)
        polys = edge_polylines(shapes, _deflection(mm, diag))
        if not len(mesh.T) and not polys:
            raise RenderError("nothing to draw: the objects have no faces or edges")
        canvas = np.empty((ph * 2, pw * 2, 3), np.uint8)
        canvas[:] = BG.astype(np.uint8)
        views = {}
        for name, cx, cy in SHEET:
            r, u, d = cams[name]
            centre, _ = _fit(corners, r, u, pw, ph - 16)
            v = View(r, u, d, centre, mm, pw, ph, _ss(width, height))
            rgb, cov = shade(mesh, v)
            canvas[cy * ph:(cy + 1) * ph, cx * pw:(cx + 1) * pw] = _compose(rgb, cov, BG)
            views[name] = v
        img = Image.new("RGB", (width, height), tuple(int(c) for c in BG))
        img.paste(Image.fromarray(canvas), (0, 0))
        draw = ImageDraw.Draw(img)
        for name, cx, cy in SHEET:
            x0, y0 = cx * pw, cy * ph
            _draw_polylines(draw, views[name], polys, x0, y0)
            draw.text((x0 + 8, y0 + 6), name, fill=(20, 20, 20), font=font)
            _triad(draw, views[name], x0 + pw - 34, y0 + ph - 34, 20, small)
        draw.line([(pw, 0), (pw, 2 * ph)], fill=(150, 150, 150), width=1)
        draw.line([(0, ph), (2 * pw, ph)], fill=(150, 150, 150), width=1)
        _scale_bar(draw, 10, 2 * ph - 14, mm, pw // 3, small)
        if len(names) > 1:
            _legend(draw, names, pw + 8, 24, small)
        meta.update(mm_per_px=_f(mm), triangles=int(len(mesh.T)), panels=[s[0] for s in SHEET])
        meta["caption"] = (f"sheet (top, iso, front, right); 1 px = {_fmt(_f(mm, 3))} mm; bbox {bbox_txt} mm; "
                           f"objects {', '.join(names)[:300]}")
        return _png(img), meta

    r, u, d = camera(az, el)
    corners = _box_corners(lo, hi)
    centre, mm = _fit(corners, r, u, width, height)
    mesh = mesh_shapes(shapes, _deflection(mm, diag), ANGULAR, max_triangles=max_triangles, cap_plane=cap_plane,
                       allow_empty=True)
    polys = edge_polylines(shapes, _deflection(mm, diag))
    if not len(mesh.T) and not polys:
        raise RenderError("nothing to draw: the objects have no faces or edges")
    v = View(r, u, d, centre, mm, width, height, _ss(width, height))
    rgb, cov = shade(mesh, v)
    img = Image.fromarray(_compose(rgb, cov, BG))
    draw = ImageDraw.Draw(img)
    _draw_polylines(draw, v, polys)
    title = view_label + (f", cut at {meta['section']}" if cap_plane is not None else "")
    draw.text((8, 6), title, fill=(20, 20, 20), font=font)
    _scale_bar(draw, 10, height - 14, mm, width // 4, small)
    _triad(draw, v, width - 34, height - 34, 20, small)
    if len(names) > 1:
        _legend(draw, names, 8, 26, small)
    meta.update(view=view if azimuth is None and elevation is None else "custom", mm_per_px=_f(mm),
                triangles=int(len(mesh.T)), azimuth=_f(az), elevation=_f(el))
    meta["caption"] = (f"{title} view; 1 px = {_fmt(_f(mm, 3))} mm; bbox {bbox_txt} mm; "
                       f"objects {', '.join(names)[:300]}")
    return _png(img), meta


def _render_section(shapes, names, section, lo, hi, diag, width, height, font, small, max_triangles):
    from PIL import Image, ImageDraw
    p0, n, plabel = _plane(section)
    axis = section.get("axis")
    axis = axis.lower() if isinstance(axis, str) else None
    # the viewer stands where the usual view of that plane puts it: x -> right, y -> front, z -> top
    d = {"x": np.array([1.0, 0, 0]), "y": np.array([0, -1.0, 0]), "z": np.array([0, 0, 1.0])}.get(axis, n)
    r, u, d = camera_along(d)
    L = diag * 2 + float(np.abs(p0).max())
    faces = section_faces(shapes, p0, n, L)
    got = [(i, s) for i, s in enumerate(faces) if s is not None]
    if not got:
        what = "" if any(_has(s, _solid_kind()) for s in shapes) else " (none of the objects is a solid)"
        raise RenderError(f"the plane {plabel} does not cut {', '.join(names)[:200]}{what}; "
                          f"bbox from ({', '.join(_fmt(_f(v, 4)) for v in lo)}) to "
                          f"({', '.join(_fmt(_f(v, 4)) for v in hi)})")
    slo, shi = shapes_bbox([s for _, s in got])
    margin_l, margin_b, margin_t, margin_r = 58, 40, 26, 16
    pw, ph = width - margin_l - margin_r, height - margin_b - margin_t
    if pw < 32 or ph < 32:
        raise RenderError("the image is too small for a section with axes")
    corners = _box_corners(slo, shi)
    centre, mm = _fit(corners, r, u, pw, ph, fill=0.84)
    parts = mesh_shapes([s for _, s in got], _deflection(mm, diag), ANGULAR, max_triangles=max_triangles)
    # restore object indices (colours) of the shapes that were cut
    parts.O = np.array([got[o][0] for o in parts.O], np.int32) if len(parts.O) else parts.O
    mesh = parts
    view = View(r, u, d, centre, mm, pw, ph, _ss(width, height))
    rgb, cov = shade(mesh, view, hatch_caps=False, flat_fill=True)
    # hatch: diagonal stripes over the filled section
    yy, xx = np.mgrid[0:ph, 0:pw]
    stripe = ((xx + yy) % 8) < 1.5
    inside = cov > 0.99
    rgb[inside & stripe] = rgb[inside & stripe] * 0.62
    # grid + axes: output pixel X shows p.r = u_lo + X * mm; pixel Y shows p.u = v_hi - Y * mm
    u_lo, u_hi = centre[0] - pw / 2 * mm, centre[0] + pw / 2 * mm
    v_lo, v_hi = centre[1] - ph / 2 * mm, centre[1] + ph / 2 * mm
    off_u = float(p0 @ r) if axis is None else 0.0
    off_v = float(p0 @ u) if axis is None else 0.0
    step = _nice(max(u_hi - u_lo, v_hi - v_lo) / 8)
    bg = np.empty((ph, pw, 3), np.float32)
    bg[:] = BG
    ticks_u = np.arange(math.ceil((u_lo - off_u) / step), math.floor((u_hi - off_u) / step) + 1) * step
    ticks_v = np.arange(math.ceil((v_lo - off_v) / step), math.floor((v_hi - off_v) / step) + 1) * step
    tu_px = [int(round((t + off_u - u_lo) / mm)) for t in ticks_u]
    tv_px = [int(round((v_hi - (t + off_v)) / mm)) for t in ticks_v]
    for x in tu_px:
        if 0 <= x < pw:
            bg[:, x] = GRID
    for y in tv_px:
        if 0 <= y < ph:
            bg[y, :] = GRID
    panel = _compose(rgb, cov, bg)
    img = Image.new("RGB", (width, height), tuple(int(c) for c in BG))
    img.paste(Image.fromarray(panel), (margin_l, margin_t))
    draw = ImageDraw.Draw(img)
    c = (40, 40, 40)
    draw.rectangle([margin_l - 1, margin_t - 1, margin_l + pw, margin_t + ph], outline=c)
    for t, x in zip(ticks_u, tu_px):
        if 0 <= x < pw:
            X = margin_l + x
            draw.line([(X, margin_t + ph), (X, margin_t + ph + 4)], fill=c)
            lbl = _fmt(_f(t, 6))
            draw.text((X - 3 * len(lbl), margin_t + ph + 6), lbl, fill=c, font=small)
    for t, y in zip(ticks_v, tv_px):
        if 0 <= y < ph:
            Y = margin_t + y
            draw.line([(margin_l - 5, Y), (margin_l - 1, Y)], fill=c)
            lbl = _fmt(_f(t, 6))
            draw.text((margin_l - 8 - 6 * len(lbl), Y - 6), lbl, fill=c, font=small)
    names_uv = _axis_names(r, u, axis)
    draw.text((margin_l + pw // 2 - 20, height - 16), f"{names_uv[0]} (mm)", fill=c, font=small)
    draw.text((4, margin_t - 16), f"{names_uv[1]} (mm)", fill=c, font=small)
    draw.text((margin_l, 6), f"section {plabel}", fill=(20, 20, 20), font=font)
    if len(names) > 1:
        _legend(draw, [names[i] for i, _ in got], margin_l + 8, margin_t + 6, small)
    extent = (f"{names_uv[0]} {_fmt(_f(float(min(corners @ r)) - off_u, 5))}..{_fmt(_f(float(max(corners @ r)) - off_u, 5))}, "
              f"{names_uv[1]} {_fmt(_f(float(min(corners @ u)) - off_v, 5))}..{_fmt(_f(float(max(corners @ u)) - off_v, 5))} mm")
    return _png(img), {"plane": plabel, "mm_per_px": _f(mm), "triangles": int(len(mesh.T)),
                       "extent": extent, "cut": [names[i] for i, _ in got]}


def _solid_kind():
    from OCP.TopAbs import TopAbs_SOLID
    return TopAbs_SOLID


def _axis_names(r, u, axis) -> tuple[str, str]:
    def name(v, fallback):
        for i, a in enumerate("XYZ"):
            if abs(abs(v[i]) - 1) < 1e-9:
                return a if v[i] > 0 else "-" + a
        return fallback
    if axis is None:
        return "u", "v"
    return name(r, "u"), name(u, "v")


def _png(img) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="PNG", compress_level=6)
    return buf.getvalue()


def warm_up(shape) -> None:
    """Called by the zygote: import Pillow, load the fonts and run every code path once on tiny
    images (a view, a sheet, a section, a clipped view), so that forked sessions render without
    importing anything new (a first import inside the jail may need a syscall it denies)."""
    from PIL import Image, ImageDraw, ImageFont, PngImagePlugin  # noqa: F401
    _font(13), _font(11)
    ns = {"warm_up_shape": shape}
    render(ns, width=64, height=64)
    render(ns, view="sheet", width=128, height=128)
    lo, hi = shapes_bbox([shape.wrapped])
    mid = float((lo[2] + hi[2]) / 2)
    render(ns, view="section", section={"axis": "z", "offset": mid}, width=160, height=120)
    render(ns, view="top", section={"point": [0, 0, mid], "normal": [0, 0, 1]}, azimuth=10, width=64, height=64)
    render({"warm_up_edges": shape.edges()[0]}, width=64, height=64)  # lines: GCPnts, BRepAdaptor


# ------------------------------------------------------------------ the jail op

MAX_PNG_BYTES = 8 * 1024 * 1024  # the launcher's png_check cap too


def op_render(msg: dict, ctx) -> tuple[dict, bytes]:
    """``{"t": "render", "objects", "view", "azimuth", "elevation", "width", "height", "section"}``
    -> ``({"ok": True, "size", "caption", ...meta}, png)`` or ``({"ok": False, "error"}, b"")``."""
    try:
        png, meta = render(ctx.namespace, msg.get("objects"), msg.get("view") or "iso",
                           azimuth=msg.get("azimuth"), elevation=msg.get("elevation"),
                           width=msg.get("width", 800), height=msg.get("height", 600),
                           section=msg.get("section"))
    except (RenderError, MeasureError) as e:
        return {"ok": False, "error": str(e)}, b""
    if len(png) > MAX_PNG_BYTES:
        return {"ok": False, "error": f"the image is {len(png)} bytes, over the cap of {MAX_PNG_BYTES}"}, b""
    return {"ok": True, "size": len(png), **meta}, png

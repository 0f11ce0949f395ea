"""Rendering, step 4: pixels. Lambert shading (smooth within a face), section caps hatched, edges
found in image space (B-rep face boundaries, silhouettes, depth creases), and the supersampled
image averaged down (anti-aliasing) and composed over a background.
"""

from __future__ import annotations

import numpy as np

from jail.cad.render_mesh import Mesh
from jail.cad.render_raster import rasterize
from jail.cad.render_view import View, unit

__all__ = ["shade", "downsample", "compose", "openings", "PALETTE", "BG", "EDGE", "GRID", "HOLE"]

PALETTE = [(74, 144, 217), (230, 126, 34), (46, 175, 92), (200, 60, 70), (142, 96, 196),
           (22, 170, 170), (214, 178, 32), (150, 100, 70), (120, 130, 145), (220, 110, 170)]
BG = np.array([250, 250, 250], np.float32)
EDGE = np.array([28, 30, 34], np.float32)
GRID = np.array([226, 230, 236], np.float32)


HOLE = np.float32(0.42)  # what a pixel seen through an opening keeps of its shade
HATCH = ((np.float32(0.55), np.float32(0.0)), (np.float32(0.35), np.float32(255 * 0.65)))  # stripe, fill


def downsample(a: np.ndarray, ss: int = 2) -> np.ndarray:
    """Average ss x ss blocks (ss = 1 or 2)."""
    if ss == 1:
        return a.astype(np.float32, copy=False)
    return (a[0::2, 0::2] + a[1::2, 0::2] + a[0::2, 1::2] + a[1::2, 1::2]) * np.float32(0.25)


def _down_u8(c: np.ndarray, ss: int) -> np.ndarray:
    """An (H, W, 3 or 4) uint8 image averaged down by ``ss`` (1 or 2), rounded: (h, w, 3) uint8."""
    if ss == 1:
        return np.ascontiguousarray(c[..., :3])
    # on the packed pixels: the even and the odd bytes each in 16-bit lanes of a uint32, so four
    # samples add without a carry into the next channel ((a + b + c + d + 2) >> 2 per channel)
    p = np.ascontiguousarray(c).view(np.uint32)[..., 0]
    m = np.uint32(0x00FF00FF)
    q = (p[0::2, 0::2], p[1::2, 0::2], p[0::2, 1::2], p[1::2, 1::2])
    lo = q[0] & m
    hi = (q[0] >> 8) & m
    for x in q[1:]:
        lo += x & m
        hi += (x >> 8) & m
    lo += np.uint32(0x00020002)
    hi += np.uint32(0x00020002)
    lo >>= 2
    hi >>= 2
    lo &= m
    hi &= m
    hi <<= 8
    lo |= hi
    return np.ascontiguousarray(lo.view(np.uint8).reshape(lo.shape + (4,))[..., :3])


def _window_min(z: np.ndarray, r: int) -> np.ndarray:
    """``M[i] = min(z[i : i + r])`` down the rows (inf past the end) for ``r`` a power of two:
    log2(r) passes of ``np.minimum`` (each window the min of two halves)."""
    m = z.copy()
    step = 1
    while step < r:
        m[:-step] = np.minimum(m[:-step], m[step:])
        m[-step:] = np.minimum(m[-step:], np.inf)
        step *= 2
    return m


def openings(z: np.ndarray, gap: float, r: int) -> np.ndarray:
    """Pixels seen through an opening: within ``r`` pixels to the left, right, above and below
    each of them something is nearer to the viewer by more than ``gap`` (a hole's rim all
    around, not one step beside). ``z``: depth (inf where empty), grows away from the viewer."""
    r = 1 << max(1, int(r).bit_length() - 1)  # a power of two, at most r
    far = z - np.float32(gap)
    out = np.isfinite(z)
    _nearer_both_sides(z, far, out, r)  # down the columns
    rows = np.flatnonzero(out.any(1))  # along the rows: only rows with a pixel still in question
    if len(rows):
        sub = out[rows]
        _nearer_both_sides(z[rows].T, far[rows].T, sub.T, r)
        out[rows] = sub
    return out


def _nearer_both_sides(zz: np.ndarray, ff: np.ndarray, oo: np.ndarray, r: int) -> None:
    """``oo &=``: within ``r`` entries before and after, down axis 0, something is nearer than ``ff``."""
    n = zz.shape[0]
    zp = np.full((n + 2 * r + 1,) + zz.shape[1:], np.inf, np.float32)
    zp[r:r + n] = zz
    m = _window_min(zp, r)  # m[i] = min(zp[i:i + r]); zp[i] = zz[i - r]
    oo &= m[:n] < ff  # above: zz[y - r:y]
    oo &= m[r + 1:r + 1 + n] < ff  # below: zz[y + 1:y + r + 1]


def shade(mesh: Mesh, view: View, *, hatch_caps: bool = True, flat_fill: bool = False,
          coverage: bool = False, holes: bool = True, palette: list | None = None):
    """Rasterise and shade ``mesh``; returns (rgb (h, w, 3) uint8 over the background ``BG``,
    coverage (h, w) float32 or None) at output size.

    Shading is Gouraud-interpolated Lambert (per-vertex intensity, so planar faces are flat and
    curved ones smooth), two-sided for free faces; triangles of solids facing away are skipped.
    Pixels seen through an opening (``openings``) are darkened, so a hole reads as a hole.
    ``palette``: the objects' colours (``(r, g, b)`` 0..255 each, object ``i`` gets ``palette[i % n]``)
    instead of ``PALETTE``."""
    SS = view.ss
    W, H = view.w * SS, view.h * SS
    px, py, pz = view.project(mesh.V)
    T = mesh.T
    if len(T):
        a, b, c = (mesh.V[T[:, k]] for k in range(3))
        front = np.cross(b - a, c - a) @ view.d >= 0
        keep = np.nonzero(~mesh.K | front)[0]
        T = T[keep]
    else:
        keep = np.zeros(0, np.int64)
    # every pass below works in the window the triangles cover (two output pixels spare on each
    # side, so edges, creases and openings come out as over the whole image), pasted on the background
    ox, oy, cw, ch = _window(px, py, T, view)
    W, H = cw * SS, ch * SS
    px = px - ox * SS
    py = py - oy * SS
    zbuf, tid = rasterize(px, py, pz, T, W, H)
    luts, hatch_lut = (_LUTS, _HATCH_LUT) if not palette else _make_luts(np.array(palette, np.float32))
    npal = len(PALETTE) if not palette else len(palette)
    nk = len(T)
    # one colour per kept triangle, the background at index -1: the canvas is a single look-up
    # by triangle index; only pixels of triangles whose shade varies (curved faces) and of
    # section caps (hatched) are computed one by one
    tcol = np.empty(nk + 1, np.uint32)
    tcol[-1] = _pack(BG)
    oi_t = (mesh.O[keep] % npal).astype(np.intp)
    lut = luts[bool(flat_fill)]  # (palette, 256 shade levels) -> packed colour
    varying = None
    if nk:
        if flat_fill:
            tcol[:-1] = lut[oi_t, 255]
        else:
            light = unit(view.d * 1.0 + view.u * 0.45 - view.r * 0.25)
            iv = 0.30 + 0.62 * np.abs(mesh.N @ light) + 0.10 * np.abs(mesh.N @ view.d) ** 24  # per vertex
            ivt = iv[T] * (255 / LEVEL_MAX)  # intensity in LUT levels
            lo_t, hi_t = ivt.min(1), ivt.max(1) + 0.5
            # a triangle whose vertices share one shade (planar faces) has it everywhere: the
            # plane below, clamped to [lo, hi], is constant there
            flat = (hi_t - lo_t) < 0.5 + 1e-6
            lvl = np.clip(np.floor(ivt[:, 0] + 0.5), 0, 255).astype(np.intp)
            tcol[:-1] = lut[oi_t, lvl]
            if not flat.all():
                varying = (T, ivt, lo_t, hi_t, ~flat)
    ti = tid.astype(np.intp)  # look-ups index fastest with the platform's own integer
    canvas = tcol[ti]  # packed RGBA, the background where tid is -1
    fk = np.empty(nk + 1, np.int32)
    fk[:-1] = mesh.F[keep]
    fk[-1] = -1
    fid = fk[ti]
    if varying is not None:
        Tv, ivt, lo_t, hi_t, vary = varying
        vx = np.append(vary, False)
        pv = np.flatnonzero(vx[ti])
        if len(pv):
            t = tid[pv]
            x0, y0 = px[Tv[:, 0]], py[Tv[:, 0]]
            x1, y1 = px[Tv[:, 1]], py[Tv[:, 1]]
            x2, y2 = px[Tv[:, 2]], py[Tv[:, 2]]
            area = (x1 - x0) * (y2 - y0) - (x2 - x0) * (y1 - y0)
            inv = 1.0 / np.where(np.abs(area) > 1e-12, area, 1e-12)
            A1, B1 = (y2 - y0) * inv, -(x2 - x0) * inv
            A2, B2 = -(y1 - y0) * inv, (x1 - x0) * inv
            C1, C2 = -(A1 * x0 + B1 * y0), -(A2 * x0 + B2 * y0)
            d1, d2 = ivt[:, 1] - ivt[:, 0], ivt[:, 2] - ivt[:, 0]
            # intensity as a plane over the triangle (Gouraud), clamped to its vertex range
            k = [np.take(c.astype(np.float32), t) for c in (
                A1 * d1 + A2 * d2, B1 * d1 + B2 * d2, ivt[:, 0] + C1 * d1 + C2 * d2 + 0.5, lo_t, hi_t)]
            cyd = np.floor((pv + 0.5) * (1.0 / W))  # the row, without an integer division
            cx = (pv - cyd * W).astype(np.float32) + np.float32(0.5)
            cy = cyd.astype(np.float32) + np.float32(0.5)
            inten = k[0] * cx
            inten += k[1] * cy
            inten += k[2]
            np.maximum(inten, k[3], out=inten)
            np.minimum(inten, k[4], out=inten)
            level = inten.astype(np.intp)
            np.clip(level, 0, 255, out=level)
            canvas[pv] = lut[oi_t[t], level]
    if hatch_caps and nk and (mesh.C[keep] == 1).any():
        cx_ = np.append(mesh.C[keep] == 1, False)
        pc = np.flatnonzero(cx_[ti])
        if len(pc):
            oc = oi_t[tid[pc]]
            stripe = ((pc % W) + (pc // W) + (ox + oy) * SS) % (7 * SS) < SS
            canvas[pc] = np.where(stripe, hatch_lut[0][oc], hatch_lut[1][oc])
    # edges: B-rep face boundaries and silhouettes (face id changes)
    fid2 = fid.reshape(H, W)
    edge = np.zeros((H, W), bool)
    dx = fid2[:, 1:] != fid2[:, :-1]
    dy = fid2[1:, :] != fid2[:-1, :]
    edge[:, 1:] |= dx
    edge[1:, :] |= dy
    if SS > 1:  # both sides of the boundary: about one output pixel wide after averaging
        edge[:, :-1] |= dx
        edge[:-1, :] |= dy
    canvas.reshape(H, W)[edge] = _pack(EDGE)
    out = _down_u8(canvas.view(np.uint8).reshape(H, W, 4), SS)
    if nk and tid.max() >= 0:
        z2 = zbuf.reshape(H, W)
        zo = z2 if SS == 1 else np.minimum(np.minimum(z2[0::2, 0::2], z2[1::2, 0::2]),
                                           np.minimum(z2[0::2, 1::2], z2[1::2, 1::2]))
        # depth creases within one face (a face hiding part of itself), at output size
        thr = np.float32(3.0 * view.mm_per_px)
        crease = np.zeros(zo.shape, bool)
        with np.errstate(invalid="ignore"):
            crease[:, 1:-1] = np.abs(zo[:, 2:] + zo[:, :-2] - 2 * zo[:, 1:-1]) > thr
            crease[1:-1, :] |= np.abs(zo[2:, :] + zo[:-2, :] - 2 * zo[1:-1, :]) > thr
        out[crease] = EDGE.astype(np.uint8)
        if holes and not flat_fill:
            zmax = float(np.max(zbuf, where=np.isfinite(zbuf), initial=-np.inf))
            gap = max(4.0 * view.mm_per_px, 0.03 * (zmax - float(zbuf.min())))
            hole = openings(zo, gap, max(view.w, view.h) // 4)
            if hole.any():
                out[hole] = (out[hole] * HOLE).astype(np.uint8)
    full = np.empty((view.h, view.w, 3), np.uint8)
    full[:] = BG.astype(np.uint8)
    full[oy:oy + ch, ox:ox + cw] = out
    cov = None
    if coverage:
        cov = np.zeros((view.h, view.w), np.float32)
        cov[oy:oy + ch, ox:ox + cw] = downsample(((tid >= 0).reshape(H, W) | edge).astype(np.float32), SS)
    return full, cov


def _window(px: np.ndarray, py: np.ndarray, T: np.ndarray, view: View) -> tuple[int, int, int, int]:
    """``(x, y, w, h)`` in output pixels: the part of the image the triangles ``T`` can cover, two
    pixels wider on each side, within the image (at least one pixel)."""
    w, h = view.w, view.h
    if len(T):
        xs, ys = px[T], py[T]
        fin = np.isfinite(xs) & np.isfinite(ys)
        if fin.any():
            ss = view.ss
            x0 = max(0, int(np.floor(xs[fin].min() / ss)) - 2)
            x1 = min(w, int(np.ceil(xs[fin].max() / ss)) + 2)
            y0 = max(0, int(np.floor(ys[fin].min() / ss)) - 2)
            y1 = min(h, int(np.ceil(ys[fin].max() / ss)) + 2)
            if x1 > x0 and y1 > y0:
                return x0, y0, x1 - x0, y1 - y0
    return 0, 0, 1, 1


LEVEL_MAX = 1.05  # the brightest shade (intensity) a LUT level can hold


def _pack(rgb) -> np.uint32:
    r, g, b = (int(round(float(c))) for c in rgb)
    return np.array([r, g, b, 255], np.uint8).view(np.uint32)[0]


def _pack_all(rgb: np.ndarray) -> np.ndarray:
    """(..., 3) float colours -> (...) packed uint32 (RGBA, alpha 255), rounded and clamped."""
    a = np.empty(rgb.shape[:-1] + (4,), np.uint8)
    a[..., :3] = np.clip(np.round(rgb), 0, 255)
    a[..., 3] = 255
    return a.view(np.uint32)[..., 0]


def _make_luts(pal: np.ndarray) -> tuple[dict, tuple]:
    """The shade LUTs (``{flat: (n, 256) packed}``) and hatch LUTs of an ``(n, 3)`` float palette."""
    luts = {False: _pack_all(pal[:, None, :] * (np.arange(256, dtype=np.float32) * (LEVEL_MAX / 255))[None, :, None]),
            True: _pack_all(np.repeat((pal * 0.35 + 255 * 0.65)[:, None, :], 256, 1))}
    return luts, tuple(_pack_all(pal * sc + off) for sc, off in HATCH)


_PAL = np.array(PALETTE, np.float32)
_LUTS, _HATCH_LUT = _make_luts(_PAL)


def _lut(flat: bool) -> np.ndarray:
    return _LUTS[bool(flat)]


def compose(rgb: np.ndarray, cov: np.ndarray, bg: np.ndarray) -> np.ndarray:
    a = cov[..., None]
    return np.clip(rgb * a + bg * (1 - a), 0, 255).round().astype(np.uint8)

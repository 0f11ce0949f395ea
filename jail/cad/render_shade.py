"""Rendering, step 4: pixels. Lambert shading (smooth within a face), section caps hatched, edges
found in image space (B-rep face boundaries, silhouettes, depth creases), what is seen through
the mouth of a hole darkened (``render_holes``), and
the image composed over a background.

One sample per output pixel (its centre) everywhere; the pixels beside a face change or crossed by
a visible mesh contour (a part thinner than a pixel, a tip) are drawn again from SS x SS samples,
edge-marked and averaged as a fully supersampled image would be (anti-aliasing where it shows).
Pixels stay packed RGBA (uint32) until Pillow unpacks them. numpy only, no per-triangle loop.
"""

from __future__ import annotations

import numpy as np

from jail.cad.render_holes import seen_through
from jail.cad.render_mesh import Mesh
from jail.cad.render_raster import Samples, rasterize
from jail.cad.render_view import View, unit

__all__ = ["shade", "shade_packed", "shade_window", "to_image", "BG_PACKED", "downsample", "compose", "PALETTE", "BG", "EDGE", "GRID", "HOLE"]

PALETTE = [(74, 144, 217), (230, 126, 34), (46, 175, 92), (200, 60, 70), (142, 96, 196),
           (22, 170, 170), (214, 178, 32), (150, 100, 70), (120, 130, 145), (220, 110, 170)]
BG = np.array([250, 250, 250], np.float32)
EDGE = np.array([28, 30, 34], np.float32)
GRID = np.array([226, 230, 236], np.float32)


HOLE = np.float32(0.42)  # what a pixel seen through a hole keeps of its shade
HATCH = ((np.float32(0.55), np.float32(0.0)), (np.float32(0.35), np.float32(255 * 0.65)))  # stripe, fill


def downsample(a: np.ndarray, ss: int = 2) -> np.ndarray:
    """Average ss x ss blocks (ss = 1 or 2)."""
    if ss == 1:
        return a.astype(np.float32, copy=False)
    return (a[0::2, 0::2] + a[1::2, 0::2] + a[0::2, 1::2] + a[1::2, 1::2]) * np.float32(0.25)


def _avg_packed(q: list) -> np.ndarray:
    """The rounded per-channel average of four packed RGBA (uint32) arrays: ``(a + b + c + d + 2) >> 2``
    on the even and the odd bytes each in 16-bit lanes, so four samples add without a carry."""
    m = np.uint32(0x00FF00FF)
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
    return lo


def _down_u8(c: np.ndarray, ss: int) -> np.ndarray:
    """An (H, W, 3 or 4) uint8 image averaged down by ``ss`` (1 or 2), rounded: (h, w, 3) uint8."""
    if ss == 1:
        return np.ascontiguousarray(c[..., :3])
    p = np.ascontiguousarray(c).view(np.uint32)[..., 0]
    lo = _avg_packed([p[0::2, 0::2], p[1::2, 0::2], p[0::2, 1::2], p[1::2, 1::2]])
    return np.ascontiguousarray(lo.view(np.uint8).reshape(lo.shape + (4,))[..., :3])


def shade_packed(mesh: Mesh, view: View, *, hatch_caps: bool = True, flat_fill: bool = False,
                 coverage: bool = False, holes: bool = True, palette: list | None = None):
    """Rasterise and shade ``mesh``; returns (image (h, w) of packed RGBA uint32 over the background
    ``BG``, coverage (h, w) float32 or None) at output size: ``shade_window`` pasted on the background."""
    win, (ox, oy), covered = shade_window(mesh, view, hatch_caps=hatch_caps, flat_fill=flat_fill,
                                          coverage=coverage, holes=holes, palette=palette)
    ch, cw = win.shape
    full = np.full((view.h, view.w), BG_PACKED, np.uint32)
    full[oy:oy + ch, ox:ox + cw] = win
    cov = None
    if coverage:
        cov = np.zeros((view.h, view.w), np.float32)
        cov[oy:oy + ch, ox:ox + cw] = covered
    return full, cov


def shade_window(mesh: Mesh, view: View, *, hatch_caps: bool = True, flat_fill: bool = False,
                 coverage: bool = False, holes: bool = True, palette: list | None = None):
    """``shade_packed`` of only the window the triangles cover (``_window``): returns (that window
    (ch, cw) of packed RGBA uint32, its top left corner ``(x, y)`` in the image, its coverage
    (ch, cw) float32 or None). Outside it the image is the background ``BG``.

    Shading is Gouraud-interpolated Lambert (per-vertex intensity, so planar faces are flat and
    curved ones smooth), two-sided for free faces; triangles of solids facing away are skipped.
    Pixels seen through the mouth of a round hole (``render_holes``) are darkened, so a hole
    reads as a hole.
    ``palette``: the objects' colours (``(r, g, b)`` 0..255 each, object ``i`` gets ``palette[i % n]``)
    instead of ``PALETTE``."""
    SS = view.ss
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
    px = px - ox * SS
    py = py - oy * SS
    nk = len(T)
    pal = _Paint(mesh, keep, T, px, py, view, flat_fill, palette, hatch_caps, (ox + oy) * SS)
    # one sample per output pixel, at its centre: the colour of every pixel away from edges
    z1, t1 = rasterize(px * (1.0 / SS), py * (1.0 / SS), pz, T, cw, ch) if SS > 1 else \
        rasterize(px, py, pz, T, cw, ch)
    ti = t1.astype(np.intp)
    fid = pal.fk[ti].reshape(ch, cw)
    canvas = pal.centre(ti, cw, SS)
    dx = fid[:, 1:] != fid[:, :-1]
    dy = fid[1:, :] != fid[:-1, :]
    edge = np.zeros((ch, cw), bool)  # at 1x: the pixel after a face change; at SS: the pixels to supersample
    edge[:, 1:] |= dx
    edge[1:, :] |= dy
    if SS == 1:
        canvas[edge.ravel()] = _pack(EDGE)
        covered = (t1 >= 0) | edge.ravel()
    else:  # both sides of each face change: supersampled (SS x SS, as if the whole image were)
        edge[:, :-1] |= dx
        edge[:-1, :] |= dy
        # and every pixel a visible contour crosses that no face change marked, with its four
        # neighbours (a sample there may touch a face change inside it): a part thinner than a
        # pixel that no centre sees, a corner's tip
        cpx, cz = _contour_pixels(T, px * (1.0 / SS), py * (1.0 / SS), pz, cw, ch)
        zc = z1[cpx]
        tol = max(4.0 * view.mm_per_px, 0.03 * float(np.ptp(pz[T])) if len(T) else 0.0)
        new = cpx[~edge.ravel()[cpx] & ~(cz > zc + tol)]
        if len(new):
            cp = np.zeros((ch, cw), bool)
            cp.ravel()[new] = True
            edge |= cp
            edge[:, 1:] |= cp[:, :-1]
            edge[:, :-1] |= cp[:, 1:]
            edge[1:, :] |= cp[:-1, :]
            edge[:-1, :] |= cp[1:, :]
        mp = np.flatnonzero(edge)
        covered = (t1 >= 0).astype(np.float32) if coverage else None
        if len(mp):
            col, zmin, cvr = _supersample(mp, fid.ravel(), pal, px, py, pz, T, cw, ch, SS)
            canvas[mp] = col
            z1[mp] = zmin
            if coverage:
                covered[mp] = cvr
    c2 = canvas.reshape(ch, cw)
    if nk and (z1 < np.inf).any():
        zo = z1.reshape(ch, cw)
        # depth creases within one face (a face hiding part of itself), at output size
        thr = np.float32(3.0 * view.mm_per_px)
        crease = np.zeros(zo.shape, bool)
        with np.errstate(invalid="ignore"):
            for a, b, m, cr in ((zo[:, 2:], zo[:, :-2], zo[:, 1:-1], crease[:, 1:-1]),
                                (zo[2:, :], zo[:-2, :], zo[1:-1, :], crease[1:-1, :])):
                t = a + b
                t -= m
                t -= m
                np.abs(t, out=t)
                cr |= t > thr
        c2[crease] = _pack(EDGE)
        if holes and not flat_fill and (len(mesh.D) or mesh.W):
            hole = seen_through(mesh.D, zo, view, ox, oy, mesh.W)
            if hole.any():
                q = c2[hole].view(np.uint8).reshape(-1, 4)
                q[:, :3] = (q[:, :3] * HOLE).astype(np.uint8)
                c2[hole] = q.view(np.uint32)[:, 0]
    return c2, (ox, oy), covered.reshape(ch, cw).astype(np.float32, copy=False) if coverage else None


def to_image(packed: np.ndarray):
    """A Pillow RGB image of an (h, w) array of packed RGBA pixels (``shade_packed``)."""
    from PIL import Image
    h, w = packed.shape
    return Image.frombytes("RGB", (w, h), np.ascontiguousarray(packed), "raw", "RGBX")


def shade(mesh: Mesh, view: View, **kw):
    """``shade_packed`` with the image as (h, w, 3) uint8."""
    packed, cov = shade_packed(mesh, view, **kw)
    return np.ascontiguousarray(packed.view(np.uint8).reshape(packed.shape + (4,))[..., :3]), cov


def _contour_pixels(T: np.ndarray, x: np.ndarray, y: np.ndarray, z: np.ndarray, cw: int, ch: int):
    """``(pixels, depths)``: flat indices of the pixels (of a ``cw`` x ``ch`` image, vertices at
    ``x``, ``y``, depth ``z``) crossed by the contours of the triangles ``T``, edges not shared by
    two of them (a face's boundary, or where its kept triangles meet those facing away), sampled
    every quarter pixel, and the contour's depth there."""
    if not len(T):
        return np.zeros(0, np.intp), np.zeros(0)
    e = np.concatenate([T[:, [0, 1]], T[:, [1, 2]], T[:, [2, 0]]])
    e.sort(1)
    key = e[:, 0] * (int(e.max()) + 1) + e[:, 1]
    key.sort()
    once = np.ones(len(key), bool)
    dup = key[1:] == key[:-1]
    once[1:] &= ~dup
    once[:-1] &= ~dup
    k = key[once]
    n1 = int(e.max()) + 1
    a, b = k // n1, k % n1
    x0, y0, x1, y1, z0, z1 = x[a], y[a], x[b], y[b], z[a], z[b]
    ok = np.isfinite(x0) & np.isfinite(y0) & np.isfinite(x1) & np.isfinite(y1) & np.isfinite(z0) & np.isfinite(z1)
    x0, y0, x1, y1, z0, z1 = x0[ok], y0[ok], x1[ok], y1[ok], z0[ok], z1[ok]
    n = np.minimum(np.ceil(np.maximum(np.abs(x1 - x0), np.abs(y1 - y0)) * 4), 4 * (cw + ch)).astype(np.int64) + 1
    seg = np.repeat(np.arange(len(n)), n)
    t = (np.arange(int(n.sum())) - np.repeat(np.cumsum(n) - n, n)) / np.repeat(np.maximum(n - 1, 1), n)
    xs = np.floor(x0[seg] + (x1 - x0)[seg] * t).astype(np.int64)
    ys = np.floor(y0[seg] + (y1 - y0)[seg] * t).astype(np.int64)
    inside = (xs >= 0) & (xs < cw) & (ys >= 0) & (ys < ch)
    return ys[inside] * cw + xs[inside], (z0[seg] + (z1 - z0)[seg] * t)[inside]


def _supersample(mp, fid1, pal, px, py, pz, T, cw, ch, SS):
    """The output pixels ``mp`` (flat, sorted) drawn from SS x SS samples each, as the whole image
    was before: samples rasterised, shaded, samples beside a face change painted ``EDGE``, averaged.
    Returns (packed colours, nearest depth, coverage) per pixel of ``mp``. A sample's neighbour
    outside ``mp``'s pixels has that pixel's own face (it is no face change's neighbour)."""
    smp = Samples(mp, cw, ch, SS)
    zs, ts = rasterize(px, py, pz, T, cw * SS, ch * SS, sel=smp)
    R, y, x, mk, C = smp.R, smp.y, smp.x, smp.marked, smp.C
    t = ts.astype(np.intp)[R]  # (pixels, SS, SS): each pixel's samples
    f = pal.fk[t]
    last = SS - 1
    edge = np.zeros(f.shape, bool)
    # within a pixel
    edge[:, :, 1:] |= f[:, :, 1:] != f[:, :, :-1]
    edge[:, :, :-1] |= f[:, :, 1:] != f[:, :, :-1]
    edge[:, 1:, :] |= f[:, 1:, :] != f[:, :-1, :]
    edge[:, :-1, :] |= f[:, 1:, :] != f[:, :-1, :]
    # across: the next chosen pixel in a row is the one beside only if it is chosen; above and
    # below, a chosen pixel's samples by its rank; at the image's border a sample has no neighbour
    fs = pal.fk[ts.astype(np.intp)]
    for side, ok, col_in, col_out, rank_of in (
            (-1, x > 0, 0, last, lambda p: R[:, :, 0] - 1),
            (1, x < cw - 1, last, 0, lambda p: R[:, :, last] + 1),
            (-cw, y > 0, 0, last, None), (cw, y < ch - 1, last, 0, None)):
        p = np.where(ok, mp + side, mp)
        if rank_of is not None:  # left, right: the samples of column col_in, rows 0..SS-1
            nb = np.where(mk[p][:, None], fs[np.minimum(rank_of(p), len(fs) - 1)], fid1[p][:, None])
            nb = np.where(ok[:, None], nb, f[:, :, col_in])
            edge[:, :, col_in] |= nb != f[:, :, col_in]
        else:  # above, below: row col_in's samples against the neighbour pixel's row col_out
            py_ = p // cw
            c0 = C[py_ * cw].astype(np.int64)
            r = (c0 * (SS * SS) + col_out * SS * (C[py_ * cw + cw] - c0) + SS * (C[p] - c0))[:, None] + np.arange(SS)
            nb = np.where(mk[p][:, None], fs[np.minimum(r, len(fs) - 1)], fid1[p][:, None])
            nb = np.where(ok[:, None], nb, f[:, col_in, :])
            edge[:, col_in, :] |= nb != f[:, col_in, :]
    a = np.arange(SS)
    Y = np.broadcast_to((y * SS)[:, None, None] + a[None, :, None], t.shape).ravel()
    X = np.broadcast_to((x * SS)[:, None, None] + a[None, None, :], t.shape).ravel()
    col = pal.at(t.ravel(), X, Y).reshape(len(mp), SS * SS)
    e = edge.reshape(len(mp), SS * SS)
    col[e] = _pack(EDGE)
    zmin = zs[R].reshape(len(mp), SS * SS).min(1)
    cvr = ((t >= 0).reshape(len(mp), SS * SS) | e).mean(1, dtype=np.float32)
    return _avg_packed([col[:, k] for k in range(SS * SS)]), zmin, cvr


class _Paint:
    """The colours of the kept triangles: per triangle a packed colour (index -1: the background),
    its B-rep face (``fk``), the Gouraud plane of a curved face's triangles, and section caps hatched."""

    def __init__(self, mesh, keep, T, px, py, view, flat_fill, palette, hatch_caps, hatch_off):
        luts, self.hatch_lut = (_LUTS, _HATCH_LUT) if not palette else _make_luts(np.array(palette, np.float32))
        npal = len(PALETTE) if not palette else len(palette)
        nk = len(T)
        self.hatch_off = hatch_off
        self.ss = view.ss
        self.tcol = np.empty(nk + 1, np.uint32)
        self.tcol[-1] = _pack(BG)
        self.oi = np.zeros(nk + 1, np.intp)
        self.oi[:-1] = mesh.O[keep] % npal
        self.fk = np.empty(nk + 1, np.int32)
        self.fk[:-1] = mesh.F[keep]
        self.fk[-1] = -1
        self.lut = lut = luts[bool(flat_fill)]  # (palette, 256 shade levels) -> packed colour
        self.vary = self.cap = None
        if hatch_caps and nk and (mesh.C[keep] == 1).any():
            self.cap = np.append(mesh.C[keep] == 1, False)
        if not nk:
            return
        if flat_fill:
            self.tcol[:-1] = lut[self.oi[:-1], 255]
            return
        light = unit(view.d * 1.0 + view.u * 0.45 - view.r * 0.25)
        iv = 0.30 + 0.62 * np.abs(mesh.N @ light) + 0.10 * np.abs(mesh.N @ view.d) ** 24  # per vertex
        ivt = iv[T] * (255 / LEVEL_MAX)  # intensity in LUT levels
        lo_t, hi_t = ivt.min(1), ivt.max(1) + 0.5
        # a triangle whose vertices share one shade (planar faces) has it everywhere: the
        # plane below, clamped to [lo, hi], is constant there
        flat = (hi_t - lo_t) < 0.5 + 1e-6
        lvl = np.clip(np.floor(ivt[:, 0] + 0.5), 0, 255).astype(np.intp)
        self.tcol[:-1] = lut[self.oi[:-1], lvl]
        if flat.all():
            return
        self.vary = np.append(~flat, False)
        x0, y0 = px[T[:, 0]], py[T[:, 0]]
        x1, y1 = px[T[:, 1]], py[T[:, 1]]
        x2, y2 = px[T[:, 2]], py[T[:, 2]]
        area = (x1 - x0) * (y2 - y0) - (x2 - x0) * (y1 - y0)
        inv = 1.0 / np.where(np.abs(area) > 1e-12, area, 1e-12)
        A1, B1 = (y2 - y0) * inv, -(x2 - x0) * inv
        A2, B2 = -(y1 - y0) * inv, (x1 - x0) * inv
        C1, C2 = -(A1 * x0 + B1 * y0), -(A2 * x0 + B2 * y0)
        d1, d2 = ivt[:, 1] - ivt[:, 0], ivt[:, 2] - ivt[:, 0]
        # intensity as a plane over the triangle (Gouraud, in supersampled pixels), clamped to its vertex range
        self.k = [np.append(c, 0).astype(np.float32) for c in (
            A1 * d1 + A2 * d2, B1 * d1 + B2 * d2, ivt[:, 0] + C1 * d1 + C2 * d2 + 0.5, lo_t, hi_t)]

    def _gouraud(self, col, t, pos) -> None:
        """``col[i] =`` the shade of curved-face samples ``t``; ``pos(i)``: their supersampled (x, y)."""
        pv = np.flatnonzero(self.vary[t])
        if not len(pv):
            return
        tt = t[pv]
        cx, cy = pos(pv)
        k = self.k
        inten = k[0][tt] * cx
        inten += k[1][tt] * cy
        inten += k[2][tt]
        np.maximum(inten, k[3][tt], out=inten)
        np.minimum(inten, k[4][tt], out=inten)
        level = inten.astype(np.intp)
        np.clip(level, 0, 255, out=level)
        col[pv] = self.lut[self.oi[tt], level]

    def at(self, t, X, Y):
        """Packed colours of samples of triangles ``t`` at supersampled pixels (``X``, ``Y``)."""
        col = self.tcol[t]
        if self.vary is not None:
            h = np.float32(0.5)
            self._gouraud(col, t, lambda i: (X[i].astype(np.float32) + h, Y[i].astype(np.float32) + h))
        if self.cap is not None:
            pc = np.flatnonzero(self.cap[t])
            if len(pc):
                oc = self.oi[t[pc]]
                ss = self.ss
                stripe = (X[pc] + Y[pc] + self.hatch_off) % (7 * ss) < ss
                col[pc] = np.where(stripe, self.hatch_lut[0][oc], self.hatch_lut[1][oc])
        return col

    def centre(self, t, cw: int, SS: int):
        """Packed colours of the output pixels (flat, ``cw`` wide) of triangles ``t``: what SS x SS
        samples of one face average to (the shade at the centre; a cap's stripes mixed as they cover it)."""
        col = self.tcol[t]
        if self.vary is not None:
            c = np.float32(SS / 2)

            def pos(i):
                y, x = np.divmod(i, cw)
                return x.astype(np.float32) * SS + c, y.astype(np.float32) * SS + c
            self._gouraud(col, t, pos)
        if self.cap is not None:
            pc = np.flatnonzero(self.cap[t])
            if len(pc):
                oc = self.oi[t[pc]]
                s, f = self.hatch_lut[0][oc], self.hatch_lut[1][oc]
                ys, xs = np.divmod(pc, cw)
                if SS == 1:
                    col[pc] = np.where((xs + ys + self.hatch_off) % 7 < 1, s, f)
                else:  # SS = 2: of a pixel's samples, 3 lie in a stripe when k = 0, 1 when k = 6
                    k = (xs + ys + self.hatch_off // SS) % 7
                    col[pc] = np.where(k == 0, _avg_packed([s, s, s, f]), np.where(k == 6, _avg_packed([s, f, f, f]), f))
        return col


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
BG_PACKED = _pack(BG)  # the background as a packed RGBA pixel


def _lut(flat: bool) -> np.ndarray:
    return _LUTS[bool(flat)]


def compose(rgb: np.ndarray, cov: np.ndarray, bg: np.ndarray) -> np.ndarray:
    a = cov[..., None]
    return np.clip(rgb * a + bg * (1 - a), 0, 255).round().astype(np.uint8)

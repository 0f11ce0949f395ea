"""Rendering, step 3: the z-buffer. Which triangle is nearest at each pixel, of the whole image or of
a chosen set of pixels (the supersamples of the output pixels on edges: ``render_shade``).

numpy only, no per-triangle Python loop (scanline spans expanded in batches of about ``BUDGET``
pixels, so memory stays bounded whatever the triangles' shapes); no VTK, OpenGL, X or EGL.
"""

from __future__ import annotations

import numpy as np

__all__ = ["rasterize", "Samples", "BUDGET"]

BUDGET = 1 << 20  # pixels per rasteriser batch


class Samples:
    """The ``ss`` x ``ss`` samples of chosen output pixels ``mp`` (flat, sorted) of a ``cw`` x ``ch``
    image: ``pos``, their sorted flat indices in the supersampled image; ``R`` (len(mp), ss, ss),
    where pixel i's sample (row a, column b) sits in ``pos``; ``rank_yx``, how many samples come
    before a supersampled (row, column): prefix counts of chosen pixels, no search, no sort."""

    def __init__(self, mp: np.ndarray, cw: int, ch: int, ss: int):
        self.cw, self.ss, self.W = cw, ss, cw * ss
        n = (ch + 1) * cw + 1  # a row past the end: rank(end) is the count
        self.marked = np.zeros(n, bool)
        self.marked[mp] = True
        # C[p] = chosen pixels before pixel p: i from just after mp[i - 1] up to mp[i]
        gaps = np.diff(np.concatenate(([0], mp + 1, [n])))
        self.C = np.repeat(np.arange(len(mp) + 1, dtype=np.int32), gaps)
        self.y, self.x = y, x = np.divmod(mp, cw)
        c0 = self.C[y * cw].astype(np.int64)
        k = self.C[y * cw + cw] - c0  # chosen pixels in the row
        j = np.arange(len(mp)) - c0  # the pixel's place among them
        a = np.arange(ss)
        self.R = (c0 * (ss * ss) + ss * j)[:, None, None] + (a * ss)[None, :, None] * k[:, None, None] \
            + a[None, None, :]
        self.pos = np.empty(len(mp) * ss * ss, np.int64)
        self.pos[self.R] = ((y * ss)[:, None, None] + a[None, :, None]) * self.W + (x * ss)[:, None, None] \
            + a[None, None, :]

    def rows(self, tr: np.ndarray, jmin: np.ndarray, jmax: np.ndarray, imin: np.ndarray,
             imax: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(triangle, supersampled row)`` pairs of the triangles ``tr`` (rows ``jmin..jmax``,
        columns ``imin..imax``, supersampled, indexed by triangle), in triangle then row order,
        whose output row holds a chosen pixel within the triangle's output columns: the rows the
        rasteriser must scan. Tested once per output row (prefix counts ``C``), not per sample row."""
        ss, cw = self.ss, self.cw
        y0 = jmin[tr] // ss
        rt, y = _pairs(tr, y0, jmax[tr] // ss - y0 + 1)
        row = y * cw
        hit = np.flatnonzero(self.C[row + imax[rt] // ss + 1] > self.C[row + imin[rt] // ss])
        rt = np.repeat(rt[hit], ss)
        j = (np.repeat(y[hit] * ss, ss).reshape(-1, ss) + np.arange(ss)).ravel()
        ok = (j >= jmin[rt]) & (j <= jmax[rt])
        return rt[ok], j[ok]

    def spans(self, Y: np.ndarray, X0: np.ndarray, X1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For spans [``X0``, ``X1``) of supersampled rows ``Y``: the rank of their first sample
        and how many samples they hold (``rank_yx`` of both ends, the row's share computed once)."""
        ss, cw, k = self.ss, self.cw, self.ss.bit_length() - 1
        if ss == 1 << k:
            y, a = Y >> k, Y & (ss - 1)
            x0, b0, x1, b1 = X0 >> k, X0 & (ss - 1), X1 >> k, X1 & (ss - 1)
        else:
            (y, a), (x0, b0), (x1, b1) = np.divmod(Y, ss), np.divmod(X0, ss), np.divmod(X1, ss)
        row = y * cw
        c0 = self.C[row]
        first = (self.C[row + x0] - c0) * ss + b0 * self.marked[row + x0]
        n = (self.C[row + x1] - c0) * ss + b1 * self.marked[row + x1] - first
        first += c0.astype(np.int64) * (ss * ss) + a * ss * (self.C[row + cw] - c0)
        return first, n

    def rank_yx(self, Y: np.ndarray, X: np.ndarray) -> np.ndarray:
        """The number of samples before supersampled pixel (``Y``, ``X``) in row-major order."""
        ss, cw, k = self.ss, self.cw, self.ss.bit_length() - 1
        if ss == 1 << k:  # shifts, not divisions
            y, a, x, b = Y >> k, Y & (ss - 1), X >> k, X & (ss - 1)
        else:
            (y, a), (x, b) = np.divmod(Y, ss), np.divmod(X, ss)
        row = y * cw
        c0 = self.C[row].astype(np.int64)
        r = self.C[row + x] - c0
        r *= ss
        r += c0 * (ss * ss)
        r += a * ss * (self.C[row + cw] - c0)
        r += b * self.marked[row + x]
        return r


def _pairs(tr: np.ndarray, first: np.ndarray, count: np.ndarray):
    """One entry per (triangle, row): each triangle of ``tr`` repeated over its rows ``first``,
    ``first + 1``, ... (``count`` of them; both one per entry of ``tr``)."""
    rt = np.repeat(tr, count)
    return rt, np.repeat(first, count) + (np.arange(len(rt)) - np.repeat(np.cumsum(count) - count, count))


def rasterize(px: np.ndarray, py: np.ndarray, pz: np.ndarray, tris: np.ndarray, W: int, H: int,
              sel: Samples | None = None):
    """Z-buffer: ``(depth, triangle index)`` per pixel (flat arrays of H*W; index -1 = empty); with
    ``sel`` (``Samples`` of a W x H supersampled image) only at ``sel.pos`` (arrays of that length).

    ``px``/``py`` are pixel coordinates (x right, y down, pixel centres at +0.5), ``pz`` grows
    away from the viewer. Scanline spans, vectorised: every (triangle, pixel row) pair gets its
    covered x-interval from the three edge functions, the spans are expanded to pixels, and the
    nearest depth per pixel wins (``np.minimum.at``). Work is proportional to the pixels covered
    plus the rows spanned, whatever the triangles' shapes (long slivers cost no more than their
    area), in batches of about ``BUDGET`` pixels so memory stays bounded.
    """
    n_out = H * W if sel is None else len(sel.pos)
    zbuf = np.full(n_out, np.inf, np.float32)
    tid = np.full(n_out, -1, np.int32)
    if len(tris) == 0 or n_out == 0:
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
        if sel is None:
            rt, j = _pairs(tr, jmin[tr], rows[tr])
        else:  # only rows with a chosen pixel within the triangle's columns
            rt, j = sel.rows(tr, jmin, jmax, imin, imax)
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
        # per span: its first pixel, the depth there and the depth step along the row (float32
        # from here on: the z-buffer's own precision), so a pixel costs a few int32/float32 passes
        ts = rt
        ps = j * W + il
        zs = (Az[ts] * (il + 0.5) + Bz[ts] * cy + Cz[ts]).astype(np.float32)
        dz = Az[ts].astype(np.float32)
        tw = idx[ts].astype(np.int32)
        if sel is not None:  # the span's chosen pixels: ranks a..b-1 in sel
            a_, L = sel.spans(j, il, il + L)
            keep_ = np.flatnonzero(L)
            ps, zs, dz, tw, L, a_ = ps[keep_], zs[keep_], dz[keep_], tw[keep_], L[keep_], a_[keep_]
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
                first = np.cumsum(Ls) - Ls  # each span's first slot in this sub-batch
                k = np.arange(n, dtype=np.int32)
                if sel is None:  # pix = span start + (k - first); the x offset k - first
                    pix = np.repeat((ps[r0:r1] - first).astype(np.int32), Ls)
                    pix += k
                    xo = (k - np.repeat(first.astype(np.int32), Ls)).astype(np.float32)
                else:  # pix: the rank in sel; the x offset from the span's first pixel
                    pix = np.repeat((a_[r0:r1] - first).astype(np.int32), Ls)
                    pix += k
                    xo = (sel.pos[pix] - np.repeat(ps[r0:r1], Ls)).astype(np.float32)
                zv = np.repeat(dz[r0:r1], Ls)
                zv *= xo
                zv += np.repeat(zs[r0:r1], Ls)
                np.minimum.at(zbuf, pix, zv)
                win = zv <= zbuf[pix]
                tid[pix[win]] = np.repeat(tw[r0:r1], Ls)[win]
            r0 = r1
    return zbuf, tid

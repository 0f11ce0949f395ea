"""Rendering, step 4: pixels. Lambert shading (smooth within a face), section caps hatched, edges
found in image space (B-rep face boundaries, silhouettes, depth creases), and the supersampled
image averaged down (anti-aliasing) and composed over a background.
"""

from __future__ import annotations

import numpy as np

from jail.cad.render_mesh import Mesh
from jail.cad.render_raster import rasterize
from jail.cad.render_view import View, unit

__all__ = ["shade", "downsample", "compose", "PALETTE", "BG", "EDGE", "GRID"]

PALETTE = [(74, 144, 217), (230, 126, 34), (46, 175, 92), (200, 60, 70), (142, 96, 196),
           (22, 170, 170), (214, 178, 32), (150, 100, 70), (120, 130, 145), (220, 110, 170)]
BG = np.array([250, 250, 250], np.float32)
EDGE = np.array([28, 30, 34], np.float32)
GRID = np.array([226, 230, 236], np.float32)


def downsample(a: np.ndarray, ss: int = 2) -> np.ndarray:
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
        light = unit(view.d * 1.0 + view.u * 0.45 - view.r * 0.25)
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
        out[..., c] = downsample((pal[:, c][index] * scale + offset).reshape(H, W), SS)
    cov = downsample((hit | ef).astype(np.float32).reshape(H, W), SS)
    return out, cov


def compose(rgb: np.ndarray, cov: np.ndarray, bg: np.ndarray) -> np.ndarray:
    a = cov[..., None]
    return np.clip(rgb * a + bg * (1 - a), 0, 255).round().astype(np.uint8)

"""The renderer's fast paths against their plain definitions (jail/cad/render_shade.py, render_raster.py).

In-process, no jail: the openings test (windowed minima, no padding) on random depth maps, and the
z-buffer of a chosen set of pixels against the same pixels of the whole z-buffer.
"""

import numpy as np
import pytest


def _openings_plain(z, gap, r):
    r = 1 << max(1, int(r).bit_length() - 1)
    want = np.zeros(z.shape, bool)
    for y, x in zip(*np.nonzero(np.isfinite(z))):
        near = z[y, x] - gap
        want[y, x] = all(len(s) and s.min() < near for s in (z[max(0, y - r):y, x], z[y + 1:y + r + 1, x],
                                                              z[y, max(0, x - r):x], z[y, x + 1:x + r + 1]))
    return want


@pytest.mark.parametrize("shape,r", [((9, 13), 4), ((20, 7), 8), ((5, 40), 16), ((33, 31), 3), ((1, 6), 2)])
def test_openings_match_the_plain_definition(shape, r):
    from jail.cad.render_shade import openings
    rng = np.random.default_rng(shape[0] * 100 + r)
    for _ in range(4):
        z = rng.uniform(0, 10, shape).astype(np.float32)
        z[rng.random(shape) < 0.2] = np.inf
        assert np.array_equal(openings(z, 2.0, r), _openings_plain(z, 2.0, r))


def test_rasterising_chosen_pixels_gives_the_whole_buffers_values():
    from jail.cad.render_raster import Samples, rasterize
    rng = np.random.default_rng(3)
    W, H = 37, 29
    n = 40
    px = rng.uniform(-5, W + 5, n * 3)
    py = rng.uniform(-5, H + 5, n * 3)
    pz = rng.uniform(0, 10, n * 3)
    tris = np.arange(n * 3).reshape(n, 3)
    zb, tb = rasterize(px, py, pz, tris, W, H)
    assert (tb >= 0).sum() > 100
    sel = Samples(np.sort(rng.choice(W * H, 300, replace=False)), W, H, 1)
    zs, ts = rasterize(px, py, pz, tris, W, H, sel=sel)
    assert np.array_equal(ts, tb[sel.pos]) and np.allclose(zs, zb[sel.pos], atol=1e-4)
    # 2 x 2 samples of chosen pixels of a W/2 x H/2 image: the same again, and ranks without a search
    w, h = 18, 14
    zb, tb = rasterize(px, py, pz, tris, 2 * w, 2 * h)
    smp = Samples(np.sort(rng.choice(w * h, 60, replace=False)), w, h, 2)
    zs, ts = rasterize(px, py, pz, tris, 2 * w, 2 * h, sel=smp)
    assert np.array_equal(ts, tb[smp.pos]) and np.allclose(zs, zb[smp.pos], atol=1e-4)
    q = np.arange(4 * w * h + 1)
    assert np.array_equal(smp.rank_yx(q // (2 * w), q % (2 * w)), np.searchsorted(smp.pos, q))

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


def _part_openings_plain(z, part, gap, r):
    r = 1 << max(1, int(r).bit_length() - 1)
    want = np.zeros(z.shape, bool)
    for q in set(part[part >= 0].ravel().tolist()):
        src = np.where(part == q, z, np.inf)
        for y, x in zip(*np.nonzero(np.isfinite(z))):
            near = z[y, x] - gap
            want[y, x] |= all(len(s) and s.min() < near
                              for s in (src[max(0, y - r):y, x], src[y + 1:y + r + 1, x],
                                        src[y, max(0, x - r):x], src[y, x + 1:x + r + 1]))
    return want


@pytest.mark.parametrize("shape,r", [((9, 13), 4), ((20, 7), 8), ((33, 31), 3)])
def test_part_openings_need_a_rim_of_one_part(shape, r):
    """A pixel is in an opening only when one part is nearer on all four sides: the corner
    between two parts standing in front of a third is not a hole."""
    from jail.cad.render_shade import part_openings
    rng = np.random.default_rng(shape[0] * 10 + r)
    for _ in range(4):
        z = rng.uniform(0, 10, shape).astype(np.float32)
        z[rng.random(shape) < 0.2] = np.inf
        part = rng.integers(-1, 3, shape)
        assert np.array_equal(part_openings(z, part, 2.0, r), _part_openings_plain(z, part, 2.0, r))
    # two parts, each nearer on two sides only: nothing is an opening
    z = np.full((9, 9), 5.0, np.float32)
    part = np.zeros((9, 9), int)
    z[:, 6:] = z[6:, :] = 1.0
    part[:, 6:] = 1
    part[6:, :] = 2
    z[:3, :] = z[:, :3] = 1.0  # part 0 itself nearer above and to the left
    assert not part_openings(z, part, 2.0, 4).any()


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


def _render(objs: dict, **kw) -> np.ndarray:
    import io

    from PIL import Image

    from jail.cad.render import render
    png, _ = render(dict(objs), **kw)
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB")).astype(int)


def test_a_part_thinner_than_a_pixel_is_still_drawn():
    """Rods 0.14 mm thick (0.75 px at about 0.19 mm per pixel), each a tenth of a pixel further
    along: some lie between pixel centres (no centre sees them), and every one is still drawn,
    without gaps, as when the whole image was drawn from 2 x 2 samples."""
    from build123d import Box, Compound, Cylinder, Pos
    rods = [Pos(0, -80 + 2.019 * k, 0) * Cylinder(0.07, 50) for k in range(10)]
    objs = {"big": Box(10, 100, 60), "rods": Compound(rods)}
    img = _render(objs, view="right")
    dark = np.abs(img[200:400] - 250).sum(2) > 60  # rows within the rods' length
    cols = np.nonzero(dark.any(0))[0]
    rods = np.split(cols, np.nonzero(np.diff(cols) > 3)[0] + 1)
    rods = [r for r in rods if r[-1] < 200]  # left of the big box
    assert len(rods) == 10, rods
    for r in rods:
        assert dark[:, r[0]:r[-1] + 1].any(1).mean() > 0.95, f"the rod at columns {r} has gaps"


def test_edges_and_silhouettes_are_anti_aliased():
    """Along the plate's silhouette against the background there are blended pixels (neither the
    background, nor the edge colour, nor a face's shade): the edges are drawn from 2 x 2 samples."""
    from build123d import Box
    from jail.cad.render_shade import BG, EDGE
    img = _render({"b": Box(80, 60, 10)})
    bg = np.abs(img - BG.astype(int)).sum(2)
    edge = np.abs(img - EDGE.astype(int)).sum(2)
    part = bg > 30
    rows = np.nonzero(part.any(1))[0]
    blended = 0
    for y in rows[5:-5:7]:  # the first part pixel of a row and the one before it
        x = int(np.argmax(part[y]))
        for px in img[y, x - 1:x + 1]:
            d_bg = np.abs(px - BG).sum()
            d_edge = np.abs(px - EDGE).sum()
            blended += d_bg > 12 and d_edge > 12
    assert blended >= len(rows[5:-5:7]) // 2, blended
    assert (edge < 6).sum() > 500  # and the dark edge lines themselves are there

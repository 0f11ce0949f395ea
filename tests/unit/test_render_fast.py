"""The renderer's fast paths against their plain definitions (jail/cad/render_holes.py, render_raster.py).

In-process, no jail: the pixels seen through a hole's mouth against the disk's own points, and the
z-buffer of a chosen set of pixels against the same pixels of the whole z-buffer.
"""

import numpy as np
import pytest


def _view():
    from jail.cad.render_view import View, camera
    r, u, d = camera(30, 35)
    return View(r, u, d, (1.5, -2.0), 0.5, 120, 90, ss=1)


def _disk_points(c, n, rad, k, rng):
    """``k`` points of the disk (centre ``c``, normal ``n``) at ``rad`` from its centre."""
    from jail.cad.render_view import unit
    e1 = unit(np.cross(n, [1.0, 0.0, 0.0] if abs(n[0]) < 0.9 else [0.0, 1.0, 0.0]))
    e2 = np.cross(n, e1)
    t = rng.uniform(0, 2 * np.pi, k)
    return c + rad * (np.cos(t)[:, None] * e1 + np.sin(t)[:, None] * e2)


@pytest.mark.parametrize("normal", [(0.3, -0.2, 1.0), (1.0, 0.0, 0.0), (0.0, -1.0, 0.2)])
def test_seen_through_a_mouth_is_inside_its_circle_and_behind_it(normal):
    """The pixels the mouth (the wall's end nearer the viewer) covers are marked when what they show
    lies behind it, never when it lies in front or nothing is there; pixels whose line of sight
    misses the circle are never marked. The mouth's radius is its own end's (a drafted wall's far end
    is narrower or wider)."""
    from jail.cad.render_holes import seen_through
    from jail.cad.render_view import unit
    rng = np.random.default_rng(5)
    v = _view()
    c, n, rad = np.array([1.0, 2.0, 3.0]), unit(np.array(normal)), 8.0
    assert abs(float(n @ v.d)) > 0.2  # each case faces the camera enough to cover pixels
    far_end = c - 5 * n * np.sign(float(n @ v.d))  # the wall's other end, away from the viewer
    disks = np.array([[*c, *far_end, *n, rad, 0.7 * rad]])
    far = np.full((v.h, v.w), 1e3, np.float32)  # depth grows away from the viewer
    got = seen_through(disks, far, v, 0, 0)
    # the wall's ends in either order: the one nearer the viewer is its mouth
    assert np.array_equal(got, seen_through(np.array([[*far_end, *c, *n, 0.7 * rad, rad]]), far, v, 0, 0))
    assert np.array_equal(got, seen_through(np.array([[*c, *far_end, *n, rad, 2 * rad]]), far, v, 0, 0))
    for pts, want in ((_disk_points(c, n, 0.8 * rad, 200, rng), True), (_disk_points(c, n, 1.2 * rad, 200, rng), False)):
        px, py, _ = v.project(pts)
        ok = (px >= 0) & (px < v.w) & (py >= 0) & (py < v.h)
        assert ok.all()
        assert (got[py.astype(int), px.astype(int)] == want).all(), want
    assert not seen_through(disks, np.full((v.h, v.w), -1e3, np.float32), v, 0, 0).any()  # in front
    assert not seen_through(disks, np.full((v.h, v.w), np.inf, np.float32), v, 0, 0).any()  # nothing there
    # a window of the image: the same pixels, shifted
    win = seen_through(disks, far[10:70, 20:100], v, 20, 10)
    assert np.array_equal(win, got[10:70, 20:100])


def test_an_edge_on_mouth_marks_nothing():
    from jail.cad.render_holes import seen_through
    v = _view()
    n = np.cross(v.d, v.r)  # in the view direction's plane: seen edge-on
    disks = np.array([[0.0, 0.0, 0.0, *(4 * n), *n, 10.0, 10.0]])
    assert not seen_through(disks, np.full((v.h, v.w), 1e3, np.float32), v, 0, 0).any()


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



@pytest.mark.parametrize("ss", [1, 2, 3])
def test_the_rows_scanned_for_chosen_pixels_are_exactly_those_holding_one(ss):
    """``Samples.rows`` tests a triangle's rows once per output row: the (triangle, sample row)
    pairs it keeps, in order, are those whose sample row has a chosen sample within the triangle's
    columns, counted one by one."""
    from jail.cad.render_raster import Samples
    rng = np.random.default_rng(11 + ss)
    w, h = 23, 17
    smp = Samples(np.sort(rng.choice(w * h, 40, replace=False)), w, h, ss)
    W, H = w * ss, h * ss
    n = 60
    jmin = rng.integers(0, H, n)
    jmax = np.minimum(jmin + rng.integers(0, H // 2, n), H - 1)
    imin = rng.integers(0, W, n)
    imax = np.minimum(imin + rng.integers(0, W // 3, n), W - 1)
    tr = np.arange(5, n)  # a batch need not start at the first triangle
    chosen = np.zeros((H, W), bool)
    chosen.ravel()[smp.pos] = True
    want = [(t, j) for t in tr for j in range(jmin[t], jmax[t] + 1) if chosen[j, imin[t]:imax[t] + 1].any()]
    rt, j = smp.rows(tr, jmin, jmax, imin, imax)
    assert list(zip(rt.tolist(), j.tolist())) == want
    assert len(want) > 20

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


def test_seen_through_a_window_is_inside_its_walls_and_behind_it():
    """A window's mouth (a 16 x 8 rectangle bounded by its four walls' planes, normals pointing in)
    marks the pixels inside it that show something behind it, and none outside it."""
    from jail.cad.render_holes import seen_through
    v = _view()
    d, n = np.asarray(v.d, float), np.array([0.0, 0.0, 1.0])  # a window in a plate square to Z
    assert abs(float(n @ d)) > 0.2
    c = np.array([1.0, 2.0, 3.0])
    far_end = c - 4 * n * np.sign(float(n @ d))
    walls = np.array([[c[0] - 8, 0, 0, 1, 0, 0], [c[0] + 8, 0, 0, -1, 0, 0],
                      [0, c[1] - 4, 0, 0, 1, 0], [0, c[1] + 4, 0, 0, -1, 0]], float)
    window = (c, far_end, n, float(np.hypot(16, 8) / 2), float(np.hypot(16, 8) / 2), walls, None)
    far = np.full((v.h, v.w), 1e3, np.float32)
    got = seen_through(np.zeros((0, 11)), far, v, 0, 0, [window])
    rng = np.random.default_rng(2)
    inner = c + np.c_[rng.uniform(-7, 7, 200), rng.uniform(-3.5, 3.5, 200), np.zeros(200)]
    outer = c + np.c_[rng.choice([-1, 1], 200) * rng.uniform(9, 12, 200), rng.uniform(-3, 3, 200), np.zeros(200)]
    for pts, want in ((inner, True), (outer, False)):
        px, py, _ = v.project(pts)
        assert (got[py.astype(int), px.astype(int)] == want).all(), want
    assert not seen_through(np.zeros((0, 11)), np.full((v.h, v.w), -1e3, np.float32), v, 0, 0, [window]).any()
    # the same rectangle given as an outline (a window with a convex corner is): the same pixels
    corners = np.array([[c[0] - 8, c[1] - 4, c[2]], [c[0] + 8, c[1] - 4, c[2]], [c[0] + 8, c[1] + 4, c[2]],
                        [c[0] - 8, c[1] + 4, c[2]]])
    outlined = (c, far_end, n, window[3], window[3], None, (corners, corners - c + far_end))
    assert np.array_equal(seen_through(np.zeros((0, 11)), far, v, 0, 0, [outlined]), got)

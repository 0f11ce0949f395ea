"""jail/cad/render.py (and its render_* steps) in-process: the pictures are checked pixel by pixel (decoded with Pillow).

No jail here (that is tests/integration/test_render_mcp.py): these tests pin what the renderer
draws - where an object of a known colour lands, that a through hole shows the background, that a
section shows the hole as a gap, that a sheet has four panels - and its refusals.
"""
from __future__ import annotations

import io

import numpy as np
import pytest

PIL = pytest.importorskip("PIL")
from PIL import Image  # noqa: E402

from build123d import Box, BuildPart, Cylinder, GridLocations, Hole, Pos, Sphere, Face, Line  # noqa: E402

from jail.cad import render  # noqa: E402
from jail.cad.render_shade import PALETTE  # noqa: E402

from jail.cad import runner

BG = (250, 250, 250)
BLUE = PALETTE[0]
ORANGE = PALETTE[1]


def ns_with(**objs):
    ns = runner.new_namespace(["build123d"], [], python_layers=False)
    ns.update(objs)
    return ns


def plate():
    with BuildPart() as p:
        Box(80, 60, 10)
        with GridLocations(60, 40, 2, 2):
            Hole(4)
    return p.part


def holed_box():
    with BuildPart() as p:
        Box(40, 40, 20)
        Hole(6)  # through hole of radius 6 along Z at the origin
    return p.part


def decode(png: bytes) -> np.ndarray:
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    im = Image.open(io.BytesIO(png))
    im.load()
    assert im.format == "PNG"
    return np.asarray(im.convert("RGB")).astype(int)


def to_px(meta: dict, x: float, y: float, centre=(0.0, 0.0)) -> tuple[int, int]:
    """Pixel (col, row) of world (x, y) in a top view centred on ``centre``."""
    mm = meta["mm_per_px"]
    return (int(meta["width"] / 2 + (x - centre[0]) / mm), int(meta["height"] / 2 - (y - centre[1]) / mm))


def hue_of(c) -> str:
    r, g, b = c
    if max(r, g, b) - min(r, g, b) < 12:
        return "grey"
    return "blue" if b > r and b > g else "orange" if r > g > b else "other"


def test_png_size_and_format():
    png, meta = render.render(ns_with(p=plate()), width=320, height=200)
    img = decode(png)
    assert img.shape == (200, 320, 3)
    assert meta["width"] == 320 and meta["height"] == 200
    assert meta["triangles"] > 10
    assert meta["bbox"]["size"] == [80.0, 60.0, 10.0]
    assert "iso" in meta["caption"] and "80x60x10" in meta["caption"]


def test_top_view_hole_shows_background_and_plate_its_colour():
    png, meta = render.render(ns_with(p=plate()), view="top", width=800, height=600)
    img = decode(png)
    # a hole centre (x=30, y=20): the background shows through the through hole
    for hx, hy in ((30, 20), (-30, 20), (30, -20), (-30, -20)):
        c, r = to_px(meta, hx, hy)
        assert tuple(img[r, c]) == BG, (hx, hy, img[r, c])
    # solid plate between the holes: the object's colour (top face seen head-on)
    for x, y in ((0, 0), (15, 10), (-35, -25)):
        c, r = to_px(meta, x, y)
        assert hue_of(img[r, c]) == "blue", (x, y, img[r, c])
    # outside the plate: background
    c, r = to_px(meta, 45, 0)
    assert tuple(img[r, c]) == BG
    # the plate covers about 80x60 mm of the image, minus the holes
    cover = (np.abs(img - np.array(BLUE)).sum(2) < 60).sum() * meta["mm_per_px"] ** 2
    assert 0.9 * (80 * 60 - 4 * np.pi * 16) < cover < 1.02 * 80 * 60


def test_dark_edges_outline_the_holes():
    png, meta = render.render(ns_with(p=plate()), view="top", width=800, height=600)
    img = decode(png)
    c, r = to_px(meta, 30, 20)
    row = img[r, c:c + int(6 / meta["mm_per_px"])]  # from the hole centre outwards across the rim (r=4)
    assert row.sum(1).min() < 3 * 120, "no dark edge pixel at the hole's rim"


def test_two_objects_two_colours_and_legend():
    ns = ns_with(base=Box(40, 40, 4), post=Pos(0, 0, 12) * Cylinder(5, 20))
    png, meta = render.render(ns, view="top")
    img = decode(png)
    assert meta["objects"] == ["base", "post"]
    c, r = to_px(meta, 0, 0)
    assert hue_of(img[r, c]) == "orange"  # the post is on top, seen from above
    c, r = to_px(meta, 15, 15)
    assert hue_of(img[r, c]) == "blue"
    # the legend swatches in the top-left corner hold both palette colours exactly
    corner = img[:80, :40].reshape(-1, 3)
    assert (np.abs(corner - np.array(BLUE)).sum(1) == 0).any()
    assert (np.abs(corner - np.array(ORANGE)).sum(1) == 0).any()


def test_only_the_named_objects_are_drawn():
    ns = ns_with(base=Box(40, 40, 4), post=Pos(0, 0, 12) * Cylinder(5, 20))
    png, meta = render.render(ns, objects=["base"], view="top")
    img = decode(png)
    assert meta["objects"] == ["base"]
    c, r = to_px(meta, 0, 0)
    assert hue_of(img[r, c]) == "blue"
    assert not ((np.abs(img - np.array(ORANGE)).sum(2) < 40).any())


def test_iso_shows_three_shades_of_a_box():
    png, meta = render.render(ns_with(b=Box(30, 30, 30)), view="iso", width=400, height=400)
    img = decode(png)
    obj = img[(img.sum(2) < 700) & (img.sum(2) > 200)]
    blues = {tuple(c) for c in obj if hue_of(c) == "blue"}
    # three faces seen, each flat-shaded: at least three clearly different blues
    levels = sorted({int(c[2]) // 12 for c in blues})
    assert len(levels) >= 3, levels


def test_front_and_right_are_different_projections():
    long_x = ns_with(b=Box(60, 10, 10))
    f_png, f_meta = render.render(long_x, view="front", width=400, height=300)
    r_png, _ = render.render(long_x, view="right", width=400, height=300)
    f, r = decode(f_png), decode(r_png)
    # front: a 60x10 mm bar; right: a 10x10 square (each view is fitted to its own scale)
    def aspect(img):
        m = np.abs(img - BG).sum(2) > 30
        m[:24] = False  # title
        m[-22:] = False  # scale bar
        m[-70:, -70:] = False  # axis triad
        return m.any(0).sum() / m.any(1).sum()
    assert 5.0 < aspect(f) < 7.0
    assert 0.8 < aspect(r) < 1.25


def test_azimuth_elevation_match_named_view():
    ns = ns_with(p=plate())
    a, ma = render.render(ns, view="top", width=300, height=200)
    b, mb = render.render(ns, azimuth=0, elevation=90, width=300, height=200)
    assert mb["view"] == "custom" and mb["elevation"] == 90
    ia, ib = decode(a), decode(b)
    assert np.array_equal(ia[40:, :], ib[40:, :])  # the title line differs, the picture does not


def test_sheet_has_four_labelled_panels():
    png, meta = render.render(ns_with(p=holed_box()), view="sheet", width=800, height=600)
    img = decode(png)
    assert meta["panels"] == ["top", "iso", "front", "right"]
    # separators: the middle column and row are grey lines
    assert hue_of(img[100, 400]) == "grey" and img[100, 400].sum() < 3 * 200
    assert hue_of(img[300, 100]) == "grey" and img[300, 100].sum() < 3 * 200
    # each panel shows the object
    for (r0, c0) in ((0, 0), (0, 400), (300, 0), (300, 400)):
        panel = img[r0 + 20:r0 + 280, c0 + 10:c0 + 390]
        assert (np.array([hue_of(c) for c in panel[::7, ::7].reshape(-1, 3)]) == "blue").sum() > 50
    # the top panel (top-left) shows the through hole: background at the panel centre
    mm = meta["mm_per_px"]
    assert tuple(img[150, 200]) == BG
    assert hue_of(img[150, 200 + int(12 / mm)]) == "blue"
    # labels: dark text pixels in each panel's top-left corner
    for (r0, c0) in ((0, 0), (0, 400), (300, 0), (300, 400)):
        assert img[r0 + 4:r0 + 22, c0 + 6:c0 + 40].sum(2).min() < 200


def test_section_shows_the_hole_as_a_gap():
    # plane y = 0 through the hole's axis, seen from the front (X right, Z up)
    png, meta = render.render(ns_with(b=holed_box()), view="section", section={"axis": "y", "offset": 0},
                              width=800, height=600)
    img = decode(png)
    assert meta["plane"] == "y = 0" and meta["cut"] == ["b"]
    mm = meta["mm_per_px"]
    # the plot area starts at x=58, y=26 (margins) and is centred on the section
    pw, ph = 800 - 58 - 16, 600 - 40 - 26
    cx, cy = 58 + pw // 2, 26 + ph // 2

    def filled(xmm, zmm):
        c = img[int(cy - zmm / mm) - 3:int(cy - zmm / mm) + 4, int(cx + xmm / mm) - 3:int(cx + xmm / mm) + 4]
        return (np.array([hue_of(p) for p in c.reshape(-1, 3)]) == "blue").mean() > 0.5

    assert not filled(0, 0), "the hole (|x| < 6) must be a gap in the section"
    assert not filled(4, 5)
    assert filled(12, 0) and filled(-12, 0) and filled(18, 8)
    assert not filled(25, 0)  # outside the box
    assert not filled(12, 12)  # above the box (z > 10)
    # hatched: the fill has two tones
    c = img[int(cy) - 10:int(cy) + 10, int(cx + 12 / mm) - 10:int(cx + 12 / mm) + 10].reshape(-1, 3)
    tones = {tuple(p) for p in c if hue_of(p) == "blue"}
    assert len(tones) >= 2


def test_section_point_normal_and_miss():
    ns = ns_with(b=holed_box())
    png, meta = render.render(ns, view="section", section={"point": [0, 0, 0], "normal": [1, 1, 0]},
                              width=400, height=300)
    assert decode(png).shape == (300, 400, 3)
    assert meta["plane"].startswith("point (0, 0, 0)")
    with pytest.raises(render.RenderError, match="does not cut"):
        render.render(ns, view="section", section={"axis": "z", "offset": 50})
    with pytest.raises(render.RenderError, match="needs a section plane"):
        render.render(ns, view="section")


def test_clipped_view_caps_the_cut_with_a_hatch():
    ns = ns_with(b=Box(40, 40, 40))
    full, _ = render.render(ns, view="front", width=400, height=400)
    cut, meta = render.render(ns, view="front", section={"axis": "y", "offset": 0}, width=400, height=400)
    f, c = decode(full), decode(cut)
    assert meta["section"] == "y = 0"
    # front view of a box: its front face shaded blue; cut at y=0 the cap (hatched, lighter) shows
    centre_full = f[180:220, 180:220].reshape(-1, 3)
    centre_cut = c[180:220, 180:220].reshape(-1, 3)
    assert len({tuple(p) for p in centre_full}) <= 3  # one flat face
    assert len({tuple(p) for p in centre_cut}) >= 2  # fill + hatch stripes
    assert centre_cut.mean() > centre_full.mean() + 30  # the cap fill is lighter than the shaded face


def test_refusals():
    ns = ns_with(p=plate(), n=3)
    for w, h in ((63, 200), (200, 1601), (True, 200), (200.0, 200)):
        with pytest.raises(render.RenderError, match="must be an integer from 64 to 1600"):
            render.render(ns, width=w, height=h)
    with pytest.raises(render.RenderError, match="view must be one of"):
        render.render(ns, view="perspective")
    with pytest.raises(render.RenderError, match="not a shape"):
        render.render(ns, objects=["n"])
    with pytest.raises(render.RenderError, match="no object named 'zz'"):
        render.render(ns, objects=["zz"])
    with pytest.raises(render.RenderError, match="elevation"):
        render.render(ns, view="iso", elevation=91)
    with pytest.raises(render.RenderError, match="finite"):
        render.render(ns, view="section", section={"axis": "x", "offset": float("nan")})
    with pytest.raises(render.RenderError, match="non-zero"):
        render.render(ns, view="section", section={"point": [0, 0, 0], "normal": [0, 0, 0]})
    with pytest.raises(render.RenderError, match="triangles"):
        render.render(ns, max_triangles=10)


def test_empty_session():
    with pytest.raises(render.RenderError, match="no shapes yet"):
        render.render(ns_with())


def test_wires_are_drawn_as_lines_in_their_colour():
    png, meta = render.render(ns_with(base=Box(40, 40, 4), l=Pos(0, 0, 10) * Line((-15, 0), (15, 0))),
                              view="top")
    img = decode(png)
    c0, r = to_px(meta, -10, 0)
    c1, _ = to_px(meta, 10, 0)
    band = img[r - 2:r + 3, c0:c1].reshape(-1, 3)
    assert (np.array([hue_of(p) for p in band]) == "orange").mean() > 0.3  # the line, over the blue box
    c, r2 = to_px(meta, 0, 10)
    assert hue_of(img[r2, c]) == "blue"


def test_a_face_and_a_sphere_render():
    ns = ns_with(f=Face.make_rect(20, 10), s=Pos(0, 0, 20) * Sphere(5))
    png, meta = render.render(ns, view="front", width=300, height=300)
    img = decode(png)
    assert (np.array([hue_of(c) for c in img[::5, ::5].reshape(-1, 3)]) == "orange").sum() > 10


def test_hostile_wrapped_property_is_not_a_shape():
    class Evil(Box):
        @property
        def wrapped(self):
            raise RuntimeError("boom")

        @wrapped.setter
        def wrapped(self, v):
            pass

    ns = ns_with(p=plate())
    ns["e"] = Evil(1, 1, 1)
    png, meta = render.render(ns)  # the evil object is skipped in "all"
    assert meta["objects"] == ["p"]
    with pytest.raises(render.RenderError, match="not a shape"):
        render.render(ns, objects=["e"])


def test_large_image_drawn_one_to_one_still_right():
    assert 1200 * 1000 > render.SS_MAX_PIXELS
    png, meta = render.render(ns_with(p=plate()), view="top", width=1200, height=1000)
    img = decode(png)
    assert img.shape == (1000, 1200, 3)
    c, r = to_px(meta, 30, 20)
    assert tuple(img[r, c]) == BG
    c, r = to_px(meta, 0, 0)
    assert hue_of(img[r, c]) == "blue"
    c, r = to_px(meta, 30, 20)
    row = img[r, c:c + int(6 / meta["mm_per_px"])]
    assert row.sum(1).min() < 3 * 120  # the rim's dark edge


def test_clipped_view_that_cuts_everything_away_says_so():
    with pytest.raises(render.RenderError, match="leaves nothing to see"):
        render.render(ns_with(b=Box(10, 10, 10)), view="front", section={"axis": "y", "offset": 50})


# ---------------------------------------------------------------- issue 22: parts told apart


def nearest_palette(c) -> int:
    """The palette colour whose direction (chroma) is nearest to pixel ``c``'s (shading scales it)."""
    c = np.asarray(c, float)
    c = c / (np.linalg.norm(c) or 1)
    return int(np.argmax([c @ (np.array(p) / np.linalg.norm(p)) for p in PALETTE]))


def three_boxes():
    return [Pos(-30, 0, 0) * Box(20, 20, 5), Pos(0, 0, 0) * Box(20, 20, 5), Pos(30, 0, 0) * Box(20, 20, 5)]


def three_colours_at_the_centres(png, meta) -> list[int]:
    img = decode(png)
    out = []
    for x in (-30, 0, 30):
        c, r = to_px(meta, x, 0)
        out.append(nearest_palette(img[r, c]))
    return out


@pytest.mark.parametrize("how", ["children", "shapes"])
def test_a_compound_of_three_children_shows_three_colours_and_legend(how):
    from build123d import Compound
    kids = three_boxes()
    assy = Compound(children=kids) if how == "children" else Compound(kids)
    for objects in (None, ["assy"]):
        png, meta = render.render(ns_with(assy=assy), objects=objects, view="top", width=600, height=300)
        assert meta["objects"] == ["assy[0]", "assy[1]", "assy[2]"]
        assert three_colours_at_the_centres(png, meta) == [0, 1, 2]
        corner = decode(png)[:80, :40].reshape(-1, 3)  # the legend's swatches
        for col in PALETTE[:3]:
            assert (np.abs(corner - np.array(col)).sum(1) == 0).any()


def test_a_sketch_or_part_in_pieces_is_one_colour():
    """A Sketch of two separate faces and a Part a cut left in two solids are each one object (one
    colour, one name); a plain Compound of shapes is split per shape (also what an algebra-mode cut
    returns: its pieces in two colours show that it fell apart)."""
    from build123d import BuildSketch, Circle, Compound, Rectangle
    with BuildSketch() as sk:
        with Locations((-30, 0)):
            Rectangle(20, 20)
        with Locations((30, 0)):
            Circle(10)
    from build123d import Mode, Part
    with BuildPart() as bp:
        Box(80, 20, 5)
        Box(10, 30, 10, mode=Mode.SUBTRACT)
    two = bp.part
    assert isinstance(two, Part) and len(two.solids()) == 2
    for name, value in (("sk", sk.sketch), ("two", two)):
        png, meta = render.render(ns_with(**{name: value}), view="top", width=600, height=300)
        assert meta["objects"] == [name], meta["objects"]
        img = decode(png)
        cols = {nearest_palette(img[r, c]) for c, r in (to_px(meta, -30, 0), to_px(meta, 30, 0))}
        assert cols == {0}, cols
    png, meta = render.render(ns_with(c=Compound([sk.sketch.faces()[0], sk.sketch.faces()[1]])), view="top",
                              width=600, height=300)
    assert meta["objects"] == ["c[0]", "c[1]"]


def test_a_childs_label_names_its_part():
    from build123d import Compound
    kids = three_boxes()
    kids[0].label = "lid"
    kids[1].label = "bad\nlabel\x1b[31m"  # not a plain word: the index instead
    png, meta = render.render(ns_with(assy=Compound(children=kids)), view="top", width=600, height=300)
    assert meta["objects"] == ["lid", "assy[1]", "assy[2]"]


@pytest.mark.parametrize("kind", ["list", "tuple", "dict"])
def test_a_list_or_dict_variable_renders_per_element(kind):
    kids = three_boxes()
    value = {"list": kids, "tuple": tuple(kids), "dict": {"a": kids[0], 7: kids[1], (1, 2): kids[2]}}[kind]
    ns = ns_with(parts=value)
    png, meta = render.render(ns, objects=["parts"], view="top", width=600, height=300)
    want = ["parts[0]", "parts[1]", "parts[2]"] if kind != "dict" else ["parts['a']", "parts[7]", "parts[#2]"]
    assert meta["objects"] == want
    assert three_colours_at_the_centres(png, meta) == [0, 1, 2]
    png, meta = render.render(ns, view="top", width=600, height=300)  # default: lists of shapes too
    assert meta["objects"] == want


def test_lists_that_are_not_shapes_are_refused_or_skipped():
    ns = ns_with(p=plate(), nums=[1, 2], mixed=[Box(1, 1, 1), "x"], empty=[])
    assert render.render(ns, width=200, height=200)[1]["objects"] == ["p"]
    with pytest.raises(render.RenderError, match=r"mixed\[1\] is a str, not a shape"):
        render.render(ns, objects=["mixed"])
    with pytest.raises(render.RenderError, match="empty list"):
        render.render(ns, objects=["empty"])


def test_too_many_parts_is_a_clear_refusal_and_a_big_compound_one_colour():
    from build123d import Compound
    from jail.wire.caps import RENDER_MAX_OBJECTS as CAP
    many = [Pos(i * 3, 0, 0) * Box(1, 1, 1) for i in range(CAP + 1)]
    with pytest.raises(render.RenderError, match=rf"holds {CAP + 1} elements, over the cap of {CAP}"):
        render.render(ns_with(many=many), objects=["many"])
    png, meta = render.render(ns_with(big=Compound(many)), objects=["big"], width=200, height=200)
    assert meta["objects"] == ["big"]


def sketch_cut_block():
    """A block with a hole cut through it from a sketch: the consumed sketch lies over the hole."""
    from build123d import BuildSketch, Circle, Mode, Plane, extrude
    with BuildPart() as bp:
        Box(40, 40, 10)
        with BuildSketch(Plane.XY.offset(5)) as sk:
            Circle(8)
        extrude(amount=-10, mode=Mode.SUBTRACT)
    return bp, sk


def test_a_builder_renders_as_its_part_and_its_consumed_sketch_not_at_all():
    bp, sk = sketch_cut_block()
    for objects in (None, ["bp"]):
        png, meta = render.render(ns_with(bp=bp, sk=sk), objects=objects, view="top", width=400, height=400)
        assert meta["objects"] == ["bp"]
        img = decode(png)
        c, r = to_px(meta, 0, 0)
        assert tuple(img[r, c]) == BG, img[r, c]  # the hole, not a painted sketch over it
    png, meta = render.render(ns_with(bp=bp, sk=sk), objects=["sk"], view="top", width=400, height=400)
    assert meta["objects"] == ["sk"]  # named: drawn


def test_part_names_pass_the_launchers_check():
    from launcher.replies.cad import _part_name
    for ok in ("assy[0]", "assy['lid']", "lid", "lid cover-2.b", "parts[#3]", "d[-1]"):
        assert _part_name(ok) == ok
    for bad in ("a\nb", "lid\n", " lid", "a\x1b[31m", "\u202elid", "assy[0]x", "x['a\nb']", 5, None):
        assert _part_name(bad) == "?"


def bridge():
    """Two plates joined by two walls; a through hole in the top plate, the bottom plate behind it."""
    from build123d import Align
    mn = (Align.CENTER, Align.CENTER, Align.MIN)
    with BuildPart() as p:
        Box(60, 40, 4, align=mn)
        with BuildPart(Pos(0, 0, 24)):
            Box(60, 40, 4, align=mn)
        with Locations((-28, 0, 0), (28, 0, 0)):
            Box(4, 40, 28, align=mn)
        with Locations((0, 0, 28)):
            Hole(6, depth=4)
    return p.part


def lum(c) -> float:
    return float(np.asarray(c, float) @ [0.299, 0.587, 0.114])


def test_a_through_hole_with_the_part_behind_it_reads_as_a_hole():
    png, meta = render.render(ns_with(b=bridge()), view="top", width=600, height=400)
    img = decode(png)
    c, r = to_px(meta, 0, 0)
    plate_px = img[to_px(meta, 15, 10)[1], to_px(meta, 15, 10)[0]]
    centre = img[r, c]
    # the bottom plate seen through the hole faces the viewer like the top plate: without the
    # hole shade the two are the same colour (a painted circle)
    assert tuple(centre) == BG or lum(centre) < 0.6 * lum(plate_px), (centre, plate_px)
    # the top plate around the hole keeps its colour
    c2, r2 = to_px(meta, 10, 0)
    assert abs(lum(img[r2, c2]) - lum(plate_px)) < 8


def tray():
    """An open box (walls 2 mm) with a boss in one inner corner and a blind screw hole in the boss."""
    from build123d import Align
    mn = (Align.CENTER, Align.CENTER, Align.MIN)
    part = Box(80, 60, 30, align=mn) - Pos(0, 0, 2) * Box(76, 56, 30, align=mn)
    part += Pos(-32, 22, 2) * Cylinder(4, 20, align=mn)
    return part - Pos(-32, 22, 10) * Cylinder(1.25, 12, align=mn)


def test_a_pocket_is_not_shaded_as_a_hole_but_a_blind_hole_is():
    """Looking into an open box: the floor between the boss and the corner walls is ringed by nearer
    edges as a hole is, yet it keeps the floor's colour (it was darkened: a dark square in each
    such corner; in the iso view, dark panels on the inner walls); the screw hole in the boss
    reads as a hole."""
    png, meta = render.render(ns_with(t=tray()), view="top", width=800, height=600)
    img = decode(png)
    floor = img[to_px(meta, 10, -5)[1], to_px(meta, 10, -5)[0]]
    corner = img[to_px(meta, -35.6, 25.6)[1], to_px(meta, -35.6, 25.6)[0]]
    assert abs(lum(corner) - lum(floor)) < 4, (corner, floor)
    boss_top = img[to_px(meta, -29.5, 22)[1], to_px(meta, -29.5, 22)[0]]
    screw = img[to_px(meta, -32, 22)[1], to_px(meta, -32, 22)[0]]
    assert lum(screw) < 0.6 * lum(boss_top), (screw, boss_top)


def test_drafted_holes_read_as_holes_and_drafted_bosses_do_not():
    """A moulded part's drafted holes are cones: their mouths were not shaded, so a blind core hole
    and a through hole read as shallow bumps. A concave cone at most 15 degrees off its axis is now a
    hole's wall, each mouth with its own radius; a drafted boss (a convex cone) is not a hole."""
    from tests.unit.test_features import screw_bosses
    png, meta = render.render(ns_with(b=screw_bosses()), view="top", width=800, height=600)
    img = decode(png)
    boss_top = img[to_px(meta, -17.4, 0)[1], to_px(meta, -17.4, 0)[0]]
    plate_px = img[to_px(meta, 10, -10)[1], to_px(meta, 10, -10)[0]]
    assert abs(lum(boss_top) - lum(plate_px)) < 8, (boss_top, plate_px)  # the boss' top: not darkened
    for x, y in ((-20, 0), (20, 0), (-20.9, 0)):  # the core holes (r=1.5 at the top)
        px = img[to_px(meta, x, y)[1], to_px(meta, x, y)[0]]
        assert lum(px) < 0.6 * lum(boss_top), ((x, y), px, boss_top)
    for x, y in ((0, 10), (4.5, 10)):  # the through hole (r=5 at the top, 4.84 at the bottom)
        px = img[to_px(meta, x, y)[1], to_px(meta, x, y)[0]]
        assert tuple(px) == BG or lum(px) < 0.6 * lum(plate_px), ((x, y), px)
    c, r = to_px(meta, 5.6, 10)  # just beside it
    assert abs(lum(img[r, c]) - lum(plate_px)) < 8


def test_a_hole_wall_in_two_halves_still_reads_as_a_hole():
    """OCCT may hold a round wall as two half faces (a STEP from another CAD program): together
    they go round, so the bottom plate seen through the bridge's hole is still darkened."""
    from OCP.ShapeUpgrade import ShapeUpgrade_ShapeDivideClosed
    from build123d import Solid
    div = ShapeUpgrade_ShapeDivideClosed(bridge().wrapped)
    div.SetNbSplitPoints(1)
    div.Perform()
    split = Solid(div.Result())
    assert len(split.faces()) > len(bridge().faces())
    png, meta = render.render(ns_with(b=split), view="top", width=600, height=400)
    img = decode(png)
    plate_px = img[to_px(meta, 15, 10)[1], to_px(meta, 15, 10)[0]]
    c, r = to_px(meta, 0, 0)
    assert lum(img[r, c]) < 0.6 * lum(plate_px), (img[r, c], plate_px)


def test_a_hole_wall_written_as_b_splines_still_reads_as_a_hole():
    """A STEP file written all in NURBS (every face a B-spline: OCCT's conversion here) holds the
    bridge's hole wall as a rational B-spline: the bottom plate seen through it is still darkened,
    and the top plate beside it is not."""
    from OCP.BRepBuilderAPI import BRepBuilderAPI_NurbsConvert
    from build123d import Compound, GeomType
    nurbs = Compound(BRepBuilderAPI_NurbsConvert(bridge().wrapped, True).Shape())
    assert {f.geom_type for f in nurbs.faces()} == {GeomType.BSPLINE}
    png, meta = render.render(ns_with(b=nurbs), view="top", width=600, height=400)
    img = decode(png)
    plate_px = img[to_px(meta, 15, 10)[1], to_px(meta, 15, 10)[0]]
    c, r = to_px(meta, 0, 0)
    assert lum(img[r, c]) < 0.6 * lum(plate_px), (img[r, c], plate_px)
    c2, r2 = to_px(meta, 10, 0)
    assert abs(lum(img[r2, c2]) - lum(plate_px)) < 8


def test_the_corner_between_parts_is_not_shaded_as_a_hole():
    """A box with a cylinder and a sphere in front of its side (each nearer on two sides of the
    corner between them): the box's face there keeps its shade; the plate's holes still read as holes."""
    from build123d import Compound
    asm = Compound(children=[Box(20, 20, 20), Pos(25, 0, 0) * Cylinder(8, 20), Pos(0, 25, 0) * Sphere(9)])
    png, meta = render.render(ns_with(asm=asm), view="iso", width=800, height=600)
    img = decode(png).astype(int)
    side = img[350, 300]  # the box's right face, away from the other parts
    corner = img[278:300, 333:372].reshape(-1, 3)  # between the cylinder's top and the sphere
    box_px = corner[np.abs(corner - side).sum(1) < 60]
    assert len(box_px) > 0.5 * len(corner), (side, corner[:5])
    assert (np.abs(corner - side).sum(1) < 12).mean() > 0.5


from build123d import Locations  # noqa: E402


def test_the_axis_triad_is_sized_to_the_image_and_labelled():
    from jail.cad.render_annotate import triad_size
    for w, h in ((400, 300), (1200, 900)):
        png, meta = render.render(ns_with(p=plate()), view="iso", width=w, height=h)
        img = decode(png)
        ts = triad_size(w, h)
        assert ts >= min(w, h) * 0.06
        box = img[h - 2 * ts - 40:, w - 2 * ts - 40:].reshape(-1, 3)
        for col in ((210, 50, 50), (40, 160, 60), (50, 90, 220)):  # X, Y, Z arms and labels
            n = (np.abs(box - np.array(col)).sum(1) < 40).sum()
            assert n >= ts, (w, col, n)


def test_the_section_grid_is_scaled_to_the_part():
    from build123d import Box as B
    for size, step in ((60, 5), (6, 0.5)):
        png, meta = render.render(ns_with(b=B(size, size / 2, size / 4)), view="section",
                                  section={"axis": "z", "offset": 0}, width=600, height=400)
        img = decode(png)
        from jail.cad.render_shade import GRID
        row = img[60 if size == 6 else 60]
        lines = np.nonzero((np.abs(row - GRID).sum(1) < 6))[0]
        gaps = np.diff(lines)
        gaps = gaps[gaps > 2]
        px_step = step / meta["mm_per_px"]
        assert abs(np.median(gaps) - px_step) <= 2, (size, np.median(gaps), px_step)


def test_shading_shortcuts_match_their_plain_definitions():
    """The packed-pixel average gives what the plain formula does."""
    from jail.cad.render_shade import _down_u8
    rng = np.random.default_rng(7)
    c = rng.integers(0, 256, (6, 10, 4), dtype=np.uint8)
    c[0, 0, :3] = 255  # the largest sums: no carry into the next channel
    c[1, 0, :3] = c[0, 1, :3] = c[1, 1, :3] = 255
    plain = (c[0::2, 0::2, :3].astype(int) + c[1::2, 0::2, :3] + c[0::2, 1::2, :3] + c[1::2, 1::2, :3] + 2) >> 2
    assert np.array_equal(_down_u8(c, 2), plain) and np.array_equal(_down_u8(c, 1), c[..., :3])


def test_an_stl_mesh_is_framed_by_its_triangles_and_shaded_flat(tmp_path):
    """import_stl gives one Face of triangles with no surface: its exact box is void, so the view is
    framed by its triangles (it was refused as empty, and beside a box it was framed by the box
    alone); its triangles are shaded flat (vertex normals averaged over the fan of a flat face's
    big triangles streaked it). Top view of a 40x40x20 box with a hole: the frame matches the box's
    as a B-rep, and the top face is one flat shade."""
    from build123d import export_stl, import_stl
    export_stl(holed_box(), str(tmp_path / "b.stl"))
    mesh = import_stl(str(tmp_path / "b.stl"))
    png_b, meta_b = render.render(ns_with(b=holed_box()), ["b"], "top", width=400, height=300)
    png, meta = render.render(ns_with(m=mesh), ["m"], "top", width=400, height=300)
    assert meta["mm_per_px"] == pytest.approx(meta_b["mm_per_px"], rel=0.02), (meta, meta_b)
    img = decode(png)
    top = []  # the top face, away from the hole (r = 6) and the outline
    for x, y in ((-15, -15), (15, -15), (-15, 15), (15, 15), (0, 14), (14, 0), (-12, 5), (5, -12)):
        c, r = to_px(meta, x, y)
        top.append(img[r, c])
    top = np.array(top)
    assert hue_of(tuple(top[0])) == "blue", top[0]
    assert int(np.ptp(top, axis=0).max()) <= 4, top  # one shade, no streaks
    c, r = to_px(meta, 0, 0)
    assert tuple(img[r, c]) != tuple(top[0])  # the hole is not painted over


def enclosure():
    """An open box (100x60x40, walls 2) with a 30x15 window and a d=12 hole in its front wall (y=-30),
    and a 20x10 blind pocket, 1 deep, in the outside of its floor."""
    from build123d import Axis, Mode, offset
    with BuildPart() as b:
        Box(100, 60, 40)
        offset(amount=-2, openings=b.faces().sort_by(Axis.Z)[-1])
        with Locations((0, -30, 0)):
            Box(30, 10, 15, mode=Mode.SUBTRACT)
        with Locations((-30, -30, 0)):
            Cylinder(6, 10, rotation=(90, 0, 0), mode=Mode.SUBTRACT)
        with Locations((20, 0, -20)):
            Box(20, 10, 2, mode=Mode.SUBTRACT)
    return b.part


def test_a_window_with_a_convex_corner_is_shaded_inside_its_outline():
    """A window with a convex corner (the enclosure's front window with a tab up its right side) is
    inside its outline's corners, not "inside every wall" (true of a convex outline only: that test
    shaded just the part both arms share): both arms are shaded, the wall in the notch between them
    is not."""
    part = enclosure() - Pos(10, -30, 10) * Box(10, 10, 10)
    png, meta = render.render(ns_with(e=part), view="front", width=800, height=600)
    img = decode(png)
    wall = img[to_px(meta, 30, 10)[1], to_px(meta, 30, 10)[0]]
    for x, y in ((0, 0), (-12, -5), (10, 12), (13, 3)):  # the rectangle, and the tab above its right end
        c, r = to_px(meta, x, y)
        assert lum(img[r, c]) < 0.6 * lum(wall), ((x, y), img[r, c], wall)
    for x, y in ((-5, 12), (0, 12), (17, 12)):  # the notch beside the tab, and beside the window
        c, r = to_px(meta, x, y)
        assert abs(lum(img[r, c]) - lum(wall)) < 4, ((x, y), img[r, c], wall)


def test_a_drafted_window_with_rounded_corners_reads_as_a_window():
    """A moulded vent: a rounded 16 x 10 window tapered 5 degrees through the bridge's top plate. Its
    corners are cones, which the render's quick face reading once left without the extent that says
    their angle: no window was found, and the bottom plate behind it read as a painted patch."""
    from build123d import Plane, RectangleRounded, extrude
    vent = extrude(Plane.XY.offset(28) * RectangleRounded(16, 10, 3), amount=-4, taper=5)
    part = bridge() + Pos(0, 0, 26) * Cylinder(6, 4) - vent  # the bridge with its hole filled, then cut
    png, meta = render.render(ns_with(b=part), view="top", width=600, height=400)
    img = decode(png)
    plate_px = img[to_px(meta, 15, 10)[1], to_px(meta, 15, 10)[0]]
    for x, y in ((0, 0), (4, 2), (-4, -2)):
        c, r = to_px(meta, x, y)
        assert tuple(img[r, c]) == BG or lum(img[r, c]) < 0.6 * lum(plate_px), ((x, y), img[r, c], plate_px)
    c, r = to_px(meta, 11, 0)  # beside it
    assert abs(lum(img[r, c]) - lum(plate_px)) < 8


def test_a_window_with_the_part_behind_it_reads_as_a_window():
    """Seen from the front, the box's back wall through the rectangular window faced the viewer
    like the front wall: the window read as a painted rectangle (the round hole beside it was
    darkened). A window's mouth is now shaded like a hole's; the front wall keeps its colour, and a
    blind pocket (the floor's, seen from below) is not darkened."""
    png, meta = render.render(ns_with(e=enclosure()), view="front", width=800, height=600)
    img = decode(png)
    wall = img[to_px(meta, 30, 10)[1], to_px(meta, 30, 10)[0]]
    for x, y in ((0, 0), (12, 5), (-12, -5)):  # in the window
        c, r = to_px(meta, x, y)
        assert lum(img[r, c]) < 0.6 * lum(wall), ((x, y), img[r, c], wall)
    c, r = to_px(meta, 17, 0)  # just beside it
    assert abs(lum(img[r, c]) - lum(wall)) < 4
    png, meta = render.render(ns_with(e=enclosure()), view="bottom", width=800, height=600)
    img = decode(png)
    floor = img[to_px(meta, -20, 0)[1], to_px(meta, -20, 0)[0]]
    pocket = img[to_px(meta, 20, 0)[1], to_px(meta, 20, 0)[0]]
    assert abs(lum(pocket) - lum(floor)) < 4, (pocket, floor)

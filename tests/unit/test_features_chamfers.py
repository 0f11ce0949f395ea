"""Planar chamfers where a chamfer is wider than one of the faces it joins (jail/cad/features_find.py
``chamfers``), in process, the reply rebuilt by launcher/replies/features.py.

A 3 mm plate with its top and bottom edges chamfered 1 mm (a 3D print's first layer and top) read
``chamfers: 4 x 0.707107``: the 1 mm band of side left between the two chamfers, taken for a chamfer
of the edge they would have made, while the real chamfers, wider than that band, were not read.
"""
from __future__ import annotations

import json

import pytest
from build123d import (
    Align,
    Axis,
    Box,
    BuildPart,
    BuildSketch,
    Locations,
    Plane,
    Polygon,
    Rectangle,
    Rot,
    chamfer,
    export_step,
    extrude,
    import_step,
)

from jail.cad import features
from launcher.replies import features as R
from launcher.tools import table


def run(part) -> dict:
    return json.loads(json.dumps(features.features({"p": part}, "p"), allow_nan=False))


def text(part) -> str:
    return table.render_text("features", {"ok": True, "features": R.features_reply(run(part), "p")})


def sizes(part) -> list[tuple]:
    return [(c["size"], c["size2"], c["count"]) for c in run(part)["chamfers"]]


def plate(thickness: float, size: float, both: bool = True):
    b = Box(50, 30, thickness)
    edges = b.edges().group_by(Axis.Z)[-1] + (b.edges().group_by(Axis.Z)[0] if both else [])
    return chamfer(edges, size)


@pytest.mark.parametrize("thickness, size", [(3, 1), (3, 1.2), (2.5, 1), (4, 1.5)])
def test_a_plate_chamfered_top_and_bottom_reads_eight_chamfers(thickness, size, tmp_path):
    part = plate(thickness, size)
    assert sizes(part) == [(size, None, 8)], run(part)["chamfers"]
    assert f"chamfers: 8 x {size:g}" in text(part)
    turned = Rot(20, 30, 40) * part
    assert sizes(turned) == [(size, None, 8)]
    export_step(part, str(tmp_path / "p.step"))
    assert sizes(import_step(str(tmp_path / "p.step"))) == [(size, None, 8)]


def test_a_plate_chamfered_on_one_side_reads_its_chamfers_however_wide():
    assert sizes(plate(3, 1, both=False)) == [(1, None, 4)]
    assert sizes(plate(3, 2, both=False)) == [(2, None, 4)]  # wider than the 1 mm of side left under it


@pytest.mark.parametrize("thickness", [3, 2.5, 10])
def test_a_box_chamfered_on_every_edge_reads_twelve(thickness):
    """On a thin box each upright edge's chamfer lies between two sides' bands (each a face between
    two chamfers): it stays a chamfer while the bands go."""
    part = chamfer(Box(50, 30, thickness).edges(), 1)
    assert sizes(part) == [(1, None, 12)], run(part)["chamfers"]


def test_a_t_nut_s_chamfers_are_read_and_its_end_faces_are_not():
    """bd_warehouse's T-nut: a 5.9 x 4 block over a 10 x 3.2 one, the lower one's bottom corners
    chamfered 1.6 mm (wider than the 1.6 mm of end face left over them). It read ``chamfers: 2 x
    2.26274 x 1.6``: its end faces, square to the shoulder over them."""
    with BuildPart() as nut:
        with BuildSketch(Plane.XZ) as profile:
            Rectangle(5.9, 4, align=(Align.CENTER, Align.MAX))
            with Locations((0, -0.8)):
                Rectangle(10, 3.2, align=(Align.CENTER, Align.MAX))
            chamfer(profile.vertices().group_by(Axis.Y)[0], 1.6)
        extrude(amount=5.9 / 2, both=True)
    assert sizes(nut.part) == [(1.6, None, 2)], run(nut.part)["chamfers"]


@pytest.mark.parametrize("points", [
    [(-20, -5), (20, -5), (24, 0), (20, 5), (-20, 5), (-24, 0)],  # an elongated hexagon
    [(-10, -8.66), (10, -8.66), (20, 0), (10, 8.66), (-10, 8.66), (-20, 0)],  # a regular one
])
def test_the_short_sides_of_a_hexagonal_prism_are_no_chamfers(points):
    """Each short side lies between a long side and another short one: two such faces meeting along
    their long edge are no chamfers of each other."""
    part = extrude(Polygon(*points, align=None), 10)
    assert run(part)["chamfers"] == []


@pytest.mark.parametrize("sides", [6, 8])
def test_a_polygonal_prism_with_text_cut_into_one_side_has_no_chamfer(sides):
    """bd_warehouse's eccentric spacer: a hexagon with "6mm" cut 0.1 mm into one side read
    ``chamfers: 1 x 5.7735``. The letters made that side smaller than the sides beside it; as wide as
    they are, it is no chamfer of the corner they would make."""
    from build123d import BuildSketch, FontStyle, Mode, RegularPolygon, Text

    with BuildPart() as prism:
        with BuildSketch():
            RegularPolygon(10, sides)
        extrude(amount=12)
        side = max(prism.faces().filter_by(Axis.Z, reverse=True), key=lambda f: f.normal_at().X)
        with BuildSketch(side):
            Text("6mm", font_size=3, font_style=FontStyle.BOLD)
        extrude(amount=-0.2, mode=Mode.SUBTRACT)
    assert run(prism.part)["chamfers"] == []

"""A pocket whose walls ribs join (jail/cad/features_pockets.py ``_sides``), in process, the reply
rebuilt by launcher/replies/features.py.

A shelled box with ribs on its floor (an enclosure's stiffeners) read as nothing: each long wall
met the two end walls and the ribs' sides along edges along the pocket's axis, and a wall with more
than two such neighbours ended the walk round the pocket. The ribs, lower than the walls, meet them
along shorter edges: the two longest are the pocket's corners.
"""
from __future__ import annotations

import json

import pytest
from build123d import Align, Axis, Box, BuildPart, Locations, Rot, export_step, fillet, import_step, offset

from jail.cad import features
from launcher.replies import features as R
from launcher.tools import table


def run(part) -> dict:
    return json.loads(json.dumps(features.features({"p": part}, "p"), allow_nan=False))


def text(part) -> str:
    return table.render_text("features", {"ok": True, "features": R.features_reply(run(part), "p")})


def ribbed_box(ribs, high: float = 6, corner: float | None = None):
    """A 60 x 40 x 20 box shelled 2 mm from its top, ``ribs`` ``(x, y, length x, length y)`` standing
    ``high`` on its floor; its upright edges rounded ``corner`` first."""
    with BuildPart() as p:
        Box(60, 40, 20)
        if corner:
            fillet(p.edges().filter_by(Axis.Z), corner)
        offset(amount=-2, openings=p.faces().sort_by(Axis.Z)[-1])
        for x, y, lx, ly in ribs:
            with Locations((x, y, -8)):
                Box(lx, ly, high, align=(Align.CENTER, Align.CENTER, Align.MIN))
    return p.part


def pockets(part) -> list[tuple]:
    return [(pk["shape"], pk["length"], pk["width"], pk["depth"], pk["corner_radius"]) for pk in run(part)["pockets"]]


WALL_TO_WALL = [(x, 0, 1.5, 36) for x in (-20, 0, 20)]


@pytest.mark.parametrize("ribs, corner", [
    (WALL_TO_WALL, None),
    ([(x, -10, 1.5, 16) for x in (-20, 0, 20)], None),  # from one wall
    ([(-14, 0, 1.5, 36), (14, 0, 1.5, 36), (0, 0, 56, 1.5)], None),  # crossing, all as high
    (WALL_TO_WALL, 5),  # inside corners r=3
])
def test_a_ribbed_box_reads_its_cavity(ribs, corner, tmp_path):
    part = ribbed_box(ribs, corner=corner)
    want = [("rectangle", 56, 36, 18, 3 if corner else None)]
    assert pockets(part) == want, run(part)["pockets"]
    assert [(f["radius"], f["convex"]) for f in run(part)["fillets"]] == ([(5, True)] if corner else [])
    assert pockets(Rot(20, 30, 40) * part) == want
    export_step(part, str(tmp_path / "box.step"))
    assert pockets(import_step(str(tmp_path / "box.step"))) == want
    assert text(part).startswith("p:\n") and "pockets: 1 x rectangle 56 x 36 along +X" in text(part)


def test_a_divider_as_high_as_the_walls_makes_two_pockets():
    """A rib up to the rim divides the box: two compartments, as before."""
    part = ribbed_box([(0, 0, 1.5, 36)], high=18)
    assert pockets(part) == [("rectangle", 36, 27.25, 18, None)] * 2

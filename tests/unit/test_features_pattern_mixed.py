"""One kind of hole in a circle and a lattice at once (jail/cad/features_patterns.py
``_group_patterns``): the holes off the circle are read as a grid or a row; in process, the reply
rebuilt by launcher/replies/features.py.

A group of like holes was a lattice only as a whole: a plate with a bolt circle and a row of the
same holes read the circle and left the row as loose holes; a motor mount (a NEMA 17's 31 mm square
and the plate's corner holes, one drill) read only the square, as a circle.
"""
from __future__ import annotations

import json

import pytest
from build123d import Box, BuildPart, GridLocations, Hole, Locations, PolarLocations, Rot

from jail.cad import features
from launcher.replies import features as R
from launcher.tools import table


def run(part) -> dict:
    return json.loads(json.dumps(features.features({"p": part}, "p"), allow_nan=False))


def text_of(d: dict) -> str:
    return table.render_text("features", {"ok": True, "features": R.features_reply(d, "p")})


def kinds(d: dict) -> list[tuple]:
    return sorted((p["type"], p["count"]) for p in d["patterns"])


def circle_and(extra: list[tuple[float, float]], n: int = 5):
    """A 200 x 80 plate: ``n`` holes d=6 on a circle r=25 round (-50, 0), and d=6 holes at ``extra``."""
    with BuildPart() as p:
        Box(200, 80, 6)
        with Locations((-50, 0, 3)):
            with PolarLocations(25, n):
                Hole(3)
        with Locations(*[(x, y, 3) for x, y in extra]):
            Hole(3)
    return p.part


@pytest.mark.parametrize("turned", [False, True])
def test_a_row_beside_a_bolt_circle_of_the_same_holes(turned):
    part = circle_and([(40, 20), (60, 20), (80, 20)])
    d = run(Rot(20, 35, 10) * part if turned else part)
    assert kinds(d) == [("bolt_circle", 5), ("linear", 3)]
    row = next(p for p in d["patterns"] if p["type"] == "linear")
    assert row["pitch"] == pytest.approx(20)
    if not turned:
        text = text_of(d)
        assert "holes: 3 x through d=6 -Z on a linear pitch 20 along (1, 0, 0) at (40, 20, 3), (60, 20, 3), (80, 20, 3)" \
            in text, text
        assert "holes: 5 x through d=6 -Z on a bolt circle r=25 at (-50, 0, 3) at" in text, text


def test_a_grid_beside_a_bolt_circle_of_the_same_holes():
    with BuildPart() as m:
        Box(150, 70, 5)
        with Locations((-30, 0, 2.5)):
            with PolarLocations(20, 6):
                Hole(2)
        with Locations((40, 0, 2.5)):
            with GridLocations(20, 20, 3, 2):
                Hole(2)
    d = run(m.part)
    assert kinds(d) == [("bolt_circle", 6), ("grid", 6)]
    grid = next(p for p in d["patterns"] if p["type"] == "grid")
    assert (grid["counts"], grid["pitch"]) == ([3, 2], [20, 20])


def test_a_motor_mount_reads_its_square_and_its_corners():
    """A NEMA 17's 31 mm square and the plate's corner holes, one size: the corners a 2 x 2 grid
    80 x 50, the square a bolt circle and a 2 x 2 grid 31 x 31 (as a group of four alone reads)."""
    with BuildPart() as m:
        Box(100, 70, 5)
        with Locations((0, 0, 2.5)):
            with GridLocations(31, 31, 2, 2):
                Hole(1.5)
            with GridLocations(80, 50, 2, 2):
                Hole(1.5)
            Hole(11)
    d = run(m.part)
    assert kinds(d) == [("bolt_circle", 4), ("grid", 4), ("grid", 4)]
    assert sorted(tuple(p["pitch"]) for p in d["patterns"] if p["type"] == "grid") == [(31, 31), (80, 50)]
    text = text_of(d)
    assert "holes: 4 x through d=3 -Z on a 2x2 grid pitch 80 x 50 at (-40, -25, 2.5)" in text, text
    assert "holes: 4 x through d=3 -Z on a bolt circle r=21.9203 at (0, 0, 2.5) / a 2x2 grid pitch 31 x 31 at" in text, text


@pytest.mark.parametrize("extra", [
    [(40, 20), (60, 20)],                 # two: no row
    [(40, 20), (60, 20), (90, 20)],       # unequal pitch
    [(40, 20), (60, 25), (80, 20)],       # not in line
    [(40, 20), (60, 20), (80, 20), (40, -20), (60, -20)],  # the rest no lattice (a row among others: not searched)
])
def test_holes_off_the_circle_that_are_no_lattice_stay_loose(extra):
    d = run(circle_and(extra))
    assert kinds(d) == [("bolt_circle", 5)], d["patterns"]

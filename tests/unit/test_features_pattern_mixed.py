"""One kind of hole in a circle and a lattice at once, or in rows that make no lattice together
(jail/cad/features_patterns.py ``_group_patterns``, ``_rows``): the holes off the circle are read
as a grid or a row, loose holes in rows along the part's axes as rows; in process, the reply rebuilt
by launcher/replies/features.py.

A group of like holes was a lattice only as a whole: a plate with a bolt circle and a row of the
same holes read the circle and left the row as loose holes; a motor mount (a NEMA 17's 31 mm square
and the plate's corner holes, one drill) read only the square, as a circle.
"""
from __future__ import annotations

import pytest
from build123d import Box, BuildPart, GridLocations, Hole, Locations, PolarLocations, Rot

from tests.unit.test_features_pattern_levels import run, text_of


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
])
def test_holes_off_the_circle_that_are_no_lattice_stay_loose(extra):
    d = run(circle_and(extra))
    assert kinds(d) == [("bolt_circle", 5)], d["patterns"]


def test_a_row_among_other_holes_off_the_circle():
    """The holes off the circle are no lattice (a row of three and two more): the row is read, the
    two stay loose."""
    d = run(circle_and([(40, 20), (60, 20), (80, 20), (40, -20), (60, -20)]))
    assert kinds(d) == [("bolt_circle", 5), ("linear", 3)], d["patterns"]


@pytest.mark.parametrize("turned", [False, True])
def test_two_rows_of_one_size_at_two_pitches(turned):
    """A bar's mounting holes: four at pitch 20 along its top, three at pitch 40 along its bottom,
    one size: no lattice as a whole (it read nothing); a row each now, along the part's axes."""
    with BuildPart() as p:
        Box(120, 60, 5)
        with Locations(*[(x, 20, 2.5) for x in (-30, -10, 10, 30)], *[(x, -20, 2.5) for x in (-40, 0, 40)]):
            Hole(2)
    d = run(Rot(0, 0, 90) * p.part if turned else p.part)
    assert sorted((q["type"], q["count"], round(q["pitch"], 6)) for q in d["patterns"]) == \
        [("linear", 3, 40), ("linear", 4, 20)]
    if not turned:
        text = text_of(d)
        assert "holes: 4 x through d=4 -Z on a linear pitch 20 along (1, 0, 0) at (-30, 20, 2.5)," in text, text
        assert "holes: 3 x through d=4 -Z on a linear pitch 40 along (1, 0, 0) at (-40, -20, 2.5)," in text, text


def test_rows_need_three_equally_spaced_members_each():
    """Rows of two, or of three unequally spaced, are no pattern."""
    with BuildPart() as p:
        Box(120, 60, 5)
        with Locations((-30, 20, 2.5), (-10, 20, 2.5), (-40, -20, 2.5), (0, -20, 2.5), (50, -20, 2.5),
                       (45, 10, 2.5)):
            Hole(2)
    assert run(p.part)["patterns"] == []


def test_a_circuit_boards_rows_of_pins_and_a_column_beside_them():
    """build123d's circuit_board example: pins d=2 at pitch 5 in rows along the board and in columns
    at its end, corner holes d=4. The pins left whole (the rows at the edges are cut open: slots)
    read as no pattern; now two rows of eleven and, among those left, a column of three."""
    from itertools import product

    from build123d import Circle, Pos, Rectangle, extrude
    pcb = Rectangle(70, 30)
    pcb -= [Pos(i * 5 - 30, y) * Circle(1) for i, y in product(range(13), (-15, -10, 10, 15))]
    pcb -= [Pos(x, i * 5 - 10) * Circle(1) for x, i in product((30, 35), range(5))]
    pcb -= [loc * Circle(2) for loc in GridLocations(60, 20, 2, 2)]
    d = run(extrude(pcb, 3))
    pins = sorted((p["count"], p["pitch"], tuple(p["direction"])) for p in d["patterns"]
                  if p["of"] == "holes" and p["type"] == "linear")
    assert pins == [(3, pytest.approx(5), (0, 1, 0)), (11, pytest.approx(5), (1, 0, 0)),
                    (11, pytest.approx(5), (1, 0, 0))], d["patterns"]
    assert "holes: 3 x through d=2 -Z on a linear pitch 5 along (0, 1, 0) at (30, -5, 3), (30, 0, 3), (30, 5, 3)" \
        in text_of(d)

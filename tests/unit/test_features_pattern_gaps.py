"""Lattices with positions left empty (jail/cad/features_patterns.py ``_gapped``): a grid round a
central boss, a row with a hole left out. In process, the reply rebuilt by launcher/replies/features.py
and its text (launcher/tools/cad.py ``_empty_text``).

Before, a 3x3 grid with its centre left out read as a 2x2 grid of its corners and a bolt circle of
its sides; with a corner left out, as a circle, a diagonal row and a loose hole; a row of six with
one out, as five loose holes. Now each reads as its lattice, with the empty positions listed
(``empty``) and named in the text. A lattice with gaps stands only when its members say it plainly:
at most a quarter of its positions empty, two members or more on each row and column of a grid, a
row of five positions or more, every member entering at one level.
"""
from __future__ import annotations

import pytest
from build123d import Box, BuildPart, Hole, Locations, Pos, Rot, export_step, import_step

from tests.unit.test_features_pattern_levels import run, text_of

GRID3 = [(x, y) for y in (-20, 0, 20) for x in (-20, 0, 20)]


def plate(pts, d: float = 5.0, t: float = 10.0):
    """A 100 x 100 plate ``t`` thick, top at z = t/2, drilled through at ``pts``."""
    with BuildPart() as p:
        Box(100, 100, t)
        with Locations(*[(x, y, t / 2) for x, y in pts]):
            Hole(radius=d / 2)
    return p.part


def but(pts, *gone):
    return [q for q in pts if q not in gone]


def lattices(d: dict) -> list[dict]:
    return [p for p in d["patterns"] if p["type"] in ("grid", "linear")]


def near(a, b, tol: float = 0.05) -> bool:
    return all(abs(x - y) <= tol for x, y in zip(a, b))


CASES = {  # name: (centres, pattern type, counts (grid), members, empty positions (x, y))
    "3x3 round a central boss": (but(GRID3, (0, 0)), "grid", [3, 3], 8, [(0, 0)]),
    "3x3 less a corner": (but(GRID3, (20, 20)), "grid", [3, 3], 8, [(20, 20)]),
    "3x3 less a side": (but(GRID3, (20, 0)), "grid", [3, 3], 8, [(20, 0)]),
    "4x3 less one": (but([(x, y) for y in (-20, 0, 20) for x in (-30, -10, 10, 30)], (10, 0)),
                     "grid", [4, 3], 11, [(10, 0)]),
    "5x4 less two": (but([(x, y) for y in (-30, -10, 10, 30) for x in (-40, -20, 0, 20, 40)], (0, -10), (0, 10)),
                     "grid", [5, 4], 18, [(0, -10), (0, 10)]),
    "row of 6 less one": ([(x, 0) for x in (-40, -25, -10, 5, 35)], "linear", None, 5, [(20, 0)]),
    "row of 8 less two": ([(x, 10) for x in (-35, -25, -15, 5, 15, 35)], "linear", None, 6, [(-5, 10), (25, 10)]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_a_lattice_with_positions_left_empty_reads_as_that_lattice(name):
    pts, kind, counts, n, empty = CASES[name]
    d = run(plate(pts))
    (p,) = lattices(d)
    assert (p["type"], p["count"], len(p["members"])) == (kind, n, n), p
    if counts:
        assert p["counts"] == counts and p["pitch"] == pytest.approx([20, 20], abs=1e-6), p
    assert len(p["empty"]) == len(empty), p
    for (x, y), q in zip(sorted(empty), sorted(p["empty"])):
        assert near(q, (x, y, 5)), (q, x, y)
    assert not [q for q in d["patterns"] if q["type"] in ("bolt_circle", "arc")], d["patterns"]
    text = text_of(d)
    shown = ", ".join(f"({x:.4g}, {y:.4g}, 5)" for x, y in empty)
    assert f"holes: {n} x through d=5 -Z on a " in text and f"({len(empty)} empty: " in text, text
    if len(empty) == 1:
        assert f"(1 empty: {shown}) at " in text, text


def test_a_full_lattice_lists_no_empty_position():
    d = run(plate(GRID3))
    (p,) = lattices(d)
    assert (p["type"], p["count"], p["empty"]) == ("grid", 9, []), p
    assert "empty" not in text_of(d)


@pytest.mark.parametrize("pts", [
    but(GRID3, (0, 0), (20, 20), (-20, 20)),  # three of nine empty: more than a quarter
    but(GRID3, (0, 20), (20, 20)),            # a row left with one member
    [(0, 0), (10, 0), (30, 0)],               # three holes with a gap: no row
    [(0, 0), (10, 0), (20, 0), (50, 0)],      # two of six positions empty: more than a quarter
    [(x, y) for x, y in GRID3 if (x + y) % 40 == 0],  # a checkerboard's five of nine
], ids=["three-of-nine", "lone-in-a-row", "three-with-a-gap", "two-of-six", "checkerboard"])
def test_sparse_or_short_lattices_are_not_read_as_lattices_with_gaps(pts):
    d = run(plate(pts))
    assert all(not p.get("empty") for p in d["patterns"]), d["patterns"]
    assert "empty" not in text_of(d)


def test_a_turned_and_moved_grid_lists_its_empty_position_turned_and_moved():
    part = plate(but(GRID3, (0, 0)))
    moved = Pos(30, -40, 7) * Rot(0, 0, 30) * part
    d = run(moved)
    (p,) = lattices(d)
    assert (p["type"], p["counts"], p["count"]) == ("grid", [3, 3], 8), p
    (q,) = p["empty"]
    assert near(q, (30, -40, 12)), q  # the plate's centre, on its top face


def test_holes_across_a_side_face_list_the_empty_position_on_that_face():
    side = [(y, z) for z in (-20, 0, 20) for y in (-20, 0, 20) if (y, z) != (0, 20)]
    with BuildPart() as b:
        Box(20, 100, 100)
        with Locations(*[Pos(10, y, z) * Rot(0, 90, 0) for y, z in side]):  # drilled along -X
            Hole(radius=2.5)
    d = run(b.part)
    (p,) = lattices(d)
    assert (p["type"], p["count"]) == ("grid", 8), p
    (q,) = p["empty"]
    assert near(q, (10, 0, 20)), q


def test_a_grid_with_a_gap_read_back_from_step(tmp_path):
    f = tmp_path / "grid.step"
    export_step(plate(but(GRID3, (-20, 0))), str(f))
    d = run(import_step(str(f)))
    (p,) = lattices(d)
    assert (p["type"], p["count"]) == ("grid", 8), p
    (q,) = p["empty"]
    assert near(q, (-20, 0, 5)), q


def test_many_empty_positions_are_named_a_few_and_counted():
    full = [(x, y) for y in range(-40, 41, 10) for x in range(-40, 41, 10)]  # 9 x 9
    gone = [(x, y) for x, y in full if x in (-20, 20) and y in (-30, -10, 10, 30)] + [(0, 0), (0, 20), (0, -20)]
    d = run(plate(but(full, *gone), d=3))
    (p,) = lattices(d)
    assert (p["type"], p["counts"], len(p["empty"])) == ("grid", [9, 9], 11), p
    text = text_of(d)
    assert "(11 empty: " in text and text.count("empty") == 1, text
    line = next(line for line in text.splitlines() if "empty" in line)
    named = line.split("(11 empty: ")[1].split(", ...) at (")[0]
    assert named == "(-20, -30, 5), (20, -30, 5), (0, -20, 5), (-20, -10, 5)", line


def test_a_row_with_a_wide_gap_is_no_row_and_costs_nothing():
    """Two holes 0.01 apart and one 500 away: 50,000 positions of pitch 0.01 are not counted out."""
    from jail.cad import features_patterns as fp
    items = [{"center": (x, 0.0, 0.0), "axis": (0.0, 0.0, -1.0), "diameter": 0.005, "sig": 1}
             for x in (0.0, 0.01, 0.02, 0.03, 500.0)]
    assert not [p for p in fp.find(items, "holes") if p.get("empty")]
    assert fp._on_pitch([0.0, 0.01, 0.02, 0.03, 500.0], 1e-3) is None

"""import_file of a closed STL gives the Solid ``Mesher().read`` gives; an open one a Shell with a note
(issue 21, item 6).

A real closed STL: build123d's own export of a box; one whose box face is split with a degenerate
(collinear) triangle, like build123d's ``examples/low_poly_benchy.stl`` (exported by Blender): the
triangle carries no area and is dropped, and only sewing closes the T-junction it leaves (before:
an open Shell with no volume). An open mesh stays a Shell, and the launcher says why.
"""
from __future__ import annotations

import struct

import pytest

from jail.cad import readers
from tests.helpers import zygotes
from tests.helpers.cli import TEST_PROFILE
from tests.helpers.toolcalls import ToolCalls

CUBE = [  # the unit cube's faces, counter-clockwise seen from outside
    ((0, 0, 0), (0, 1, 0), (1, 1, 0), (1, 0, 0)), ((0, 0, 1), (1, 0, 1), (1, 1, 1), (0, 1, 1)),
    ((0, 0, 0), (1, 0, 0), (1, 0, 1), (0, 0, 1)), ((0, 1, 0), (0, 1, 1), (1, 1, 1), (1, 1, 0)),
    ((0, 0, 0), (0, 0, 1), (0, 1, 1), (0, 1, 0)), ((1, 0, 0), (1, 1, 0), (1, 1, 1), (1, 0, 1)),
]


def cube_triangles(t_junction: bool = False, open_: bool = False) -> list:
    tris = []
    for i, (a, b, c, d) in enumerate(CUBE):
        if i == 1 and t_junction:  # the top face's edge (0,0,1)-(1,0,1) split at m on the top side only
            m = (0.5, 0, 1)
            tris += [(a, m, c), (m, b, c), (a, c, d), (a, b, m)]  # (a, b, m): collinear, no area
            continue
        tris += [(a, b, c), (a, c, d)]
    return tris[:-1] if open_ else tris


def binary_stl(tris) -> bytes:
    out = [b"\0" * 80, struct.pack("<I", len(tris))]
    for t in tris:
        out.append(struct.pack("<3f", 0, 0, 0) + b"".join(struct.pack("<3f", *p) for p in t) + b"\0\0")
    return b"".join(out)


def test_a_t_junction_closed_by_sewing_is_a_solid():
    shape = readers.load(binary_stl(cube_triangles(t_junction=True)), "stl")
    assert type(shape).__name__ == "Solid" and shape.is_valid
    assert shape.volume == pytest.approx(1.0, rel=1e-9)


def test_an_open_mesh_stays_a_shell():
    shape = readers.load(binary_stl(cube_triangles(open_=True)), "stl")
    assert type(shape).__name__ == "Shell"


@pytest.mark.jail
def test_import_file_of_stls(tmp_path):
    indir, out = tmp_path / "in", tmp_path / "out"
    indir.mkdir()
    (indir / "junction.stl").write_bytes(binary_stl(cube_triangles(t_junction=True)))
    (indir / "open.stl").write_bytes(binary_stl(cube_triangles(open_=True)))
    with zygotes.on_shared_zygote(TEST_PROFILE, output_dir=out, input_dir=indir, spare_sessions=0) as L:
        ts = ToolCalls(L)
        try:
            assert ts.execute("box = Box(20, 10, 5)").get("ok")
            assert "error" not in ts.export("box", "box.stl")
            (indir / "box.stl").write_bytes((out / "box.stl").read_bytes())
            for fname, name, volume in (("box.stl", "box_mesh", 1000.0), ("junction.stl", "cube", 1.0)):
                r = ts.import_file(fname, name)
                assert r.get("ok") and r["objects"][0]["type"] == "Solid", r
                assert r["objects"][0]["volume"] == pytest.approx(volume, rel=1e-6) and "note" not in r
            r = ts.execute("fused = cube + Pos(5, 0, 0) * Box(1, 1, 1)\nfused.volume")
            assert r.get("ok") and float(r["value"]["repr"]) == pytest.approx(2.0, rel=1e-6), r
            r = ts.import_file("open.stl", "surface")
            assert r.get("ok") and r["objects"][0]["type"] == "Shell", r
            assert "does not close" in r["note"] and "surface is a surface" in r["note"]
        finally:
            ts.close()

"""jail/cad/readers.py and importer.py in-process: formats, refusals, the import op's reply.

No jail here (tests/faults/test_faults_inputs.py runs the op in a jailed session); these pin the
parsers' refusals and that the formats the jail reads are the ones both sides declare.
"""
from __future__ import annotations

import base64
import io
import struct
import zipfile

import pytest

from build123d import Box

from jail.cad import history, importer, readers, runner
from jail.wire.caps import IMPORT_FORMATS


def test_readers_cover_exactly_the_declared_import_formats():
    assert set(readers.READERS) == set(IMPORT_FORMATS)


def _stl(tris) -> bytes:
    body = b"".join(struct.pack("<12fH", 0, 0, 0, *[c for p in t for c in p], 0) for t in tris)
    return b"x" * 80 + struct.pack("<I", len(tris)) + body


TETRA = [((0, 0, 0), (0, 1, 0), (1, 0, 0)), ((0, 0, 0), (1, 0, 0), (0, 0, 1)),
         ((0, 0, 0), (0, 0, 1), (0, 1, 0)), ((1, 0, 0), (0, 1, 0), (0, 0, 1))]


def test_a_closed_binary_stl_becomes_a_solid_of_the_right_volume():
    obj = readers.load(_stl(TETRA), "stl")
    assert len(obj.solids()) == 1
    assert obj.volume == pytest.approx(1 / 6)


@pytest.mark.parametrize("fmt,data,says", [
    ("stl", b"not a mesh at all", "not an STL file"),
    ("stl", b"solid x\nendsolid x\n", "holds no triangles"),
    ("3mf", b"PK not really", "not a 3MF file"),
    ("dxf", b"AutoCAD Binary DXF\r\n\x1a\x00", "binary DXF is not supported"),
    ("svg", b'<!DOCTYPE svg [<!ENTITY x "y">]><svg xmlns="http://www.w3.org/2000/svg"/>', "DOCTYPE"),
    ("step", b"ISO-10303-21; junk", "STEP"),
    ("nope", b"", "unknown format"),
])
def test_refusals_say_why(fmt, data, says):
    with pytest.raises(readers.ImportFailed, match=says):
        readers.load(data, fmt)


def test_a_3mf_with_a_doctype_is_refused():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("3D/3dmodel.model", '<!DOCTYPE model [<!ENTITY e "x">]><model xmlns="%s"/>' % readers.NS_3MF)
    with pytest.raises(readers.ImportFailed, match="DOCTYPE"):
        readers.load(buf.getvalue(), "3mf")


def test_the_import_op_binds_records_and_reports_the_object():
    ns = runner.new_namespace(["build123d"], [], python_layers=False)
    saved = list(history._ENTRIES)
    try:
        msg = {"name": "tet", "format": "stl", "filename": "t.stl", "sha256": "ab",
               "data": base64.b64encode(_stl(TETRA)).decode()}
        r = importer.run_import(msg, ns)
        assert r["ok"] is True and r["error"] is None, r
        assert [o["name"] for o in r["objects"]] == ["tet"] and r["objects"][0]["change"] == "added"
        assert ns["tet"].volume == pytest.approx(1 / 6)
        assert history.entries()[-1]["code"] == "tet = Mesher().read(INPUT_DIR + '/t.stl')[0]"
        bad = importer.run_import({**msg, "format": ["stl"]}, ns)
        assert bad["ok"] is False and bad["error"]["message"] == "bad import request"
        broken = importer.run_import({**msg, "data": "%%%"}, ns)
        assert broken["error"]["message"] == "the file's bytes did not arrive intact"
        garbage = importer.run_import({**msg, "data": base64.b64encode(b"junk").decode()}, ns)
        assert garbage["error"]["type"] == "ImportError" and garbage["error"]["message"].startswith("t.stl: ")
    finally:
        history._ENTRIES[:] = saved


def test_a_step_round_trip_keeps_the_solid():
    from build123d import export_step
    buf = io.BytesIO()
    export_step(Box(1, 2, 3), buf)
    obj = readers.load(buf.getvalue(), "step")
    assert obj.volume == pytest.approx(6.0)

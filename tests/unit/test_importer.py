"""jail/cad/readers.py and importer.py in-process: formats, refusals, the import op's reply.

No jail here (tests/faults/test_faults_inputs.py runs the op in a jailed session); these pin the
parsers' refusals and that the formats the jail reads are the ones both sides declare.
"""
from __future__ import annotations

import io
import struct
import zipfile

import pytest

from build123d import Box

from jail.cad import history, importer, readers, runner
from jail.wire.caps import IMPORT_FORMATS
from jail.wire.importfail import DXF_ENTITIES, REASONS


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


@pytest.mark.parametrize("fmt,data,reason", [
    ("stl", b"not a mesh at all", "not-ascii-stl"),
    ("stl", b"\xff" * 90, "not-stl"),
    ("stl", b"solid x\nendsolid x\n", "no-triangles"),
    ("3mf", b"PK not really", "not-zip"),
    ("dxf", b"AutoCAD Binary DXF\r\n\x1a\x00", "binary-dxf"),
    ("svg", b'<!DOCTYPE svg [<!ENTITY x "y">]><svg xmlns="http://www.w3.org/2000/svg"/>', "doctype"),
    ("step", b"ISO-10303-21; junk", "unreadable"),
    ("nope", b"", "bad-request"),
])
def test_refusals_say_why(fmt, data, reason):
    with pytest.raises(readers.ImportFailed) as ei:
        readers.load(data, fmt)
    assert ei.value.reason == reason and str(ei.value).startswith(REASONS[reason].replace("{fmt}", "input"))


def test_a_3mf_with_a_doctype_is_refused():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("3D/3dmodel.model", '<!DOCTYPE model [<!ENTITY e "x">]><model xmlns="%s"/>' % readers.NS_3MF)
    with pytest.raises(readers.ImportFailed, match="DOCTYPE"):
        readers.load(buf.getvalue(), "3mf")


SECRET = "AWS_SECRET_ACCESS_KEY=" + "k3y" * 6


def _3mf(model: str, name: str = "3D/3dmodel.model") -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr(name, model)
    return buf.getvalue()


def _bad_crc(data: bytes) -> bytes:
    i = data.index(b"PK\x01\x02")  # the central directory's CRC of the member: off by one
    return data[:i + 16] + bytes([data[i + 16] ^ 1]) + data[i + 17:]


_MESH = '<model xmlns="%s"><resources><object id="1"><mesh><vertices>{v}</vertices><triangles>' \
        '<triangle v1="0" v2="1" v3="2"/></triangles></mesh></object></resources></model>' % readers.NS_3MF
HOSTILE = [  # files that carry a secret where each parser chokes on it (the issue: DXF and 3MF echoed it)
    ("dxf", f"0\nSECTION\n2\nENTITIES\n0\nLINE\n10\n{SECRET}\n20\n0\n0\nENDSEC\n0\nEOF\n", "bad-number", 8),
    ("dxf", f"0\nSECTION\n2\nENTITIES\n0\nLWPOLYLINE\n10\n{SECRET}\n0\nENDSEC\n", "bad-number", 8),
    ("dxf", f"0\nSECTION\n2\nENTITIES\n0\n{SECRET}\n8\n0\n0\nENDSEC\n", "no-geometry", None),
    ("dxf", f"{SECRET}\nx\n", "bad-group-code", 1),
    ("3mf", _3mf(_MESH.format(v=f'<vertex x="{SECRET}" y="0" z="0"/>')), "bad-mesh", 1),
    ("3mf", _3mf(_MESH.format(v=f'<vertex {SECRET[:10]}="1"/>')), "bad-mesh", 1),
    ("3mf", _3mf(f"<model>\n<{SECRET}>\n</oops>"), "bad-xml", 2),
    ("3mf", _bad_crc(_3mf(_MESH.format(v=""), name=f"3D/{SECRET}.model")), "bad-zip", None),
    ("stl", f"solid x\nfacet\nvertex {SECRET} 1 2\n", "bad-number", 3),
    ("svg", f'<svg xmlns="http://www.w3.org/2000/svg">\n<{SECRET}>', "bad-xml", 2),
    ("step", f"ISO-10303-21;\n{SECRET}\n", "unreadable", None),
    ("brep", f"DBRep_DrawableShape\n{SECRET}\n", "no-shape", None),
]


@pytest.mark.parametrize("fmt,data,reason,line", HOSTILE)
def test_a_refusal_never_quotes_the_file(fmt, data, reason, line):
    data = data.encode() if isinstance(data, str) else data
    with pytest.raises(readers.ImportFailed) as ei:
        readers.load(data, fmt)
    e = ei.value
    assert e.reason == reason and e.line == line, (e.reason, e.line, str(e))
    assert all(k in DXF_ENTITIES or k == "other" for k in e.kinds)
    for text in (str(e), repr(e.args), repr(e.kinds)):
        assert "k3y" not in text and "AWS" not in text, text


def test_an_svg_the_reader_chokes_on_fails_without_its_text():
    """build123d's SVG reader raises with the path data in its message: the op keeps only the code."""
    ns = runner.new_namespace(["build123d"], [], python_layers=False)
    svg = f'<svg xmlns="http://www.w3.org/2000/svg"><path d="M 0 0 L {SECRET}"/></svg>'.encode()
    r = importer.run_import({"name": "s", "format": "svg", "filename": "s.svg"}, ns, svg)
    assert r["ok"] is False and r["error"]["reason"] in REASONS, r
    assert "k3y" not in repr(r) and "AWS" not in repr(r)


def test_the_import_op_binds_records_and_reports_the_object():
    ns = runner.new_namespace(["build123d"], [], python_layers=False)
    saved = list(history._ENTRIES)
    try:
        msg = {"name": "tet", "format": "stl", "filename": "t.stl", "sha256": "ab", "size": len(_stl(TETRA))}
        r = importer.run_import(msg, ns, _stl(TETRA))
        assert r["ok"] is True and r["error"] is None, r
        assert [o["name"] for o in r["objects"]] == ["tet"] and r["objects"][0]["change"] == "added"
        assert ns["tet"].volume == pytest.approx(1 / 6)
        assert history.entries()[-1]["note"] == "import_file: t.stl" and r["call"] == history.entries()[-1]["call"]
        bad = importer.run_import({**msg, "format": ["stl"]}, ns, _stl(TETRA))
        assert bad["ok"] is False and bad["error"]["reason"] == "bad-request"
        short = importer.run_import(msg, ns, _stl(TETRA)[:-1])  # the size the launcher sent must match
        assert short["error"]["reason"] == "bad-request"
        garbage = importer.run_import({**msg, "size": 4}, ns, b"junk")
        assert garbage["error"]["type"] == "ImportError" and garbage["error"]["reason"] == "not-ascii-stl"
        assert garbage["error"]["message"] == "the file " + REASONS["not-ascii-stl"]
    finally:
        history._ENTRIES[:] = saved


def test_a_step_round_trip_keeps_the_solid():
    from build123d import export_step
    buf = io.BytesIO()
    export_step(Box(1, 2, 3), buf)
    obj = readers.load(buf.getvalue(), "step")
    assert obj.volume == pytest.approx(6.0)

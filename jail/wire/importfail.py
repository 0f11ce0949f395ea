"""Why an import failed: the fixed table of reasons the jail may give and the launcher words.

Parser errors quote the file they choke on (a float() error on a DXF value showed
``AWS_SECRET_ACCESS_KEY=...``), and the jailed importer may have been patched by the session's
own code. So a failed import is reported as one code of :data:`REASONS` plus numbers only (a line,
a column, DXF entity names of :data:`DXF_ENTITIES`); the jail sends no text of its own, and the
launcher (launcher/replies/imports.py) writes the message from this table and drops anything
else. One definition for both sides, like caps.py.

Blocks: file content in an import error. Does not block: what the numbers themselves encode (a
few bits per failed call; the launcher checks them against the file's size).
"""
from __future__ import annotations

# caps of the readers (jail/cad/readers.py), quoted by the messages
MAX_TRIANGLES = 500_000
MAX_3MF_MEMBER = 256 * 1024 * 1024   # a 500k-triangle model is ~60 MB of XML
MAX_3MF_MODELS = 16
MAX_DXF_ENTITIES = 200_000

#: code -> what is wrong with the file ({fmt} is the format's name, e.g. STEP)
REASONS: dict[str, str] = {
    "unreadable": "is not a readable {fmt} file",
    "no-shape": "holds no shape that could be transferred",
    "not-stl": "is neither a binary STL (its triangle count does not match its size) nor an ASCII STL",
    "not-ascii-stl": "is not an STL file: not binary (its triangle count does not match its size), and as "
                     "text it does not start with 'solid'",
    "bad-vertex": "has a malformed vertex",
    "bad-number": "has a malformed number",
    "non-finite": "has a non-finite coordinate (NaN or infinity)",
    "no-triangles": "holds no triangles",
    "too-many-triangles": f"has more than {MAX_TRIANGLES} triangles",
    "not-zip": "is not a zip archive (a 3MF file is one)",
    "bad-zip": "is a damaged zip archive",
    "no-model": "has no .model part",
    "too-many-models": f"has more than {MAX_3MF_MODELS} model parts",
    "member-too-large": f"has a part that decompresses to more than {MAX_3MF_MEMBER} bytes",
    "doctype": "has a DOCTYPE (DTDs and entities are refused)",
    "bad-xml": "is not well-formed XML",
    "bad-mesh": "has a vertex or triangle with a missing or malformed attribute",
    "missing-vertex": "has a triangle that refers to a vertex that does not exist",
    "no-usable-triangle": "has no usable (non-degenerate) triangle",
    "not-utf8": "is not UTF-8 text",
    "no-svg-shapes": "holds no paths or shapes",
    "binary-dxf": "is a binary DXF: save it as ASCII DXF",
    "bad-group-code": "is not an ASCII DXF (a group code is not a number)",
    "too-many-entities": f"has more than {MAX_DXF_ENTITIES} entities",
    "bad-entity": "has a malformed entity",
    "no-geometry": "holds no LINE, CIRCLE, ARC or polyline geometry",
    "reader-failed": "made the {fmt} reader fail",
    "out-of-memory": "ran the parser out of memory",
    "bad-request": "did not reach the parser intact",
}

#: DXF entity names a reply may quote (the entities found, or the one that is malformed): the
#: standard ones; any other name in a file is reported as "other".
DXF_ENTITIES = frozenset({
    "3DFACE", "3DSOLID", "ACAD_PROXY_ENTITY", "ARC", "ATTDEF", "ATTRIB", "BODY", "CIRCLE", "DIMENSION",
    "ELLIPSE", "HATCH", "HELIX", "IMAGE", "INSERT", "LEADER", "LIGHT", "LINE", "LWPOLYLINE", "MESH", "MLEADER",
    "MLINE", "MTEXT", "OLE2FRAME", "OLEFRAME", "POINT", "POLYLINE", "RAY", "REGION", "SECTION", "SEQEND",
    "SHAPE", "SOLID", "SPLINE", "SURFACE", "TABLE", "TEXT", "TOLERANCE", "TRACE", "UNDERLAY", "VERTEX",
    "VIEWPORT", "WIPEOUT", "XLINE",
})
MAX_KINDS = 12   # entity names per reply


def dxf_kind(name) -> str:
    """``name`` if it is a standard DXF entity name, else ``"other"``."""
    return name if isinstance(name, str) and name in DXF_ENTITIES else "other"

"""The ``import`` op: bind a parsed user file to a session name (``import_file``).

The launcher read the file from its input directory and sent its bytes as the request's raw blob
(``ctx.blob``); ``run_import`` parses them here with ``readers.load`` (in memory, every jail layer
applied), binds the object, notes the call in ``history`` (its number attributes later errors;
the script is the launcher's, built from its own record) and replies like ``execute`` does (a big
mesh gets a light summary). A failure is a code of ``jail.wire.importfail.REASONS`` with a line
and column, never a parser's text (it may quote the file). ``warm_up`` loads every reader in the
zygote, before the layers (a first import inside the jail may need a syscall it denies).

Blocks: nothing by itself (see ``readers``): a crash, hang or memory blow-up in a parser costs
this next only; the launcher discards it and the head is unchanged. The launcher words every
failure itself and trusts nothing here (launcher/replies/imports.py).
"""
from __future__ import annotations

import io
import time
import zipfile

from jail.cad import changes, history, readers, summary
from jail.cad.readers import ImportFailed
from jail.wire.caps import IMPORT_FORMATS
from jail.wire.importfail import REASONS

__all__ = ["run_import", "warm_up"]


def warm_up() -> None:
    """Called by the zygote: import what the readers need and run each once (before the jail's
    layers; first imports may need syscalls)."""
    from xml.parsers import expat  # noqa: F401
    from OCP.BRepBuilderAPI import BRepBuilderAPI_MakeSolid  # noqa: F401
    from OCP.BRepGProp import BRepGProp  # noqa: F401
    from OCP.STEPControl import STEPControl_Reader  # noqa: F401
    tri = [((0, 0, 0), (1, 0, 0), (0, 1, 0)), ((0, 0, 0), (0, 0, 1), (1, 0, 0)),
           ((0, 0, 0), (0, 1, 0), (0, 0, 1)), ((1, 0, 0), (0, 0, 1), (0, 1, 0))]
    readers.mesh_to_shape(tri).IsNull()
    readers.mesh_to_shape(tri[:3]).IsNull()  # an open mesh: the sewing path
    svg = b'<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="4" height="3"/></svg>'
    readers.read_svg(svg)
    readers.read_dxf(b"0\nSECTION\n2\nENTITIES\n0\nLINE\n10\n0\n20\n0\n11\n1\n21\n1\n0\nENDSEC\n0\nEOF\n")
    b = io.BytesIO()
    from build123d import Box, export_step
    export_step(Box(1, 1, 1), b)
    readers.load(b.getvalue(), "step")
    buf = io.BytesIO()
    zf = zipfile.ZipFile(buf, "w")
    zf.writestr("3D/3dmodel.model", '<model xmlns="%s"><resources><object id="1"><mesh><vertices>'
                '<vertex x="0" y="0" z="0"/><vertex x="1" y="0" z="0"/><vertex x="0" y="1" z="0"/></vertices>'
                '<triangles><triangle v1="0" v2="1" v3="2"/></triangles></mesh></object></resources><build>'
                '<item objectid="1"/></build></model>' % readers.NS_3MF)
    zf.close()
    readers.load(buf.getvalue(), "3mf")


#: Past this many faces (a mesh), the reply's summary skips the validity check and build123d's
#: per-face wrappers (slow on a mesh of tens of thousands of triangles).
LIGHT_SUMMARY_FACES = 2000


def _count(shape, kind) -> int:
    """Distinct sub-shapes of ``kind`` (an edge shared by two faces counted once)."""
    from OCP.TopExp import TopExp_Explorer
    ex = TopExp_Explorer(shape, kind)
    seen = set()
    while ex.More():
        seen.add(ex.Current().__hash__())
        ex.Next()
    return len(seen)


def object_summary(name: str, obj) -> list[dict]:
    """The reply's summary of the imported object: ``summary.summarize``'s, or for a big mesh a
    light one (counts with TopExp, volume with GProp, bbox; no validity check), which is also put
    in the shape cache so the next summaries of the session reuse it."""
    from OCP.TopAbs import TopAbs_EDGE, TopAbs_FACE, TopAbs_SOLID
    wrapped = getattr(obj, "wrapped", None)
    if wrapped is None or _count(wrapped, TopAbs_FACE) <= LIGHT_SUMMARY_FACES:
        return summary.summarize({name: obj})
    from OCP.Bnd import Bnd_Box
    from OCP.BRepBndLib import BRepBndLib
    from OCP.BRepGProp import BRepGProp
    from OCP.GProp import GProp_GProps
    solids, faces, edges = (_count(wrapped, k) for k in (TopAbs_SOLID, TopAbs_FACE, TopAbs_EDGE))
    d: dict = {"kind": "shape", "counts": {"solids": solids, "faces": faces, "edges": edges}}
    props = GProp_GProps()
    if solids:
        BRepGProp.VolumeProperties_s(wrapped, props)
        d["volume"] = props.Mass()
    else:
        BRepGProp.SurfaceProperties_s(wrapped, props)
        d["area"] = props.Mass()
    box = Bnd_Box()
    BRepBndLib.Add_s(wrapped, box)
    lo, hi = box.CornerMin(), box.CornerMax()
    x0, y0, z0, x1, y1, z1 = lo.X(), lo.Y(), lo.Z(), hi.X(), hi.Y(), hi.Z()
    d["bbox"] = {"min": [x0, y0, z0], "max": [x1, y1, z1], "size": [x1 - x0, y1 - y0, z1 - z0]}
    try:  # summaries are kept by shape between calls (an optimisation only)
        summary.remember_shape(obj, d)
    except Exception:  # noqa: BLE001
        pass
    return [{"name": name, "type": type(obj).__name__, **d}]


def _fail(reason: str, fmt: str, t0: float, *, type_: str = "ImportError", line=None, col=None,
          kinds=()) -> dict:
    """A failed import: the reason's code and where, with the table's words (no text of the file)."""
    text = REASONS.get(reason, REASONS["reader-failed"]).replace("{fmt}", str(fmt).upper()[:8])
    return {"ok": False, "stdout": "", "stderr": "", "truncated": False, "objects": [],
            "error": {"type": type_, "message": f"the file {text}", "line": None, "source_line": None,
                      "reason": reason, "file_line": line, "file_col": col, "kinds": list(kinds)},
            "duration_ms": round((time.monotonic() - t0) * 1000, 2)}


def run_import(msg: dict, namespace: dict, blob: bytes = b"") -> dict:
    """Parse ``blob`` (the file's bytes) as ``msg["format"]`` and bind it to ``msg["name"]``; an
    execute-shaped result. On success the import is noted in ``history``."""
    t0 = time.monotonic()
    name, fmt, filename = msg.get("name"), msg.get("format"), msg.get("filename")
    if not (isinstance(name, str) and name.isidentifier() and not name.startswith("__")) \
            or not isinstance(filename, str) or fmt not in IMPORT_FORMATS or not isinstance(blob, (bytes, bytearray)):
        return _fail("bad-request", "", t0)
    size = msg.get("size")
    if isinstance(size, int) and size != len(blob):
        return _fail("bad-request", fmt, t0)
    try:
        obj = readers.load(bytes(blob) if isinstance(blob, bytearray) else blob, fmt)
    except ImportFailed as e:
        return _fail(e.reason, fmt, t0, line=e.line, col=e.col, kinds=e.kinds)
    except MemoryError:
        return _fail("out-of-memory", fmt, t0, type_="MemoryError")
    except Exception:  # noqa: BLE001 - OCCT's Standard_Failure, anything a reader raises (its text may quote the file)
        return _fail("reader-failed", fmt, t0)
    change = "changed" if name in namespace else "added"
    namespace[name] = obj
    call = history.record(f"# import_file: {filename!r} as {name} ({fmt}); the launcher keeps the code",
                          note=f"import_file: {filename}")
    objects = [{**o, "change": change} for o in object_summary(name, obj)]
    try:  # the next execute reports its own changes, not this import again
        changes.remember(namespace)
    except Exception:  # noqa: BLE001 - an optimisation of the reply only
        pass
    return {"ok": True, "stdout": "", "stderr": "", "truncated": False, "error": None, "call": call,
            "objects": objects, "duration_ms": round((time.monotonic() - t0) * 1000, 2)}

"""The ``verify`` op: are these bytes a file of the claimed format? Run where no user code ever ran.

The launcher hands the bytes of a file it is about to write (an export) to a dedicated verifier
session forked from the zygote that is never given user code (launcher/files/verify.py); this
module parses them for the format their name claims and returns numbers measured on what it
parsed (volume, bbox, triangles, solids, shapes) or a typed failure. Each check runs in a
disposable next: a file that crashes or hangs a parser kills only that process.

Blocks: a file that is not its format (zeros, another format's bytes, a truncated or padded
binary STL, a 3MF zip with other members, absolute or ``..`` member names, data before or after
the zip), text formats (STEP, BREP, DXF, SVG, py) with control characters that a terminal would
act on, empty models. Does not block: a well-formed file of the right format whose model is
nonsense, or SVG active content (the launcher's svgcheck refuses that, before this runs).
"""
from __future__ import annotations

import io
import math
import re
import struct
import zipfile

MESSAGE_CAP = 300
# 3MF: the members lib3mf writes (thumbnails and metadata may come with issue 21's files)
_3MF_MEMBERS = re.compile(r"^(\[Content_Types\]\.xml|_rels/\.rels|3D/3dmodel\.model|3D/_rels/3dmodel\.model\.rels"
                          r"|Metadata/[A-Za-z0-9_-]{1,64}\.(png|jpe?g|xml))$")
_3MF_MAX_INFLATE = 64        # a member may decompress to at most 64x the whole file (XML compresses ~6x)
_TEXT_OK = {9, 10, 13}       # tab, LF, CR: the only control characters a text format may hold


class VerifyFailed(ValueError):
    """The bytes are not a well-formed file of the claimed format; the message says why."""


def _num(x) -> float | None:
    try:
        f = float(x)
    except Exception:  # noqa: BLE001
        return None
    return f if math.isfinite(f) else None


def _bbox(mn, mx) -> dict:
    mn, mx = [_num(v) for v in mn], [_num(v) for v in mx]
    return {"min": mn, "max": mx, "size": [None if a is None or b is None else b - a for a, b in zip(mn, mx)]}


def _a(what: str) -> str:
    return ("an " if what in ("SVG", "STL") else "a ") + what  # spelt out (ess-vee-gee) or a word (STEP)


def _text(data: bytes, what: str, *, ascii_only: bool) -> str:
    """The bytes as text: ASCII (or UTF-8) with no control character but tab/LF/CR (shown by offset)."""
    bad = next((i for i, c in enumerate(data[:1 << 16]) if c < 32 and c not in _TEXT_OK or c == 127), None)
    if bad is None and len(data) > 1 << 16:
        m = re.search(rb"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]", data)
        bad = m.start() if m else None
    if bad is not None:
        raise VerifyFailed(f"not {_a(what)} file: control byte 0x{data[bad]:02x} at offset {bad}")
    try:
        return data.decode("ascii" if ascii_only else "utf-8")
    except UnicodeDecodeError as e:
        raise VerifyFailed(f"not {_a(what)} file: {'non-ASCII' if ascii_only else 'invalid UTF-8'} byte at offset "
                           f"{e.start}") from None


def _mesh_numbers(tri) -> dict:
    """Volume (divergence theorem), bbox and triangle count of an (n, 3, 3) float array."""
    import numpy as np
    tri = np.asarray(tri, dtype=np.float64).reshape(-1, 3, 3)
    if len(tri) == 0:
        raise VerifyFailed("the mesh holds no triangles")
    if not np.isfinite(tri).all():
        raise VerifyFailed("the mesh has non-finite coordinates")
    a, b, c = tri[:, 0], tri[:, 1], tri[:, 2]
    area2 = np.linalg.norm(np.cross(b - a, c - a), axis=1)
    if not (area2 > 0).any():
        raise VerifyFailed("every triangle of the mesh is degenerate (zero area)")
    vol = float(np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6.0)
    v = tri.reshape(-1, 3)
    return {"volume": _num(abs(vol)), "bbox": _bbox(v.min(axis=0), v.max(axis=0)), "triangles": int(len(tri))}


def _shape_numbers(shape) -> dict:
    from build123d import Compound
    obj = Compound.cast(shape) if not hasattr(shape, "wrapped") else shape
    bb = obj.bounding_box()
    out = {"bbox": _bbox((bb.min.X, bb.min.Y, bb.min.Z), (bb.max.X, bb.max.Y, bb.max.Z)), "solids": len(obj.solids())}
    if out["solids"]:
        out["volume"] = _num(obj.volume)
    return out


# ------------------------------------------------------------------ formats
def check_stl(data: bytes) -> dict:
    """Binary STL only (what the exporters write): a printable header that does not start with
    'solid' (readers would take it for ASCII), a count that matches the length exactly."""
    import numpy as np
    if len(data) < 84:
        raise VerifyFailed(f"not a binary STL file: {len(data)} bytes, shorter than the 84-byte header")
    head = data[:80].rstrip(b"\x00 ")
    if head.lower().startswith(b"solid"):
        raise VerifyFailed("not a binary STL file: its header starts with 'solid' (readers would take it for ASCII)")
    if any(c < 32 or c > 126 for c in head.replace(b"\x00", b" ")):
        raise VerifyFailed("not a binary STL file: its 80-byte header holds non-printable bytes")
    (n,) = struct.unpack_from("<I", data, 80)
    if 84 + 50 * n != len(data):
        raise VerifyFailed(f"not a binary STL file: the header says {n} triangles ({84 + 50 * n} bytes) but the "
                           f"file has {len(data)} bytes")
    rec = np.dtype([("n", "<f4", 3), ("v", "<f4", (3, 3)), ("a", "<u2")])
    return _mesh_numbers(np.frombuffer(data, dtype=rec, count=n, offset=84)["v"])


def _zip_structure(data: bytes) -> zipfile.ZipFile:
    if not data.startswith(b"PK\x03\x04"):
        raise VerifyFailed("not a 3MF file: it does not start with a zip entry")
    try:
        z = zipfile.ZipFile(io.BytesIO(data))
        infos = z.infolist()
    except (zipfile.BadZipFile, ValueError, OSError) as e:
        raise VerifyFailed(f"not a 3MF file: not a readable zip ({type(e).__name__})") from None
    if z.comment or not data[-22:].startswith(b"PK\x05\x06"):
        raise VerifyFailed("not a 3MF file: the zip has a comment or data after its end")
    names = [i.filename for i in infos]
    if len(set(n.lower() for n in names)) != len(names):
        raise VerifyFailed("not a 3MF file: the zip has duplicate member names")
    for i in infos:
        if not _3MF_MEMBERS.match(i.filename):
            shown = i.filename.encode("ascii", "backslashreplace").decode()[:80]
            raise VerifyFailed(f"not a 3MF file: unexpected zip member {shown!r}")
        if i.flag_bits & 0x1:
            raise VerifyFailed(f"not a 3MF file: member {i.filename!r} is encrypted")
        if i.file_size > _3MF_MAX_INFLATE * len(data):
            raise VerifyFailed(f"not a 3MF file: member {i.filename!r} claims {i.file_size} bytes decompressed")
    if infos and min(i.header_offset for i in infos) != 0:
        raise VerifyFailed("not a 3MF file: data before the first zip entry")
    if "3D/3dmodel.model" not in names:
        raise VerifyFailed("not a 3MF file: no 3D/3dmodel.model member")
    return z


NS_3MF = "http://schemas.microsoft.com/3dmanufacturing/core/2015/02"
_UNITS_3MF = {"micron": 0.001, "millimeter": 1.0, "centimeter": 10.0, "inch": 25.4, "foot": 304.8, "meter": 1000.0}


def _model_triangles(xml: bytes):
    """The (n, 3, 3) triangles of every <mesh> of a 3MF model part, parsed with expat (no DTD).

    Not lib3mf: its UUID generator is seeded once in the zygote, so every forked process draws the
    same UUIDs and a reader model collides with a file written by a session ("UUID not unique")."""
    import numpy as np
    from xml.parsers import expat
    p = expat.ParserCreate(namespace_separator=" ")
    state = {"root": None, "unit": 1.0, "verts": [], "tris": [], "meshes": []}

    def refuse(*_a):
        raise VerifyFailed("not a 3MF file for export: its model has a DOCTYPE")

    def start(tag, attrs):
        if state["root"] is None:
            state["root"] = tag
            unit = attrs.get("unit", "millimeter")
            if unit not in _UNITS_3MF:
                raise VerifyFailed(f"not a 3MF file: unknown unit {unit[:20]!r}")
            state["unit"] = _UNITS_3MF[unit]
        ns, _, local = tag.rpartition(" ")
        if ns != NS_3MF:
            return
        try:
            if local == "vertex":
                state["verts"].append((float(attrs["x"]), float(attrs["y"]), float(attrs["z"])))
            elif local == "triangle":
                state["tris"].append((int(attrs["v1"]), int(attrs["v2"]), int(attrs["v3"])))
        except (KeyError, ValueError):
            raise VerifyFailed(f"not a 3MF file: a bad <{local}> at line {p.CurrentLineNumber}") from None

    def end(tag):
        if tag == f"{NS_3MF} mesh":
            v = np.array(state["verts"], dtype=np.float64).reshape(-1, 3)
            t = np.array(state["tris"], dtype=np.int64).reshape(-1, 3)
            if len(t) and (t.min() < 0 or t.max() >= len(v)):
                raise VerifyFailed("not a 3MF file: a triangle refers to a vertex that does not exist")
            state["meshes"].append(v[t] * state["unit"])
            state["verts"], state["tris"] = [], []

    p.StartDoctypeDeclHandler = p.EntityDeclHandler = refuse
    p.StartElementHandler, p.EndElementHandler = start, end
    try:
        p.Parse(xml, True)
    except expat.ExpatError as e:
        raise VerifyFailed(f"not a 3MF file: its model is not well-formed XML (line {e.lineno})") from None
    if state["root"] != f"{NS_3MF} model":
        raise VerifyFailed("not a 3MF file: the model's root is not a 3MF <model>")
    return np.concatenate(state["meshes"]) if state["meshes"] else np.zeros((0, 3, 3))


def check_3mf(data: bytes) -> dict:
    """A zip of the 3MF members only (each inflating to its declared size, no DTD), its model's
    meshes measured."""
    z = _zip_structure(data)
    model = b""
    for info in z.infolist():  # every member inflates to what it declares (CRC checked by zipfile)
        try:
            with z.open(info) as f:
                chunks, n, tail = [], 0, b""
                while chunk := f.read(1 << 20):
                    n += len(chunk)
                    if n > info.file_size:
                        raise VerifyFailed(f"not a 3MF file: member {info.filename!r} inflates past its size")
                    if re.search(rb"<!(DOCTYPE|ENTITY)", (tail + chunk).upper()):
                        raise VerifyFailed(f"not a 3MF file for export: member {info.filename!r} has a DOCTYPE")
                    tail = chunk[-16:]
                    if info.filename == "3D/3dmodel.model":
                        chunks.append(chunk)
        except (zipfile.BadZipFile, OSError, EOFError) as e:
            raise VerifyFailed(f"not a 3MF file: member {info.filename!r} is damaged ({type(e).__name__})") from None
        if chunks:
            model = b"".join(chunks)
    return _mesh_numbers(_model_triangles(model))


def check_step(data: bytes) -> dict:
    text = _text(data, "STEP", ascii_only=True)
    if not text.startswith("ISO-10303-21;"):
        raise VerifyFailed("not a STEP file: it does not start with 'ISO-10303-21;'")
    if not text.rstrip().endswith("END-ISO-10303-21;"):
        raise VerifyFailed("not a STEP file: it does not end with 'END-ISO-10303-21;'")
    from OCP.IFSelect import IFSelect_RetDone
    from OCP.STEPControl import STEPControl_Reader
    r = STEPControl_Reader()
    if r.ReadStream("export.step", io.BytesIO(data)) != IFSelect_RetDone:
        raise VerifyFailed("not a STEP file: OCCT's reader refused it")
    if r.TransferRoots() == 0 or r.OneShape().IsNull():
        raise VerifyFailed("the STEP file holds no shape")
    return _shape_numbers(r.OneShape())


def check_brep(data: bytes) -> dict:
    text = _text(data, "BREP", ascii_only=True)
    if not text.lstrip("\n").startswith("CASCADE Topology"):
        raise VerifyFailed("not a BREP file: it does not start with 'CASCADE Topology'")
    from OCP.BRep import BRep_Builder
    from OCP.BRepTools import BRepTools
    from OCP.TopoDS import TopoDS_Shape
    s = TopoDS_Shape()
    try:
        BRepTools.Read_s(s, io.BytesIO(data), BRep_Builder())
    except Exception as e:  # noqa: BLE001 - Standard_Failure
        raise VerifyFailed(f"not a BREP file: OCCT's reader failed ({type(e).__name__})") from None
    if s.IsNull():
        raise VerifyFailed("the BREP file holds no shape")
    return _shape_numbers(s)


def _flat(shapes, what: str) -> dict:
    from build123d import Compound
    shapes = [s for s in shapes if s is not None and getattr(s, "wrapped", None) is not None]
    if not shapes:
        raise VerifyFailed(f"the {what} holds no shapes")
    bb = Compound(shapes).bounding_box()
    return {"shapes": len(shapes), "bbox": _bbox((bb.min.X, bb.min.Y, bb.min.Z), (bb.max.X, bb.max.Y, bb.max.Z))}


def check_svg(data: bytes) -> dict:
    text = _text(data, "SVG", ascii_only=False)
    if "<svg" not in text[:4096]:
        raise VerifyFailed("not an SVG file: no <svg> element at its start")
    from xml.parsers import expat
    p = expat.ParserCreate()

    def refuse(*_a):
        raise VerifyFailed("not an SVG file for export: it has a DOCTYPE")
    p.StartDoctypeDeclHandler = refuse
    p.EntityDeclHandler = refuse
    try:
        p.Parse(data, True)
    except expat.ExpatError as e:
        raise VerifyFailed(f"not a well-formed SVG file (line {e.lineno}, column {e.offset})") from None
    from build123d import import_svg
    return _flat(import_svg(io.StringIO(text)), "SVG")


def check_dxf(data: bytes) -> dict:
    text = _text(data, "DXF", ascii_only=False)
    if not re.match(r"\s*0\s*\n\s*SECTION\s*\n", text):
        raise VerifyFailed("not an ASCII DXF file: it does not start with a SECTION")
    if not re.search(r"\n\s*0\s*\n\s*EOF\s*$", text):
        raise VerifyFailed("not an ASCII DXF file: it does not end with EOF")
    from build123d import import_dxf
    return _flat(import_dxf(io.BytesIO(data)), "DXF")


def check_py(data: bytes) -> dict:
    """The launcher-built script: UTF-8 text, no control characters, valid Python (parsed, never run)."""
    import ast
    text = _text(data, "Python", ascii_only=False)
    try:
        ast.parse(text, "<export>")
    except SyntaxError as e:
        raise VerifyFailed(f"not a valid Python file (line {e.lineno})") from None
    return {"lines": text.count("\n") + (0 if text.endswith("\n") else 1)}


CHECKS = {"step": check_step, "brep": check_brep, "stl": check_stl, "3mf": check_3mf, "svg": check_svg,
          "dxf": check_dxf, "py": check_py}


def check(fmt: str, data: bytes) -> dict:
    """The numbers measured on ``data`` parsed as ``fmt``; VerifyFailed with the reason otherwise."""
    fn = CHECKS.get(fmt)
    if fn is None:
        raise VerifyFailed(f"no check for format {str(fmt)[:16]!r}")
    if not data:
        raise VerifyFailed("the file is empty")
    try:
        return fn(data)
    except VerifyFailed:
        raise
    except Exception as e:  # noqa: BLE001 - a parser's own exception: its type only (never file content)
        raise VerifyFailed(f"not {_a(fmt.upper())} file: the reader failed ({type(e).__name__})") from None


def op_verify(msg: dict, ctx) -> tuple[dict, bytes]:
    """verify: ``ctx.blob`` checked as ``msg["format"]``; ``{"ok", "format", "check"|"error"}``."""
    fmt = str(msg.get("format", ""))[:16]
    try:
        return {"ok": True, "format": fmt, "check": check(fmt, ctx.blob)}, b""
    except VerifyFailed as e:
        return {"ok": False, "format": fmt, "error": str(e)[:MESSAGE_CAP]}, b""

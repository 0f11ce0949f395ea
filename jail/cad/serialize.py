"""The ``export`` op's jail side: a top-level object serialised to bytes in memory, then re-read.

Formats (``EXPORT_FORMATS``): ``step``, ``brep``, ``stl`` (binary), ``3mf`` (meshed with
build123d's ``Mesher``), ``svg`` and ``dxf`` (2D objects as drawn; a 3D object projected: SVG an
isometric view with hidden lines dotted, DXF the top view). Everything is written to a ``BytesIO``
and sent over the session socket: the jail has no writable file, the launcher alone writes under
the output directory. The bytes are then re-read here and measured (volume/bbox, shape count) so
the launcher can report a check without parsing the file.

Blocks: SVG with active content (``svgcheck``: script, event handler, external reference, DTD),
early; the launcher checks again. Does not block: a nonsensical model (it exports as is), the
time or memory a huge model takes (the launcher's timeout, RLIMIT_AS). The meta is untrusted: user
code may have patched this process; the launcher passes on validated numbers only. build123d,
OCP and numpy are imported in the writers and checks that use them.
"""
from __future__ import annotations

import io
import math
import struct

from jail.cad.measure import is_empty_shape, is_mesh, mesh_error
from jail.wire.caps import EXPORT_FORMATS
from jail.wire import svgcheck

THREE_D = ("step", "stl", "brep", "3mf")

# Meshing tolerances for STL/3MF (mm, radians): fine enough that the mesh volume
# is within ~0.5% of the exact one for ordinary parts.
LINEAR_DEFLECTION = 0.01
ANGULAR_DEFLECTION = 0.1


class ExportError(ValueError):
    """An export the user asked for that cannot be made; the message says why."""


def _num(x) -> float | None:
    try:
        f = float(x)
    except BaseException:  # noqa: BLE001
        return None
    return f if math.isfinite(f) else None


def _bbox_dict(mn, mx) -> dict:
    mn = [_num(v) for v in mn]
    mx = [_num(v) for v in mx]
    size = [None if a is None or b is None else b - a for a, b in zip(mn, mx)]
    return {"min": mn, "max": mx, "size": size}


def _shape_bbox(shape) -> dict:
    bb = shape.bounding_box()
    return _bbox_dict((bb.min.X, bb.min.Y, bb.min.Z), (bb.max.X, bb.max.Y, bb.max.Z))


def resolve(namespace: dict, name: str):
    """The build123d Shape bound to ``name`` (a builder gives its part/sketch/line)."""
    import build123d as b

    if not isinstance(name, str) or not name.isidentifier():
        raise ExportError(f"{name!r} is not a valid top-level name")
    if name not in namespace:
        raise ExportError(f"no top-level name {name!r} in the session")
    value = namespace[name]
    for cls, attr in ((b.BuildPart, "part"), (b.BuildSketch, "sketch"), (b.BuildLine, "line")):
        if isinstance(value, cls):
            value = getattr(value, attr)
            if value is None:
                raise ExportError(f"{name!r} is an empty {cls.__name__}")
            break
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, b.Shape) for v in value):
        value = b.Compound(list(value))
    if not isinstance(value, b.Shape):
        raise ExportError(f"{name!r} is a {type(value).__name__}, not a build123d shape")
    if is_empty_shape(value) or value.wrapped is None:
        raise ExportError(f"{name!r} is an empty {type(value).__name__} (no solids, faces or edges)")
    return value


def _is_3d(shape) -> bool:
    return len(shape.solids()) > 0 or (len(shape.faces()) > 0 and not _is_planar_2d(shape))


def _is_planar_2d(shape) -> bool:
    bb = shape.bounding_box()
    return abs(bb.size.Z) < 1e-9


# ------------------------------------------------------------------ writers
def _step(shape) -> bytes:
    from build123d import export_step
    buf = io.BytesIO()
    try:  # a fixed timestamp: the same model gives the same bytes
        export_step(shape, buf, timestamp="1970-01-01T00:00:00")
    except TypeError:  # build123d < 0.10 has no timestamp argument
        buf = io.BytesIO()
        export_step(shape, buf)
    return buf.getvalue()


def _brep(shape) -> bytes:
    from build123d import export_brep
    buf = io.BytesIO()
    if export_brep(shape, buf) is False:
        raise ExportError("BREP writer failed")
    return buf.getvalue()


def _stl_from_tessellation(shape) -> bytes:
    """Binary STL written with numpy from ``shape.tessellate`` (no file, no lib3mf)."""
    import numpy as np
    verts, tris = shape.tessellate(LINEAR_DEFLECTION, ANGULAR_DEFLECTION)
    v = np.array([[p.X, p.Y, p.Z] for p in verts], dtype=np.float64).reshape(-1, 3)
    t = np.array(tris, dtype=np.int64).reshape(-1, 3)
    a, b, c = v[t[:, 0]], v[t[:, 1]], v[t[:, 2]]
    n = np.cross(b - a, c - a)
    norm = np.linalg.norm(n, axis=1, keepdims=True)
    n = np.divide(n, norm, out=np.zeros_like(n), where=norm > 0)
    rec = np.zeros(len(t), dtype=np.dtype([("normal", "<f4", 3), ("v", "<f4", (3, 3)), ("attr", "<u2")]))
    rec["normal"] = n
    rec["v"] = np.stack([a, b, c], axis=1)
    header = b"build123d-launcher binary STL".ljust(80, b" ")
    return header + struct.pack("<I", len(t)) + rec.tobytes()


def _mesh(shape, kind: str) -> bytes:
    from build123d import Mesher
    if not hasattr(Mesher, "write_stream"):  # build123d < 0.10
        if kind == "stl":
            return _stl_from_tessellation(shape)
        raise ExportError("3MF export needs build123d >= 0.10 (Mesher.write_stream)")
    m = Mesher()
    m.add_shape(shape, linear_deflection=LINEAR_DEFLECTION, angular_deflection=ANGULAR_DEFLECTION)
    buf = io.BytesIO()
    m.write_stream(buf, kind)
    return buf.getvalue()


def _project(shape, view: str):
    """Visible and hidden edges of a 3D shape seen from ``view`` ('iso' or 'top')."""
    bb = shape.bounding_box()
    c = bb.center()
    d = max(bb.diagonal, 1.0) * 3
    if view == "top":
        origin, up = (c.X, c.Y, c.Z + d), (0, 1, 0)
    else:
        origin, up = (c.X + d, c.Y - d, c.Z + d), (0, 0, 1)
    return shape.project_to_viewport(origin, viewport_up=up, look_at=(c.X, c.Y, c.Z))


def _svg(shape) -> tuple[bytes, dict]:
    from build123d import ExportSVG, LineType
    exp = ExportSVG(margin=2)
    if _is_3d(shape):
        visible, hidden = _project(shape, "iso")
        exp.add_layer("visible")
        exp.add_layer("hidden", line_type=LineType.ISO_DOT)
        exp.add_shape(visible, layer="visible")
        if hidden:
            exp.add_shape(hidden, layer="hidden")
        extra = {"view": "isometric projection, hidden lines dotted"}
    else:
        exp.add_shape(shape)
        extra = {"view": "as drawn (XY plane)"}
    buf = io.BytesIO()
    exp.write(buf)
    data = buf.getvalue()
    try:  # the launcher checks again (this process is not trusted); this gives the error early
        svgcheck.check_svg(data)
    except svgcheck.SvgRefused as e:
        raise ExportError(f"the SVG writer produced content that is not allowed in an export: {e}") from None
    return data, extra


def _dxf(shape) -> tuple[bytes, dict]:
    from build123d import ExportDXF
    exp = ExportDXF()
    if _is_3d(shape):
        visible, _hidden = _project(shape, "top")
        exp.add_shape(visible)
        extra = {"view": "top view (looking down -Z), visible edges"}
    else:
        exp.add_shape(shape)
        extra = {"view": "as drawn (XY plane)"}
    buf = io.BytesIO()
    exp.write(buf)
    return buf.getvalue(), extra


# ------------------------------------------------------------------ re-import checks
def _mesh_check(vertices, triangles) -> dict:
    """Volume (divergence theorem) and bbox of a triangle mesh, with numpy."""
    import numpy as np
    v = np.asarray(vertices, dtype=np.float64).reshape(-1, 3)
    t = np.asarray(triangles, dtype=np.int64).reshape(-1, 3)
    if len(t) == 0 or len(v) == 0:
        return {"volume": 0.0, "bbox": None, "triangles": 0}
    a, b, c = v[t[:, 0]], v[t[:, 1]], v[t[:, 2]]
    vol = float(np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6.0)
    return {"volume": _num(abs(vol)), "bbox": _bbox_dict(v.min(axis=0), v.max(axis=0)), "triangles": int(len(t))}


def check_stl(data: bytes) -> dict:
    import numpy as np
    if len(data) < 84:
        raise ExportError("STL output is shorter than its header")
    (n,) = struct.unpack_from("<I", data, 80)
    if 84 + 50 * n != len(data):
        raise ExportError(f"binary STL says {n} triangles but has {len(data)} bytes")
    rec = np.dtype([("normal", "<f4", 3), ("v", "<f4", (3, 3)), ("attr", "<u2")])
    tri = np.frombuffer(data, dtype=rec, count=n, offset=84)["v"].reshape(-1, 3)
    return _mesh_check(tri, np.arange(len(tri)).reshape(-1, 3))


def check_3mf(data: bytes) -> dict:
    import numpy as np
    from build123d import Mesher
    m = Mesher()
    reader = m.model.QueryReader("3mf")
    reader.ReadFromBuffer(bytearray(data))
    verts, tris, off = [], [], 0
    it = m.model.GetMeshObjects()
    while it.MoveNext():
        mesh = it.GetCurrentMeshObject()
        vs = [p.Coordinates[0:3] for p in mesh.GetVertices()]
        ts = [[i + off for i in t.Indices[0:3]] for t in mesh.GetTriangleIndices()]
        verts.extend(vs)
        tris.extend(ts)
        off += len(vs)
    return _mesh_check(np.array(verts, dtype=np.float64), np.array(tris, dtype=np.int64))


def _exact_check(shape) -> dict:
    return {"volume": _num(shape.volume), "bbox": _shape_bbox(shape), "solids": len(shape.solids())}


def check_brep(data: bytes) -> dict:
    from OCP.BRep import BRep_Builder
    from OCP.BRepTools import BRepTools
    from OCP.TopoDS import TopoDS_Shape
    from build123d import Compound
    s = TopoDS_Shape()
    BRepTools.Read_s(s, io.BytesIO(data), BRep_Builder())
    if s.IsNull():
        raise ExportError("the BREP output could not be read back")
    return _exact_check(Compound.cast(s))


def check_step(data: bytes) -> dict:
    from OCP.IFSelect import IFSelect_ReturnStatus
    from OCP.STEPControl import STEPControl_Reader
    from build123d import Compound
    r = STEPControl_Reader()
    if r.ReadStream("export.step", io.BytesIO(data)) != IFSelect_ReturnStatus.IFSelect_RetDone:
        raise ExportError("the STEP output could not be read back")
    r.TransferRoots()
    s = r.OneShape()
    if s.IsNull():
        raise ExportError("the STEP output holds no shape")
    return _exact_check(Compound.cast(s))


def _shapes_bbox(shapes) -> dict | None:
    from build123d import Compound
    shapes = [s for s in shapes if s is not None and s.wrapped is not None]
    if not shapes:
        return None
    return _shape_bbox(Compound(shapes))


def check_svg(data: bytes) -> dict:
    from build123d import import_svg
    shapes = import_svg(io.StringIO(data.decode("utf-8")))
    return {"shapes": len(shapes), "bbox": _shapes_bbox(shapes)}


def check_dxf(data: bytes) -> dict:
    from build123d import import_dxf
    shapes = import_dxf(io.BytesIO(data))
    return {"shapes": len(shapes), "bbox": _shapes_bbox(shapes)}


CHECKS = {"step": check_step, "brep": check_brep, "stl": check_stl, "3mf": check_3mf,
          "svg": check_svg, "dxf": check_dxf}


def serialize(namespace: dict, name: str, fmt: str, max_bytes: int, check: bool = True) -> tuple[bytes, dict]:
    """Serialise ``namespace[name]`` as ``fmt``; return the bytes and a JSON-safe meta dict.

    meta: ``format``, ``source`` (the object's own volume/bbox), ``check`` (what the
    re-imported bytes measure; skipped when ``check`` is false: the export op's bytes are
    checked by the launcher's verifier, jail/cad/verify.py) and, for 2D formats, ``view``.
    Raises ExportError.
    """
    fmt = str(fmt).lower().lstrip(".")
    if fmt == "stp":
        fmt = "step"
    if fmt not in EXPORT_FORMATS:
        raise ExportError(f"unknown format {fmt!r}; use one of {', '.join(EXPORT_FORMATS)}")
    shape = resolve(namespace, name)
    # a mesh's triangles: STEP keeps none (an empty file), the SVG/DXF projection crashes on them
    if fmt in ("step", "svg", "dxf") and is_mesh(shape.wrapped):
        raise ExportError(f"{name!r} is {mesh_error(fmt.upper())}; STL, 3MF and BREP keep its triangles")
    source: dict = {"bbox": _shape_bbox(shape)}
    if shape.solids():
        source["volume"] = _num(shape.volume)
    elif fmt in THREE_D and fmt in ("stl", "3mf") and not shape.faces():
        raise ExportError(f"{name!r} has no faces: nothing to mesh for {fmt.upper()}")
    extra: dict = {}
    if fmt == "step":
        data = _step(shape)
    elif fmt == "brep":
        data = _brep(shape)
    elif fmt in ("stl", "3mf"):
        data = _mesh(shape, fmt)
    elif fmt == "svg":
        data, extra = _svg(shape)
    else:
        data, extra = _dxf(shape)
    if len(data) > max_bytes:
        raise ExportError(f"the {fmt.upper()} output is {len(data)} bytes, over the profile's "
                          f"max_export_bytes ({max_bytes})")
    if not data:
        raise ExportError(f"the {fmt.upper()} writer produced no data")
    if not check:
        return data, {"format": fmt, "source": source, **extra}
    try:
        check = CHECKS[fmt](data)
    except ExportError:
        raise
    except Exception as e:  # noqa: BLE001
        raise ExportError(f"the {fmt.upper()} output could not be read back: {type(e).__name__}: {e}") from None
    return data, {"format": fmt, "source": source, "check": check, **extra}


def warm_up(part) -> None:
    """Called in the zygote: load every exporter/importer (and lib3mf) once, so
    sessions fork with them imported and a jailed child never needs to dlopen."""
    ns = {"p": part}
    for fmt in EXPORT_FORMATS:
        try:
            serialize(ns, "p", fmt, max_bytes=1 << 30)
        except Exception:  # noqa: BLE001 - best effort; the real export reports errors
            pass

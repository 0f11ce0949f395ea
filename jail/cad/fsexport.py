"""build123d's path-taking exporters and importers, served to user code over the scratch directory.

``export_step(part, "p.step")``, ``ExportSVG.write``, ``Mesher().write`` ... write the same bytes
the real functions write (they are run on an ``io.BytesIO``, or for STL meshed the same way and
written here) into ``jail.cad.scratch``; ``import_step("part.step")``, ``import_stl``,
``import_brep``, ``import_svg``, ``import_dxf``, ``Mesher().read`` read a scratch file (an input the
launcher sent, or one the call wrote). A file object (``BytesIO``, an opened scratch file) is passed
to the real function unchanged. :func:`stand_ins` maps each real object's id to its stand-in for
the module views (``safe_builtins``); subclasses keep ``isinstance`` working.

Blocks: nothing by itself (scratch refuses names outside ``/scratch``). ``export_gltf`` is refused
(OCCT's glTF writer takes only a real path). Does not block the real functions reached with the
Python layers off: they then write real paths, which the OS layers refuse (EPERM/EACCES).
"""
from __future__ import annotations

import errno
import functools
import io
import os
import posixpath
import struct
import types

from jail.cad import scratch

__all__ = ["stand_ins"]


def _is_path(p) -> bool:
    return isinstance(p, (str, bytes, os.PathLike))


def _name(p) -> str:
    return os.fsdecode(os.fspath(p))


def _wrap(real, fn):
    functools.update_wrapper(fn, real)
    fn.__wrapped__ = None  # no way back to the real function
    return fn


def _via_buffer(real, pos: int):
    """A stand-in for ``real(obj, file_path, ...)`` that writes to a BytesIO, then to the scratch."""
    def export(*args, **kwargs):
        key = real.__code__.co_varnames[pos]
        target = args[pos] if len(args) > pos else kwargs.get(key)
        if not _is_path(target):
            return real(*args, **kwargs)
        scratch.current().resolve(target)  # refuse a name outside before the work
        buf = io.BytesIO()
        if len(args) > pos:
            args = (*args[:pos], buf, *args[pos + 1:])
        else:
            kwargs[key] = buf
        result = real(*args, **kwargs)
        scratch.current().write_bytes(target, buf.getvalue())
        return result
    return _wrap(real, export)


def _stl_bytes(shape, tolerance: float, angular_tolerance: float, ascii_format: bool) -> bytes:
    """STL of ``shape`` meshed as ``export_stl`` meshes it (BRepMesh, relative deflection)."""
    import numpy as np
    verts, tris = shape.tessellate(tolerance, angular_tolerance)
    v = np.array([tuple(p) for p in verts], dtype=np.float64).reshape(-1, 3)
    t = np.array(tris, dtype=np.int64).reshape(-1, 3)
    a, b, c = v[t[:, 0]], v[t[:, 1]], v[t[:, 2]]
    n = np.cross(b - a, c - a)
    norm = np.linalg.norm(n, axis=1, keepdims=True)
    n = np.divide(n, norm, out=np.zeros_like(n), where=norm > 0)
    if ascii_format:
        out = ["solid shape"]
        for k in range(len(t)):
            out.append(" facet normal {:e} {:e} {:e}\n  outer loop".format(*n[k]))
            out.extend("   vertex {:e} {:e} {:e}".format(*p) for p in (a[k], b[k], c[k]))
            out.append("  endloop\n endfacet")
        out.append("endsolid shape\n")
        return "\n".join(out).encode("ascii")
    rec = np.zeros(len(t), dtype=np.dtype([("normal", "<f4", 3), ("v", "<f4", (3, 3)), ("attr", "<u2")]))
    rec["normal"] = n
    rec["v"] = np.stack([a, b, c], axis=1)
    return b"build123d STL".ljust(80, b" ") + struct.pack("<I", len(t)) + rec.tobytes()


def _export_stl(real):
    def export_stl(to_export, file_path, tolerance=1e-3, angular_tolerance=0.1, ascii_format=False):
        if not _is_path(file_path):
            raise TypeError("export_stl writes to a file name (in the scratch directory /scratch)")
        sc = scratch.current()
        parent = posixpath.dirname(sc.resolve(file_path))
        if parent not in sc.dirs:
            raise FileNotFoundError(errno.ENOENT, "No such directory in the scratch directory",
                                    posixpath.dirname(_name(file_path)))
        data = _stl_bytes(to_export, tolerance, angular_tolerance, ascii_format)
        if len(data) <= 84 and not ascii_format:
            return False  # nothing to mesh: what the real writer answers
        sc.write_bytes(file_path, data)
        return True
    return _wrap(real, export_stl)


def _export_gltf(real):
    def export_gltf(*args, **kwargs):
        raise PermissionError(errno.EPERM, "export_gltf is not available here: OCCT's glTF writer writes only "
                              "to a real file; use export_step, export_stl, export_brep or Mesher (3mf)")
    return _wrap(real, export_gltf)


def _writer_class(real_cls):
    """A subclass of ExportSVG/ExportDXF whose ``write(path)`` goes to the scratch directory."""
    real_write = real_cls.write

    def write(self, path, *args, **kwargs):
        if not _is_path(path):
            return real_write(self, path, *args, **kwargs)
        scratch.current().resolve(path)
        buf = io.BytesIO()
        result = real_write(self, buf, *args, **kwargs)
        scratch.current().write_bytes(path, buf.getvalue())
        return result
    functools.update_wrapper(write, real_write)
    write.__wrapped__ = None
    return types.new_class(real_cls.__name__, (real_cls,), {},
                           lambda ns: ns.update({"write": write, "__module__": real_cls.__module__,
                                                 "__qualname__": real_cls.__qualname__, "__doc__": real_cls.__doc__}))


class _Reader:
    """lib3mf reader whose ReadFromFile reads the scratch file's bytes (Mesher.read)."""

    def __init__(self, real, data: bytes):
        self._real, self._data = real, data

    def ReadFromFile(self, _name):  # noqa: N802 - lib3mf's name
        return self._real.ReadFromBuffer(self._data)

    def __getattr__(self, name):
        return getattr(self._real, name)


class _Model:
    def __init__(self, real, data: bytes):
        self._real, self._data = real, data

    def QueryReader(self, kind):  # noqa: N802 - lib3mf's name
        return _Reader(self._real.QueryReader(kind), self._data)

    def __getattr__(self, name):
        return getattr(self._real, name)


def _mesher_class(real_cls):
    real_read, real_write = real_cls.read, real_cls.write

    def write(self, file_name):
        ext = posixpath.splitext(_name(file_name))[1]
        if ext not in (".3mf", ".stl"):
            raise ValueError(f"Unknown file format {ext}")
        scratch.current().resolve(file_name)
        buf = io.BytesIO()
        self.write_stream(buf, ext[1:])
        scratch.current().write_bytes(file_name, buf.getvalue())

    def read(self, file_name):
        ext = posixpath.splitext(_name(file_name))[1]
        if ext not in (".3mf", ".stl"):
            raise ValueError(f"Unknown file format {ext}")
        data = scratch.current().read_bytes(file_name)
        model = self.model
        self.model = _Model(model, data)
        try:
            return real_read(self, file_name)
        finally:
            self.model = model
    for fn, real in ((write, real_write), (read, real_read)):
        functools.update_wrapper(fn, real)
        fn.__wrapped__ = None
    return types.new_class(real_cls.__name__, (real_cls,), {},
                           lambda ns: ns.update({"write": write, "read": read, "__module__": real_cls.__module__,
                                                 "__qualname__": real_cls.__qualname__, "__doc__": real_cls.__doc__}))


def _rebound(real, **names):
    """``real`` with some of its module's globals replaced (no free variables: checked)."""
    if real.__code__.co_freevars:
        return None
    g = dict(real.__globals__)
    g.update(names)
    fn = types.FunctionType(real.__code__, g, real.__name__, real.__defaults__)
    fn.__kwdefaults__ = real.__kwdefaults__
    return fn


def _import_step(real):
    from OCP.STEPCAFControl import STEPCAFControl_Reader

    class Reader(STEPCAFControl_Reader):
        def ReadFile(self, name):  # noqa: N802 - OCCT's name
            return self.ReadStream(name, io.BytesIO(scratch.current().read_bytes(name)))

    fake_os = types.SimpleNamespace(path=types.SimpleNamespace(exists=lambda p: scratch.current().isfile(p)))
    inner = _rebound(real, STEPCAFControl_Reader=Reader, os=fake_os)

    def import_step(filename):
        if not _is_path(filename) or inner is None:
            return real(filename)
        scratch.current().node(filename)  # FileNotFoundError / PermissionError, clearly
        return inner(filename)
    return _wrap(real, import_step)


def _import_brep(real):
    def import_brep(file_name):
        from OCP.BRep import BRep_Builder
        from OCP.BRepTools import BRepTools
        from OCP.TopoDS import TopoDS_Shape
        from build123d import Compound
        data = scratch.current().read_bytes(file_name)
        shape = TopoDS_Shape()
        BRepTools.Read_s(shape, io.BytesIO(data), BRep_Builder())
        if shape.IsNull():
            raise ValueError(f"Could not import {_name(file_name)}")
        return Compound.cast(shape)
    return _wrap(real, import_brep)


def _triangulation(data: bytes):
    """A Poly_Triangulation of an STL's bytes, nodes merged (what RWStl.ReadFile_s returns)."""
    from OCP.gp import gp_Pnt
    from OCP.Poly import Poly_Triangle, Poly_Triangulation
    from jail.cad import readers
    try:
        tris = readers._stl_triangles(data)  # noqa: SLF001 - the one STL parser of the jail
    except readers.ImportFailed as e:
        raise ValueError(f"Could not import the STL file: {e}") from None
    index: dict = {}
    faces = []
    for t in tris:
        faces.append(tuple(index.setdefault(tuple(p), len(index) + 1) for p in t))
    pt = Poly_Triangulation(len(index), len(faces), False)
    for p, i in index.items():
        pt.SetNode(i, gp_Pnt(*p))
    for k, (i, j, m) in enumerate(faces, 1):
        pt.SetTriangle(k, Poly_Triangle(i, j, m))
    return pt


def _import_stl(real):
    fake = types.SimpleNamespace(ReadFile_s=lambda name: _triangulation(scratch.current().read_bytes(name)))
    inner = _rebound(real, RWStl=fake)

    def import_stl(file_name, model_unit=None):
        if inner is None:
            return real(file_name) if model_unit is None else real(file_name, model_unit)
        scratch.current().node(file_name)
        return inner(file_name) if model_unit is None else inner(file_name, model_unit)
    return _wrap(real, import_stl)


def _reading(real, pos: int = 0):
    """A stand-in for an importer that takes a stream: a path becomes a BytesIO of the scratch file."""
    def importer(*args, **kwargs):
        key = real.__code__.co_varnames[pos]
        target = args[pos] if len(args) > pos else kwargs.get(key)
        if _is_path(target):
            buf = io.BytesIO(scratch.current().read_bytes(target))
            if len(args) > pos:
                args = (*args[:pos], buf, *args[pos + 1:])
            else:
                kwargs[key] = buf
        return real(*args, **kwargs)
    return _wrap(real, importer)


def _svg_buildline(real):
    import svgpathtools

    def svg2paths(name, *a, **kw):
        return svgpathtools.svg2paths(io.StringIO(scratch.current().read_bytes(name).decode("utf-8")), *a, **kw)
    fake = types.SimpleNamespace(**{k: v for k, v in vars(svgpathtools).items() if not k.startswith("_")})
    fake.svg2paths = svg2paths
    inner = _rebound(real, svgpathtools=fake)

    def import_svg_as_buildline_code(file_name, *args, **kwargs):
        if inner is None or not _is_path(file_name):
            return real(file_name, *args, **kwargs)
        scratch.current().node(file_name)
        return inner(file_name, *args, **kwargs)
    return _wrap(real, import_svg_as_buildline_code)


_CACHE: dict[int, object] = {}


def stand_ins() -> dict[int, object]:
    """``{id(real): stand-in}`` for build123d's file-taking functions and classes (made once)."""
    if _CACHE:
        return _CACHE
    import build123d as b
    makers = {
        "export_step": lambda r: _via_buffer(r, 1), "export_brep": lambda r: _via_buffer(r, 1),
        "export_obj": lambda r: _via_buffer(r, 1), "export_stl": _export_stl, "export_gltf": _export_gltf,
        "ExportSVG": _writer_class, "ExportDXF": _writer_class, "Mesher": _mesher_class,
        "import_step": _import_step, "import_brep": _import_brep, "import_stl": _import_stl,
        "import_svg": _reading, "import_dxf": _reading, "import_svg_as_buildline_code": _svg_buildline,
    }
    for name, make in makers.items():
        real = getattr(b, name, None)
        if real is None:
            continue
        try:
            _CACHE[id(real)] = make(real)
        except Exception:  # noqa: BLE001 - a build123d without this shape of function: served as is
            continue
    return _CACHE

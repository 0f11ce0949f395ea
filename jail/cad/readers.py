"""Parsers of the CAD files a user imports: bytes in memory to an OCCT / build123d shape.

Nothing is written and no path is opened (the jail has no file of the user's and no writable
path). STEP (``STEPControl_Reader.ReadStream``) and BREP (``BRepTools.Read_s``) read a
``BytesIO``; STL (binary and ASCII) and 3MF (zip + XML, DOCTYPE refused, members read with a
decompressed-size cap) are parsed here into triangles and built into a shell with shared edges, a
solid when it closes (else sewn as ``Mesher().read`` does: a dropped degenerate triangle leaves a
T-junction only sewing closes), the open shell otherwise; SVG goes to build123d's ``import_svg``
after a DOCTYPE-free parse; ASCII DXF LINE, CIRCLE, ARC, LWPOLYLINE (bulges as arcs) and
POLYLINE/VERTEX become edges.

A refusal is an :class:`ImportFailed` with a code of ``jail.wire.importfail.REASONS`` and at
most a line and column: never the parser's own message, which may quote the file.

Blocks: file content in a refusal. Nothing else by itself. A hostile file may crash or hang a
parser or eat memory: the next parsing it then dies, is killed at the wall-clock limit or hits
RLIMIT_AS / the cgroup, and is discarded; the head (the session state) never ran the parser. The
caps (triangles, member sizes) only make a clear error likelier than a timeout. OCP and build123d
are imported in the readers that use them.
"""
from __future__ import annotations

import io
import math
import struct
import zipfile

from jail.wire.importfail import (MAX_3MF_MEMBER, MAX_3MF_MODELS, MAX_DXF_ENTITIES, MAX_KINDS, MAX_TRIANGLES,
                                  REASONS, dxf_kind)

__all__ = ["ImportFailed", "READERS", "load", "to_build123d", "mesh_to_shape", "read_step", "read_brep",
           "read_stl", "read_3mf", "read_svg", "read_dxf"]


class ImportFailed(ValueError):
    """The bytes could not be parsed as the format: ``reason`` (a code of REASONS), where (``line``,
    ``col``: ints or None) and for DXF the entity names involved (``kinds``, standard names only).
    Its text is the table's, never the parser's."""

    def __init__(self, reason: str, *, line: int | None = None, col: int | None = None, kinds=()):
        if reason not in REASONS:
            reason = "reader-failed"
        self.reason, self.line, self.col = reason, line, col
        self.kinds = sorted({dxf_kind(k) for k in kinds})[:MAX_KINDS]
        where = f" (line {line})" if line else ""
        super().__init__(REASONS[reason].replace("{fmt}", "input") + where)


# ------------------------------------------------------------------ B-rep formats
def read_step(data: bytes):
    from OCP.IFSelect import IFSelect_RetDone
    from OCP.STEPControl import STEPControl_Reader
    r = STEPControl_Reader()
    status = r.ReadStream("input.step", io.BytesIO(data))
    if status != IFSelect_RetDone:
        raise ImportFailed("unreadable")
    if r.TransferRoots() == 0:
        raise ImportFailed("no-shape")
    shape = r.OneShape()
    if shape is None or shape.IsNull():
        raise ImportFailed("no-shape")
    return shape


def read_brep(data: bytes):
    from OCP.BRep import BRep_Builder
    from OCP.BRepTools import BRepTools
    from OCP.TopoDS import TopoDS_Shape
    shape = TopoDS_Shape()
    try:
        BRepTools.Read_s(shape, io.BytesIO(data), BRep_Builder())
    except Exception:  # noqa: BLE001 - OCCT raises Standard_Failure subclasses (its text may quote the file)
        raise ImportFailed("unreadable") from None
    if shape.IsNull():
        raise ImportFailed("no-shape")
    return shape


# ------------------------------------------------------------------ meshes
def _stl_triangles(data: bytes) -> list[tuple]:
    if len(data) >= 84:
        n = struct.unpack_from("<I", data, 80)[0]
        if 84 + 50 * n == len(data):
            if n > MAX_TRIANGLES:
                raise ImportFailed("too-many-triangles")
            import numpy as np
            rec = np.frombuffer(data, dtype=np.dtype([("n", "<f4", 3), ("v", "<f4", (3, 3)), ("a", "<u2")]),
                                count=n, offset=84)
            v = rec["v"].astype(float)
            if not np.isfinite(v).all():
                raise ImportFailed("non-finite")
            return [tuple(map(tuple, t)) for t in v.tolist()]
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        raise ImportFailed("not-stl") from None
    if not text.lstrip().lower().startswith("solid"):
        raise ImportFailed("not-ascii-stl")
    tris, cur = [], []
    for no, line in enumerate(text.splitlines(), 1):
        w = line.split()
        if w and w[0].lower() == "vertex":
            if len(w) != 4:
                raise ImportFailed("bad-vertex", line=no)
            try:
                p = tuple(float(x) for x in w[1:])
            except ValueError:
                raise ImportFailed("bad-number", line=no) from None
            if not all(math.isfinite(x) for x in p):
                raise ImportFailed("non-finite", line=no)
            cur.append(p)
            if len(cur) == 3:
                tris.append(tuple(cur))
                cur = []
                if len(tris) > MAX_TRIANGLES:
                    raise ImportFailed("too-many-triangles")
    if not tris:
        raise ImportFailed("no-triangles")
    return tris


NS_3MF = "http://schemas.microsoft.com/3dmanufacturing/core/2015/02"
_UNITS_3MF = {"micron": 0.001, "millimeter": 1.0, "centimeter": 10.0, "inch": 25.4, "foot": 304.8, "meter": 1000.0}


def _read_member(z: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    out, n = [], 0
    with z.open(info) as f:
        while True:
            b = f.read(1 << 20)
            if not b:
                return b"".join(out)
            n += len(b)
            if n > MAX_3MF_MEMBER:
                raise ImportFailed("member-too-large")
            out.append(b)


def _no_doctype(parser) -> None:
    def refuse(*_a):
        raise ImportFailed("doctype")
    parser.StartDoctypeDeclHandler = refuse
    parser.EntityDeclHandler = refuse


def _3mf_triangles(data: bytes) -> list[tuple]:
    from xml.parsers import expat
    try:
        z = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError, EOFError, OSError):  # their text may quote member names
        raise ImportFailed("not-zip") from None
    models = [i for i in z.infolist() if i.filename.lower().endswith(".model")]
    if not models:
        raise ImportFailed("no-model")
    if len(models) > MAX_3MF_MODELS:
        raise ImportFailed("too-many-models")
    objects: dict[str, tuple[list, list]] = {}
    items: list[tuple[str, list | None]] = []
    scale = [1.0]
    for info in models:
        try:
            xml = _read_member(z, info)
        except ImportFailed:
            raise
        except (zipfile.BadZipFile, ValueError, EOFError, OSError, NotImplementedError, RuntimeError):
            raise ImportFailed("bad-zip") from None  # a bad CRC, an unsupported method or encryption
        p = expat.ParserCreate(namespace_separator=" ")
        _no_doctype(p)
        state = {"obj": None}

        def start(tag, a, state=state):
            local = tag.rsplit(" ", 1)[-1]
            if local == "model":
                scale[0] = _UNITS_3MF.get(a.get("unit", "millimeter"), 1.0)
            elif local == "object":
                state["obj"] = a.get("id", "")
                objects[state["obj"]] = ([], [])
            elif local == "vertex" and state["obj"] is not None:
                objects[state["obj"]][0].append((float(a["x"]), float(a["y"]), float(a["z"])))
            elif local == "triangle" and state["obj"] is not None:
                tri = objects[state["obj"]][1]
                tri.append((int(a["v1"]), int(a["v2"]), int(a["v3"])))
                if len(tri) > MAX_TRIANGLES:
                    raise ImportFailed("too-many-triangles")
            elif local == "item":
                t = a.get("transform")
                items.append((a.get("objectid", ""), [float(x) for x in t.split()] if t else None))

        def end(tag, state=state):
            if tag.rsplit(" ", 1)[-1] == "object":
                state["obj"] = None

        p.StartElementHandler, p.EndElementHandler = start, end
        try:
            p.Parse(xml, True)
        except expat.ExpatError as e:
            raise ImportFailed("bad-xml", line=_int(e.lineno), col=_int(e.offset)) from None
        except ImportFailed:
            raise
        except (KeyError, ValueError, TypeError, AttributeError):  # their text quotes the attribute or value
            raise ImportFailed("bad-mesh", line=_int(p.CurrentLineNumber)) from None
    if not items:
        items = [(k, None) for k in objects]
    tris: list[tuple] = []
    s = scale[0]
    for oid, m in items:
        if oid not in objects:
            continue
        verts, faces = objects[oid]
        for i, j, k in faces:
            try:
                pts = [verts[i], verts[j], verts[k]]
            except IndexError:
                raise ImportFailed("missing-vertex") from None
            if m is not None and len(m) == 12:
                pts = [(x * m[0] + y * m[3] + z * m[6] + m[9], x * m[1] + y * m[4] + z * m[7] + m[10],
                        x * m[2] + y * m[5] + z * m[8] + m[11]) for x, y, z in pts]
            tris.append(tuple((x * s, y * s, z * s) for x, y, z in pts))
            if len(tris) > MAX_TRIANGLES:
                raise ImportFailed("too-many-triangles")
    if not tris:
        raise ImportFailed("no-triangles")
    if not all(math.isfinite(c) for t in tris for p in t for c in p):
        raise ImportFailed("non-finite")
    return tris


def mesh_to_shape(tris: list[tuple]):
    """A solid from the triangles when they close into a shell, else the open shell.

    Built directly with shared topology (one vertex per distinct point, one edge per vertex pair,
    each triangle a planar face whose normal follows its winding), so a closed mesh is a closed
    shell without sewing (sewing costs ~1 s per thousand triangles); a solid whose volume comes out
    negative (inward winding) is reversed."""
    from OCP.BRep import BRep_Builder, BRep_Tool
    from OCP.BRepBuilderAPI import (BRepBuilderAPI_MakeEdge, BRepBuilderAPI_MakeFace, BRepBuilderAPI_MakeSolid,
                                    BRepBuilderAPI_MakeVertex, BRepBuilderAPI_MakeWire)
    from OCP.gp import gp_Dir, gp_Pln, gp_Pnt
    from OCP.TopoDS import TopoDS_Shell
    vid: dict = {}
    verts: list = []
    faces: list = []
    for t in tris:
        idx = []
        for p in t:
            i = vid.get(p)
            if i is None:
                i = vid[p] = len(verts)
                verts.append(p)
            idx.append(i)
        if len(set(idx)) == 3:
            faces.append(idx)
    if not faces:
        raise ImportFailed("no-usable-triangle")
    tv = [BRepBuilderAPI_MakeVertex(gp_Pnt(*p)).Vertex() for p in verts]
    edges: dict = {}

    def edge(a, b):
        key = (a, b) if a < b else (b, a)
        e = edges.get(key)
        if e is None:
            e = edges[key] = BRepBuilderAPI_MakeEdge(tv[key[0]], tv[key[1]]).Edge()
        return e

    bld = BRep_Builder()
    shell = TopoDS_Shell()
    bld.MakeShell(shell)
    added = 0
    for a, b, c in faces:
        pa, pb, pc = verts[a], verts[b], verts[c]
        u = (pb[0] - pa[0], pb[1] - pa[1], pb[2] - pa[2])
        v = (pc[0] - pa[0], pc[1] - pa[1], pc[2] - pa[2])
        n = (u[1] * v[2] - u[2] * v[1], u[2] * v[0] - u[0] * v[2], u[0] * v[1] - u[1] * v[0])
        if n[0] * n[0] + n[1] * n[1] + n[2] * n[2] < 1e-24:
            continue  # degenerate (collinear) triangle
        w = BRepBuilderAPI_MakeWire(edge(a, b), edge(b, c), edge(c, a))
        if not w.IsDone():
            continue
        f = BRepBuilderAPI_MakeFace(gp_Pln(gp_Pnt(*pa), gp_Dir(*n)), w.Wire(), True)
        if f.IsDone():
            bld.Add(shell, f.Face())
            added += 1
    if not added:
        raise ImportFailed("no-usable-triangle")
    closed = BRep_Tool.IsClosed_s(shell)
    shell.Closed(closed)
    if not closed:  # e.g. a degenerate (collinear) triangle dropped: a T-junction that sewing closes
        return _sewn_solid(shell) if added <= SEW_MAX_FACES else shell
    ms = BRepBuilderAPI_MakeSolid(shell)
    if not ms.IsDone():
        return shell
    return _outward(ms.Solid())


SEW_MAX_FACES = 200_000  # an open mesh of more triangles stays a shell (sewing would outlast the import's limit)


def _outward(solid):
    """``solid`` reversed when its volume comes out negative (inward winding)."""
    from OCP.BRepGProp import BRepGProp
    from OCP.GProp import GProp_GProps
    props = GProp_GProps()
    BRepGProp.VolumeProperties_s(solid, props)
    if props.Mass() < 0:
        solid.Reverse()
    return solid


def _sewn_solid(shell):
    """The solid ``Mesher().read`` gives for a mesh that does not close by shared edges alone: the shell
    sewn (1e-6, as Mesher), its largest closed shell the outside and the other closed shells voids.
    The shell unchanged when the sewn result does not close."""
    from OCP.Bnd import Bnd_Box
    from OCP.BRep import BRep_Tool
    from OCP.BRepBndLib import BRepBndLib
    from OCP.BRepBuilderAPI import BRepBuilderAPI_MakeSolid, BRepBuilderAPI_Sewing
    from OCP.TopAbs import TopAbs_SHELL
    from OCP.TopExp import TopExp_Explorer
    from OCP.TopoDS import TopoDS
    sew = BRepBuilderAPI_Sewing(1e-6)
    sew.Add(shell)
    sew.Perform()
    shells = []
    ex = TopExp_Explorer(sew.SewedShape(), TopAbs_SHELL)
    while ex.More():
        shells.append(TopoDS.Shell(ex.Current()))
        ex.Next()
    if not shells or not all(BRep_Tool.IsClosed_s(s) for s in shells):
        return shell

    def extent(s) -> float:
        box = Bnd_Box()
        BRepBndLib.Add_s(s, box)
        lo, hi = box.CornerMin(), box.CornerMax()
        return (hi.X() - lo.X()) * (hi.Y() - lo.Y()) * (hi.Z() - lo.Z())
    shells.sort(key=extent, reverse=True)
    for s in shells:
        s.Closed(True)
    ms = BRepBuilderAPI_MakeSolid(shells[0])
    for inner in shells[1:]:
        ms.Add(inner)
    if not ms.IsDone():
        return shell
    return _outward(ms.Solid())


# ------------------------------------------------------------------ 2D formats
def read_svg(data: bytes):
    from xml.parsers import expat
    p = expat.ParserCreate()
    _no_doctype(p)
    try:
        p.Parse(data, True)  # well-formed, no DTD: only then is it handed to the SVG reader
    except expat.ExpatError as e:
        raise ImportFailed("bad-xml", line=_int(e.lineno), col=_int(e.offset)) from None
    from build123d import Compound, import_svg
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ImportFailed("not-utf8") from None
    shapes = import_svg(io.StringIO(text))
    if not shapes:
        raise ImportFailed("no-svg-shapes")
    return Compound(list(shapes))


def _int(x) -> int | None:
    return x if isinstance(x, int) and not isinstance(x, bool) and 0 <= x <= 10 ** 9 else None


def _dxf_pairs(text: str):
    """(group code, value, the value's line number) of an ASCII DXF."""
    lines = text.splitlines()
    if len(lines) % 2:
        lines = lines[:-1]
    for i in range(0, len(lines), 2):
        try:
            code = int(lines[i].strip())
        except ValueError:
            raise ImportFailed("bad-group-code", line=i + 1) from None
        yield code, lines[i + 1].strip(), i + 2


def _dxf_float(v: str, line: int, kind: str) -> float:
    try:
        f = float(v)
    except ValueError:  # its text quotes the value
        raise ImportFailed("bad-number", line=line, kinds=(kind,)) from None
    if not math.isfinite(f):
        raise ImportFailed("non-finite", line=line, kinds=(kind,))
    return f


def read_dxf(data: bytes):
    from build123d import Compound, Edge, Plane, Vector
    if data.startswith(b"AutoCAD Binary DXF"):
        raise ImportFailed("binary-dxf")
    text = data.decode("utf-8", "replace")
    entities: list[tuple[str, list, int]] = []
    in_entities = False
    cur = None
    prev = None
    for code, val, no in _dxf_pairs(text):
        if code == 2 and prev == (0, "SECTION"):
            in_entities = val == "ENTITIES"
        prev = (code, val)
        if not in_entities:
            continue
        if code == 0:
            cur = (val, [], no)
            entities.append(cur)
            if len(entities) > MAX_DXF_ENTITIES:
                raise ImportFailed("too-many-entities")
        elif cur is not None:
            cur[1].append((code, val, no))

    def num(ent, code, default=0.0):
        for c, v, no in ent[1]:
            if c == code:
                return _dxf_float(v, no, ent[0])
        return default

    edges = []

    def seg(p, q, bulge=0.0):
        if math.dist(p, q) < 1e-9:
            return
        if abs(bulge) < 1e-12:
            edges.append(Edge.make_line(Vector(*p, 0), Vector(*q, 0)))
            return
        # the arc's midpoint lies at the sagitta (bulge * chord / 2) from the chord's midpoint
        mx, my = (p[0] + q[0]) / 2, (p[1] + q[1]) / 2
        dx, dy = q[0] - p[0], q[1] - p[1]
        sag = bulge * math.hypot(dx, dy) / 2
        nx, ny = dy / math.hypot(dx, dy), -dx / math.hypot(dx, dy)
        mid = (mx + nx * sag, my + ny * sag)
        edges.append(Edge.make_three_point_arc(Vector(*p, 0), Vector(*mid, 0), Vector(*q, 0)))

    unsupported: set[str] = set()
    i = 0
    while i < len(entities):
        ent = entities[i]
        kind = ent[0]
        try:
            if kind == "LINE":
                seg((num(ent, 10), num(ent, 20)), (num(ent, 11), num(ent, 21)))
            elif kind == "CIRCLE":
                r = num(ent, 40)
                if r > 0:
                    edges.append(Edge.make_circle(r, Plane((num(ent, 10), num(ent, 20), 0))))
            elif kind == "ARC":
                r = num(ent, 40)
                if r > 0:
                    edges.append(Edge.make_circle(r, Plane((num(ent, 10), num(ent, 20), 0)),
                                                  start_angle=num(ent, 50), end_angle=num(ent, 51)))
            elif kind == "LWPOLYLINE":
                pts, bulges = [], []
                for c, v, no in ent[1]:
                    if c == 10:
                        pts.append([_dxf_float(v, no, kind), 0.0])
                        bulges.append(0.0)
                    elif c == 20 and pts:
                        pts[-1][1] = _dxf_float(v, no, kind)
                    elif c == 42 and bulges:
                        bulges[-1] = _dxf_float(v, no, kind)
                closed = int(num(ent, 70)) & 1
                for k in range(len(pts) - 1 + closed):
                    seg(tuple(pts[k]), tuple(pts[(k + 1) % len(pts)]), bulges[k])
            elif kind == "POLYLINE":
                closed = int(num(ent, 70)) & 1
                pts, bulges = [], []
                j = i + 1
                while j < len(entities) and entities[j][0] == "VERTEX":
                    pts.append((num(entities[j], 10), num(entities[j], 20)))
                    bulges.append(num(entities[j], 42))
                    j += 1
                for k in range(len(pts) - 1 + closed):
                    seg(pts[k], pts[(k + 1) % len(pts)], bulges[k])
                i = j
                continue
            elif kind not in ("SEQEND", "VERTEX", "ENDSEC", "EOF", "POINT"):
                unsupported.add(kind)
        except ImportFailed:
            raise
        except (ValueError, OverflowError):  # e.g. OCCT refusing a degenerate arc; its text may quote values
            raise ImportFailed("bad-entity", line=ent[2], kinds=(kind,)) from None
        i += 1
    if not edges:
        raise ImportFailed("no-geometry", kinds=unsupported)
    return Compound(edges)


# ------------------------------------------------------------------ by format
def read_stl(data: bytes):
    return mesh_to_shape(_stl_triangles(data))


def read_3mf(data: bytes):
    return mesh_to_shape(_3mf_triangles(data))


READERS = {"step": read_step, "brep": read_brep, "svg": read_svg, "dxf": read_dxf, "stl": read_stl,
           "3mf": read_3mf}


def load(data: bytes, fmt: str):
    """A build123d object parsed from ``data`` (ImportFailed with a reason otherwise)."""
    reader = READERS.get(fmt)
    if reader is None:
        raise ImportFailed("bad-request")
    shape = reader(data)
    if hasattr(shape, "wrapped"):  # already a build123d object (SVG, DXF)
        return shape
    return to_build123d(shape)


def to_build123d(topods):
    """The build123d class for an OCCT shape; a compound of exactly one solid becomes that solid."""
    from build123d import Compound
    from build123d.topology import Shape
    obj = Shape.cast(topods)
    if isinstance(obj, Compound):
        solids = obj.solids()
        if len(solids) == 1 and len(list(obj)) == 1:
            return solids[0]
    return obj

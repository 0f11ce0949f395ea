"""Parse a user's CAD file from bytes, inside the jail (the ``import`` op).

The launcher read the file (launcher/inputs.py) and sent its bytes; here they
are parsed in memory, in the session's ``next`` process, with every jail layer
already applied. Nothing is written anywhere and no path is opened: there is
no file of the user's in the jail's mount view, and no writable path at all.

* STEP: ``STEPControl_Reader.ReadStream`` on a ``BytesIO``;
* BREP: ``BRepTools.Read_s`` on a ``BytesIO``;
* STL (binary and ASCII) and 3MF (zip + XML mesh; DOCTYPE refused, members
  read with a decompressed-size cap): parsed here into triangles, built into
  a shell with shared edges, made a solid when it closes, else kept as a shell;
* SVG: build123d's ``import_svg`` on a ``StringIO`` (DOCTYPE refused first);
* DXF (ASCII): LINE, CIRCLE, ARC, LWPOLYLINE (straight segments and bulges
  as arcs), POLYLINE/VERTEX and POINT-free geometry become edges.

What it blocks: nothing by itself. A hostile file may crash or hang the
parser or eat memory: the ``next`` then dies, is killed at the call's
wall-clock limit, or hits RLIMIT_AS / the session cgroup, and the launcher
discards it; the head (the session state) never ran the parser. Caps here
(triangle count, member sizes) only make a clear error more likely than a
timeout.
"""
from __future__ import annotations

import io
import math
import struct
import zipfile

MAX_TRIANGLES = 500_000
MAX_3MF_MEMBER = 256 * 1024 * 1024   # a 500k-triangle model is ~60 MB of XML
MAX_3MF_MODELS = 16
MAX_DXF_ENTITIES = 200_000


class ImportFailed(ValueError):
    """The bytes could not be parsed as the format; the message says why."""


# ------------------------------------------------------------------ B-rep formats
def read_step(data: bytes):
    from OCP.IFSelect import IFSelect_RetDone
    from OCP.STEPControl import STEPControl_Reader
    r = STEPControl_Reader()
    status = r.ReadStream("input.step", io.BytesIO(data))
    if status != IFSelect_RetDone:
        raise ImportFailed(f"not a readable STEP file (reader status {status.name})")
    if r.TransferRoots() == 0:
        raise ImportFailed("the STEP file holds no shape that could be transferred")
    shape = r.OneShape()
    if shape is None or shape.IsNull():
        raise ImportFailed("the STEP file holds no shape")
    return shape


def read_brep(data: bytes):
    from OCP.BRep import BRep_Builder
    from OCP.BRepTools import BRepTools
    from OCP.TopoDS import TopoDS_Shape
    shape = TopoDS_Shape()
    try:
        BRepTools.Read_s(shape, io.BytesIO(data), BRep_Builder())
    except Exception as e:  # noqa: BLE001 - OCCT raises Standard_Failure subclasses
        raise ImportFailed(f"not a readable BREP file ({type(e).__name__}: {str(e)[:200]})") from None
    if shape.IsNull():
        raise ImportFailed("not a readable BREP file (no shape)")
    return shape


# ------------------------------------------------------------------ meshes
def _stl_triangles(data: bytes) -> list[tuple]:
    if len(data) >= 84:
        n = struct.unpack_from("<I", data, 80)[0]
        if 84 + 50 * n == len(data):
            if n > MAX_TRIANGLES:
                raise ImportFailed(f"the STL has {n} triangles; the limit is {MAX_TRIANGLES}")
            import numpy as np
            rec = np.frombuffer(data, dtype=np.dtype([("n", "<f4", 3), ("v", "<f4", (3, 3)), ("a", "<u2")]),
                                count=n, offset=84)
            v = rec["v"].astype(float)
            if not np.isfinite(v).all():
                raise ImportFailed("the STL has non-finite coordinates")
            return [tuple(map(tuple, t)) for t in v.tolist()]
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        raise ImportFailed("not an STL file (neither binary with a matching triangle count nor ASCII)") from None
    if not text.lstrip().lower().startswith("solid"):
        raise ImportFailed("not an STL file (ASCII STL starts with 'solid')")
    tris, cur = [], []
    for line in text.splitlines():
        w = line.split()
        if w and w[0].lower() == "vertex":
            if len(w) != 4:
                raise ImportFailed("bad 'vertex' line in the ASCII STL")
            try:
                p = tuple(float(x) for x in w[1:])
            except ValueError:
                raise ImportFailed("bad number in the ASCII STL") from None
            if not all(math.isfinite(x) for x in p):
                raise ImportFailed("the STL has non-finite coordinates")
            cur.append(p)
            if len(cur) == 3:
                tris.append(tuple(cur))
                cur = []
                if len(tris) > MAX_TRIANGLES:
                    raise ImportFailed(f"the STL has more than {MAX_TRIANGLES} triangles")
    if not tris:
        raise ImportFailed("the STL holds no triangles")
    return tris


_NS_3MF = "http://schemas.microsoft.com/3dmanufacturing/core/2015/02"
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
                raise ImportFailed(f"a 3MF member decompresses to more than {MAX_3MF_MEMBER} bytes")
            out.append(b)


def _no_doctype(parser) -> None:
    def refuse(*_a):
        raise ImportFailed("the XML has a DOCTYPE (DTDs and entities are refused)")
    parser.StartDoctypeDeclHandler = refuse
    parser.EntityDeclHandler = refuse


def _3mf_triangles(data: bytes) -> list[tuple]:
    from xml.parsers import expat
    try:
        z = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError) as e:
        raise ImportFailed(f"not a 3MF file (not a zip archive: {e})") from None
    models = [i for i in z.infolist() if i.filename.lower().endswith(".model")]
    if not models:
        raise ImportFailed("not a 3MF file (no .model part)")
    if len(models) > MAX_3MF_MODELS:
        raise ImportFailed(f"the 3MF has {len(models)} model parts; the limit is {MAX_3MF_MODELS}")
    objects: dict[str, tuple[list, list]] = {}
    items: list[tuple[str, list | None]] = []
    scale = [1.0]
    for info in models:
        xml = _read_member(z, info)
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
                    raise ImportFailed(f"the 3MF has more than {MAX_TRIANGLES} triangles")
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
            raise ImportFailed(f"the 3MF model is not valid XML ({e})") from None
        except (KeyError, ValueError) as e:
            if isinstance(e, ImportFailed):
                raise
            raise ImportFailed(f"the 3MF mesh has a bad vertex or triangle ({type(e).__name__}: {e})") from None
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
                raise ImportFailed("a 3MF triangle refers to a vertex that does not exist") from None
            if m is not None and len(m) == 12:
                pts = [(x * m[0] + y * m[3] + z * m[6] + m[9], x * m[1] + y * m[4] + z * m[7] + m[10],
                        x * m[2] + y * m[5] + z * m[8] + m[11]) for x, y, z in pts]
            tris.append(tuple((x * s, y * s, z * s) for x, y, z in pts))
            if len(tris) > MAX_TRIANGLES:
                raise ImportFailed(f"the 3MF has more than {MAX_TRIANGLES} triangles")
    if not tris:
        raise ImportFailed("the 3MF holds no triangles")
    if not all(math.isfinite(c) for t in tris for p in t for c in p):
        raise ImportFailed("the 3MF has non-finite coordinates")
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
    from OCP.BRepGProp import BRepGProp
    from OCP.GProp import GProp_GProps
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
        raise ImportFailed("the mesh has no usable triangle")
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
        raise ImportFailed("the mesh has no usable triangle")
    closed = BRep_Tool.IsClosed_s(shell)
    shell.Closed(closed)
    if not closed:
        return shell
    ms = BRepBuilderAPI_MakeSolid(shell)
    if not ms.IsDone():
        return shell
    solid = ms.Solid()
    props = GProp_GProps()
    BRepGProp.VolumeProperties_s(solid, props)
    if props.Mass() < 0:
        solid.Reverse()
    return solid


# ------------------------------------------------------------------ 2D formats
def read_svg(data: bytes):
    from xml.parsers import expat
    p = expat.ParserCreate()
    _no_doctype(p)
    try:
        p.Parse(data, True)  # well-formed, no DTD: only then is it handed to the SVG reader
    except expat.ExpatError as e:
        raise ImportFailed(f"not a well-formed SVG ({e})") from None
    from build123d import Compound, import_svg
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ImportFailed("the SVG is not UTF-8") from None
    shapes = import_svg(io.StringIO(text))
    if not shapes:
        raise ImportFailed("the SVG holds no paths or shapes")
    return Compound(list(shapes))


def _dxf_pairs(text: str):
    lines = text.splitlines()
    if len(lines) % 2:
        lines = lines[:-1]
    for i in range(0, len(lines), 2):
        try:
            code = int(lines[i].strip())
        except ValueError:
            raise ImportFailed(f"not an ASCII DXF file (bad group code at line {i + 1})") from None
        yield code, lines[i + 1].strip()


def read_dxf(data: bytes):
    from build123d import Compound, Edge, Plane, Vector
    if data.startswith(b"AutoCAD Binary DXF"):
        raise ImportFailed("binary DXF is not supported: save it as ASCII DXF")
    text = data.decode("utf-8", "replace")
    entities: list[tuple[str, list]] = []
    in_entities = False
    cur = None
    prev = None
    for code, val in _dxf_pairs(text):
        if code == 2 and prev == (0, "SECTION"):
            in_entities = val == "ENTITIES"
        prev = (code, val)
        if not in_entities:
            continue
        if code == 0:
            cur = (val, [])
            entities.append(cur)
            if len(entities) > MAX_DXF_ENTITIES:
                raise ImportFailed(f"the DXF has more than {MAX_DXF_ENTITIES} entities")
        elif cur is not None:
            cur[1].append((code, val))

    def num(pairs, code, default=0.0):
        for c, v in pairs:
            if c == code:
                f = float(v)
                if not math.isfinite(f):
                    raise ImportFailed("the DXF has a non-finite number")
                return f
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
        kind, pairs = entities[i]
        try:
            if kind == "LINE":
                seg((num(pairs, 10), num(pairs, 20)), (num(pairs, 11), num(pairs, 21)))
            elif kind == "CIRCLE":
                r = num(pairs, 40)
                if r > 0:
                    edges.append(Edge.make_circle(r, Plane((num(pairs, 10), num(pairs, 20), 0))))
            elif kind == "ARC":
                r = num(pairs, 40)
                if r > 0:
                    edges.append(Edge.make_circle(r, Plane((num(pairs, 10), num(pairs, 20), 0)),
                                                  start_angle=num(pairs, 50), end_angle=num(pairs, 51)))
            elif kind == "LWPOLYLINE":
                pts, bulges = [], []
                for c, v in pairs:
                    if c == 10:
                        pts.append([float(v), 0.0])
                        bulges.append(0.0)
                    elif c == 20 and pts:
                        pts[-1][1] = float(v)
                    elif c == 42 and bulges:
                        bulges[-1] = float(v)
                closed = int(num(pairs, 70)) & 1
                for k in range(len(pts) - 1 + closed):
                    seg(tuple(pts[k]), tuple(pts[(k + 1) % len(pts)]), bulges[k])
            elif kind == "POLYLINE":
                closed = int(num(pairs, 70)) & 1
                pts, bulges = [], []
                j = i + 1
                while j < len(entities) and entities[j][0] == "VERTEX":
                    vp = entities[j][1]
                    pts.append((num(vp, 10), num(vp, 20)))
                    bulges.append(num(vp, 42))
                    j += 1
                for k in range(len(pts) - 1 + closed):
                    seg(pts[k], pts[(k + 1) % len(pts)], bulges[k])
                i = j
                continue
            elif kind not in ("SEQEND", "VERTEX", "ENDSEC", "EOF", "POINT"):
                unsupported.add(kind[:20])
        except ValueError as e:
            if isinstance(e, ImportFailed):
                raise
            raise ImportFailed(f"bad {kind} entity in the DXF ({e})") from None
        i += 1
    if not edges:
        more = f" (entities found: {', '.join(sorted(unsupported))})" if unsupported else ""
        raise ImportFailed("the DXF holds no LINE, CIRCLE, ARC or polyline geometry" + more)
    return Compound(edges)


# ------------------------------------------------------------------ entry
READERS = {"step": read_step, "brep": read_brep, "svg": read_svg, "dxf": read_dxf,
           "stl": lambda d: mesh_to_shape(_stl_triangles(d)), "3mf": lambda d: mesh_to_shape(_3mf_triangles(d))}


def load(data: bytes, fmt: str):
    """A build123d object parsed from ``data`` (ImportFailed with a reason otherwise)."""
    reader = READERS.get(fmt)
    if reader is None:
        raise ImportFailed(f"unknown format {fmt!r}")
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


def warm_up() -> None:
    """Import what the readers need (before the jail's layers; first imports may need syscalls)."""
    from xml.parsers import expat  # noqa: F401
    from OCP.BRepBuilderAPI import BRepBuilderAPI_MakeSolid  # noqa: F401
    from OCP.BRepGProp import BRepGProp  # noqa: F401
    from OCP.STEPControl import STEPControl_Reader  # noqa: F401
    tri = [((0, 0, 0), (1, 0, 0), (0, 1, 0)), ((0, 0, 0), (0, 0, 1), (1, 0, 0)),
           ((0, 0, 0), (0, 1, 0), (0, 0, 1)), ((1, 0, 0), (0, 0, 1), (0, 1, 0))]
    mesh_to_shape(tri).IsNull()
    svg = b'<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="4" height="3"/></svg>'
    read_svg(svg)
    read_dxf(b"0\nSECTION\n2\nENTITIES\n0\nLINE\n10\n0\n20\n0\n11\n1\n21\n1\n0\nENDSEC\n0\nEOF\n")
    b = io.BytesIO()
    from build123d import Box, export_step
    export_step(Box(1, 1, 1), b)
    load(b.getvalue(), "step")
    buf = io.BytesIO()
    zf = zipfile.ZipFile(buf, "w")
    zf.writestr("3D/3dmodel.model", '<model xmlns="%s"><resources><object id="1"><mesh><vertices>'
                '<vertex x="0" y="0" z="0"/><vertex x="1" y="0" z="0"/><vertex x="0" y="1" z="0"/></vertices>'
                '<triangles><triangle v1="0" v2="1" v3="2"/></triangles></mesh></object></resources><build>'
                '<item objectid="1"/></build></model>' % _NS_3MF)
    zf.close()
    load(buf.getvalue(), "3mf")


# ------------------------------------------------------------------ the op
#: build123d code a user can run outside the jail to read the same file (INPUT_DIR is set at the
#: top of the script); None: build123d has no reader for the format (the script says so).
_EQUIVALENT = {"step": "{name} = import_step(INPUT_DIR + {path!r})",
               "brep": "{name} = import_brep(INPUT_DIR + {path!r})",
               "svg": "{name} = Compound(list(import_svg(INPUT_DIR + {path!r})))",
               "stl": "{name} = Mesher().read(INPUT_DIR + {path!r})[0]",
               "3mf": "{name} = Mesher().read(INPUT_DIR + {path!r})[0]",
               "dxf": None}


def equivalent_code(name: str, fmt: str, filename: str) -> str:
    tpl = _EQUIVALENT.get(fmt)
    if tpl is None:
        return (f"# {name}: imported from {filename!r} by import_file; build123d has no {fmt.upper()} reader, "
                f"so this script cannot rebuild it\n{name} = None")
    return tpl.format(name=name, path="/" + filename)


#: Past this many faces (a mesh), the reply's summary skips the validity check and build123d's
#: per-face wrappers (BRepCheck on 35,000 triangles takes ~8 s, the full summary ~15 s).
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


def summary(name: str, obj, summarize) -> list[dict]:
    """The reply's summary of the imported object: the runner's, or for a big mesh a light one
    (counts with TopExp, volume with GProp, bbox; no validity check), which is also put in the
    runner's shape cache so the next summaries of the session reuse it."""
    from OCP.TopAbs import TopAbs_EDGE, TopAbs_FACE, TopAbs_SOLID
    wrapped = getattr(obj, "wrapped", None)
    if wrapped is None or _count(wrapped, TopAbs_FACE) <= LIGHT_SUMMARY_FACES:
        return summarize({name: obj})
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
        from jail.cad.summary import remember_shape
        remember_shape(obj, d)
    except Exception:  # noqa: BLE001
        pass
    return [{"name": name, "type": type(obj).__name__, **d}]


def _fail(type_: str, message: str, t0: float) -> dict:
    import time
    return {"ok": False, "stdout": "", "stderr": "", "truncated": False, "objects": [],
            "error": {"type": type_, "message": message[:2000], "line": None, "source_line": None},
            "duration_ms": round((time.monotonic() - t0) * 1000, 2)}


def run_import(msg: dict, namespace: dict, summarize) -> dict:
    """Parse ``msg["data"]`` (base64) as ``msg["format"]`` and bind it to ``msg["name"]``; an
    execute-shaped result. On success the import is recorded in jail/history.py."""
    import base64
    import binascii
    import time
    from jail.cad import history
    t0 = time.monotonic()
    name, fmt, filename = msg.get("name"), msg.get("format"), msg.get("filename")
    if not (isinstance(name, str) and name.isidentifier() and not name.startswith("__")):
        return _fail("ValueError", "name must be an identifier", t0)
    if not isinstance(filename, str) or fmt not in READERS:
        return _fail("ValueError", "bad import request", t0)
    try:
        data = base64.b64decode(msg.get("data") or "", validate=True)
    except (binascii.Error, TypeError, ValueError):
        return _fail("ValueError", "the file's bytes did not arrive intact", t0)
    try:
        obj = load(data, fmt)
    except ImportFailed as e:
        return _fail("ImportError", f"{filename}: {e}", t0)
    except MemoryError:
        return _fail("MemoryError", f"{filename}: parsing ran out of memory", t0)
    except Exception as e:  # noqa: BLE001 - OCCT's Standard_Failure and anything a reader raises
        return _fail("ImportError", f"{filename}: the {fmt.upper()} reader failed ({type(e).__name__}: "
                                    f"{str(e)[:300]})", t0)
    change = "changed" if name in namespace else "added"
    namespace[name] = obj
    sha = msg.get("sha256") if isinstance(msg.get("sha256"), str) else ""
    call = history.record(equivalent_code(name, fmt, filename),
                          note=f"import_file: {filename!r} ({fmt}, sha256 {sha[:64]}) bound to {name!r}")
    objects = [{**o, "change": change} for o in summary(name, obj, summarize)]
    try:  # the next execute reports its own changes, not this import again
        from jail.cad import changes
        changes.remember(namespace)
    except Exception:  # noqa: BLE001 - an optimisation of the reply only
        pass
    return {"ok": True, "stdout": "", "stderr": "", "truncated": False, "error": None, "call": call,
            "objects": objects, "duration_ms": round((time.monotonic() - t0) * 1000, 2)}

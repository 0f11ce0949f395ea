"""Measure, compare and check the session's shapes: the ``measure``, ``distance`` and ``validate`` ops.

Runs in a jailed, disposable next: the process exits after the reply, so a user-defined property,
a patched build123d method or an OCCT crash met here changes nothing in the session. Geometry is
computed with OCCT (``OCP``) on the shape's ``wrapped`` TopoDS_Shape, not through build123d's
Python methods, so a patched ``Shape.volume`` does not change the answer; a replaced ``wrapped``
is checked to be a TopoDS_Shape, anything else is refused.

Guarantees: replies are plain JSON with finite floats, lists capped (``MEASURE_LIST_CAP``), every
failure a ``MeasureError`` with a message for the assistant. Does not guarantee honest numbers once
user code has run in this process (it may have patched OCP itself): the launcher treats them as
untrusted, schema-checks them and only shows them. OCP is imported in the functions that use it.
"""

from __future__ import annotations

import math
from typing import Any

from jail.cad.names import cap, type_name, user_names
from jail.wire.caps import MEASURE_LIST_CAP, NAME_CAP

__all__ = ["MeasureError", "select_shapes", "measure", "distance", "validate"]


class MeasureError(ValueError):
    """A request that cannot be answered; the message is meant for the assistant."""


# ------------------------------------------------------------------ selection


def _topods(value: Any):
    """The TopoDS_Shape of a build123d shape or builder, else None (never raises)."""
    from OCP.TopoDS import TopoDS_Shape
    try:
        import build123d as b
        shape_cls = b.Shape
        builders = {b.BuildPart: "part", b.BuildSketch: "sketch", b.BuildLine: "line"}
    except Exception:  # noqa: BLE001 - a patched build123d: nothing is a shape
        return None
    try:
        obj = value
        if not isinstance(obj, shape_cls):
            for cls, attr in builders.items():
                if isinstance(value, cls):
                    obj = getattr(value, attr)
                    break
            else:
                return None
        if obj is None or not isinstance(obj, shape_cls):
            return None
        w = obj.wrapped
        if not isinstance(w, TopoDS_Shape) or w.IsNull():
            return None
        return w
    except Exception:  # noqa: BLE001 - hostile properties
        return None


def is_empty_shape(value: Any) -> bool:
    """A build123d shape holding nothing (``Part()``: its ``wrapped`` asserts), read from the instance's
    own dict so no property runs (a ``wrapped`` that raises anything else stays "not a shape")."""
    try:
        import build123d as b
        return isinstance(value, b.Shape) and vars(value).get("_wrapped", False) is None
    except Exception:  # noqa: BLE001
        return False


def _is_builder(value: Any) -> bool:
    try:
        import build123d as b
        return isinstance(value, (b.BuildPart, b.BuildSketch, b.BuildLine))
    except Exception:  # noqa: BLE001
        return False


def select_shapes(namespace: dict, names: list[str] | None) -> list[tuple[str, Any]]:
    """``[(name, TopoDS_Shape)]`` for ``names``, or for every top-level shape when ``names`` is
    empty/None (each distinct shape once). Raises ``MeasureError`` naming what exists when a name
    is missing or not a shape."""
    if names:
        out = []
        for name in names:
            if not isinstance(name, str) or name not in namespace:
                have = [n for n in user_names(namespace) if _topods(namespace.get(n)) is not None]
                raise MeasureError(f"no object named {cap(str(name), NAME_CAP)!r}; shapes in the session: "
                                   + (", ".join(have[:30]) if have else "none"))
            w = _topods(namespace[name])
            if w is None:
                if is_empty_shape(namespace[name]):  # Part(): build123d's wrapped is unset
                    raise MeasureError(f"{cap(name, NAME_CAP)!r} is an empty {type_name(namespace[name])} "
                                       "(no solids, faces or edges)")
                raise MeasureError(f"{cap(name, NAME_CAP)!r} is a {type_name(namespace[name])}, not a shape "
                                   "(or an empty builder)")
            out.append((name, w))
        return out
    out: list = []
    for n in user_names(namespace):
        w = _topods(namespace.get(n))
        if w is None:
            continue
        # the same shape under two names (a builder and its .part) is drawn once, under the
        # shape's own name rather than the builder's
        dup = next((i for i, (_, w2) in enumerate(out) if w2.IsSame(w)), None)
        if dup is None:
            out.append((n, w))
        elif _is_builder(namespace.get(out[dup][0])) and not _is_builder(namespace.get(n)):
            out[dup] = (n, w)
    if not out:
        raise MeasureError("the session has no shapes yet: run execute() to make one")
    return out


def is_mesh(shape) -> bool:
    """A face of ``shape`` has triangles and no surface (build123d's import_stl makes one): OCCT's
    geometric queries find nothing on it (an empty box, no distance) or crash the process."""
    from OCP.BRep import BRep_Tool
    from OCP.TopAbs import TopAbs_FACE
    from OCP.TopExp import TopExp_Explorer
    from OCP.TopoDS import TopoDS
    ex = TopExp_Explorer(shape, TopAbs_FACE)
    while ex.More():
        if BRep_Tool.Surface_s(TopoDS.Face(ex.Current())) is None:
            return True
        ex.Next()
    return False


def mesh_error(what: str) -> str:
    return (f"a mesh (faces of triangles with no surface, as import_stl gives): {what} needs B-rep faces; "
            "Mesher().read('part.stl') or the import_file tool give a Solid")


def select_one(namespace: dict, name: str):
    if not isinstance(name, str) or not name:
        raise MeasureError("object_name is required")
    return select_shapes(namespace, [name])[0][1]


# ------------------------------------------------------------------ numbers


def f(x: float, nd: int = 6) -> float | None:
    """A JSON-safe rounded float (None when not finite)."""
    try:
        x = float(x)
    except Exception:  # noqa: BLE001
        return None
    if not math.isfinite(x):
        return None
    if x == 0:
        return 0.0
    digits = nd - int(math.floor(math.log10(abs(x)))) - 1
    return round(x, max(min(digits, 12), -300)) + 0.0


def _pnt(p) -> list:
    return [f(p.X()), f(p.Y()), f(p.Z())]


def _unique(shape, kind) -> list:
    from OCP.collections import IndexedMap_TopoDS_Shape_TopTools_ShapeMapHasher as Map
    from OCP.TopExp import TopExp
    m = Map()
    TopExp.MapShapes_s(shape, kind, m)
    return [m.FindKey(i) for i in range(1, m.Extent() + 1)]


def counts(shape) -> dict:
    from OCP.TopAbs import (TopAbs_SOLID, TopAbs_SHELL, TopAbs_FACE, TopAbs_EDGE, TopAbs_VERTEX,
                            TopAbs_WIRE)
    return {k: len(_unique(shape, t)) for k, t in (
        ("solids", TopAbs_SOLID), ("shells", TopAbs_SHELL), ("faces", TopAbs_FACE),
        ("wires", TopAbs_WIRE), ("edges", TopAbs_EDGE), ("vertices", TopAbs_VERTEX))}


def _props(shape, kind: str):
    from OCP.GProp import GProp_GProps
    from OCP.BRepGProp import BRepGProp
    g = GProp_GProps()
    {"volume": BRepGProp.VolumeProperties_s, "area": BRepGProp.SurfaceProperties_s,
     "length": BRepGProp.LinearProperties_s}[kind](shape, g)
    return g


def bbox(shape) -> dict:
    from OCP.Bnd import Bnd_Box
    from OCP.BRepBndLib import BRepBndLib
    b = Bnd_Box()
    try:
        BRepBndLib.AddOptimal_s(shape, b, False, False)
    except Exception:  # noqa: BLE001
        BRepBndLib.Add_s(shape, b)
    if b.IsVoid():
        raise MeasureError(f"the shape is {mesh_error('measure')}" if is_mesh(shape)
                           else "the shape is empty (no bounding box)")
    lo, hi = b.CornerMin(), b.CornerMax()
    mn, mx = [lo.X(), lo.Y(), lo.Z()], [hi.X(), hi.Y(), hi.Z()]
    return {"min": [f(v) for v in mn], "max": [f(v) for v in mx],
            "size": [f(b - a) for a, b in zip(mn, mx)],
            "center": [f((a + b) / 2) for a, b in zip(mn, mx)]}


_SURF = {"GeomAbs_Plane": "plane", "GeomAbs_Cylinder": "cylinder", "GeomAbs_Cone": "cone",
         "GeomAbs_Sphere": "sphere", "GeomAbs_Torus": "torus", "GeomAbs_BSplineSurface": "bspline",
         "GeomAbs_BezierSurface": "bezier", "GeomAbs_SurfaceOfRevolution": "revolution",
         "GeomAbs_SurfaceOfExtrusion": "extrusion", "GeomAbs_OffsetSurface": "offset"}


def _face_kind(adaptor) -> str:
    t = adaptor.GetType()
    return _SURF.get(getattr(t, "name", str(t)).split(".")[-1], "other")


FULL_TURN = 0.98 * 2 * math.pi
HALF_TURN = 1.01 * math.pi  # a wall past this is a partial hole or shaft: no fillet or slot end turns so far


def _cylinder_info(face, adaptor) -> tuple[float, bool | None, float, tuple]:
    """Diameter of a cylindrical face, whether it is concave (its outward normal points at the
    axis: a hole's wall or a fillet in a corner), the angle it spans round the axis, and its axis
    line (rounded: the faces of one split wall share it)."""
    from OCP.BRepGProp import BRepGProp_Face
    from OCP.gp import gp_Pnt, gp_Vec
    cyl = adaptor.Cylinder()
    d = 2.0 * cyl.Radius()
    u0, u1 = adaptor.FirstUParameter(), adaptor.LastUParameter()
    ax = cyl.Axis()
    o, dirn = ax.Location(), ax.Direction()
    from jail.cad.features_faces import canonical_dir
    k = list(canonical_dir((dirn.X(), dirn.Y(), dirn.Z())))
    oo = [o.X(), o.Y(), o.Z()]
    t = sum(a * b for a, b in zip(oo, k))
    line = tuple(round(c, 5) for c in k + [a - t * b for a, b in zip(oo, k)])
    span = min(abs(u1 - u0), 2 * math.pi)
    try:
        u = (u0 + u1) / 2
        v = (adaptor.FirstVParameter() + adaptor.LastVParameter()) / 2
        p, n = gp_Pnt(), gp_Vec()
        BRepGProp_Face(face).Normal(u, v, p, n)  # orientation-aware outward normal
        w = gp_Vec(o, p)
        along = w.Dot(gp_Vec(dirn))
        radial = w - gp_Vec(dirn) * along
        return d, bool(radial.Dot(n) < 0), span, line
    except Exception:  # noqa: BLE001
        return d, None, span, line


def face_inventory(shape) -> tuple[list, list]:
    """``([{"type", "count", "area"}], [{"diameter", "faces", "hole", "full", "over_half", "area"}])``:
    ``hole`` is concave, ``full`` all the way round (the faces on one axis line with one diameter
    together: OCCT may split a wall in two halves), ``over_half`` more than half round (a keyed bore, a
    bore cut by an edge, a shaft with a flat; a fillet or a slot's end never is)."""
    from OCP.TopAbs import TopAbs_FACE
    from OCP.TopoDS import TopoDS
    from OCP.BRepAdaptor import BRepAdaptor_Surface
    kinds: dict[str, list] = {}
    cyls: dict[tuple, list] = {}
    walls: dict[tuple, list] = {}
    for fc in _unique(shape, TopAbs_FACE):
        face = TopoDS.Face(fc)
        ad = BRepAdaptor_Surface(face)
        k = _face_kind(ad)
        area = _props(face, "area").Mass()
        e = kinds.setdefault(k, [0, 0.0])
        e[0] += 1
        e[1] += area
        if k == "cylinder":
            d, hole, span, line = _cylinder_info(face, ad)
            c = walls.setdefault((round(d, 6), hole, line), [0, 0.0, 0.0])
            c[0] += 1
            c[1] += area
            c[2] += span
    for (d, hole, _line), (n, a, span) in walls.items():  # a wall all the way round, in one face or more
        c = cyls.setdefault((d, hole, span >= FULL_TURN, span > HALF_TURN), [0, 0.0])
        c[0] += n
        c[1] += a
    types = [{"type": k, "count": n, "area": f(a)} for k, (n, a) in sorted(kinds.items())]
    diam = [{"diameter": f(d), "faces": n, "hole": hole, "full": full, "over_half": over, "area": f(a)}
            for (d, hole, full, over), (n, a) in sorted(cyls.items(), key=lambda kv: (kv[0][0], str(kv[0][1:])))]
    return types[:MEASURE_LIST_CAP], diam[:MEASURE_LIST_CAP]


def is_valid(shape) -> bool:
    """BRepCheck's verdict: the full validity check (the slow part of a measure; ``validate``,
    ``measure(check=True)`` and the reply's summary run it). Serial on purpose: build123d's
    ``is_valid`` asks for the parallel mode, which in the jail (OCCT's pool pinned to one thread)
    only adds its bookkeeping: on the bench plate, after its volume, p50 2.53 against 2.41 ms."""
    from OCP.BRepCheck import BRepCheck_Analyzer
    return bool(BRepCheck_Analyzer(shape).IsValid())


def edge_checks(shape) -> dict:
    """For solids: free (boundary) and non-manifold edges, from the edge-to-face map (cheap: no
    BRepCheck). Empty for a shape without solids."""
    from OCP.TopAbs import TopAbs_EDGE, TopAbs_FACE, TopAbs_SOLID
    from OCP.collections import (
        IndexedDataMap_TopoDS_Shape_List_TopoDS_Shape_TopTools_ShapeMapHasher as DataMap)
    from OCP.TopExp import TopExp
    from OCP.BRep import BRep_Tool
    from OCP.TopoDS import TopoDS
    solids = _unique(shape, TopAbs_SOLID)
    if not solids:
        return {}
    free = nonman = 0
    for so in solids:
        m = DataMap()
        TopExp.MapShapesAndUniqueAncestors_s(so, TopAbs_EDGE, TopAbs_FACE, m)
        for i in range(1, m.Extent() + 1):
            edge = TopoDS.Edge(m.FindKey(i))
            if BRep_Tool.Degenerated_s(edge):
                continue
            faces = m.FindFromIndex(i)   # Extent()/First(): iterating the list in Python is ~100x slower
            n = faces.Extent()
            if n == 1 and BRep_Tool.IsClosed_s(edge, TopoDS.Face(faces.First())):
                continue  # a seam: the same face on both sides
            if n == 1:
                free += 1
            elif n > 2:
                nonman += 1
    return {"closed": free == 0, "manifold": nonman == 0, "free_edges": free, "non_manifold_edges": nonman}


def topology_checks(shape) -> dict:
    """BRepCheck validity, and for solids: free (boundary) edges and non-manifold edges."""
    return {"valid": is_valid(shape), **edge_checks(shape)}


# ------------------------------------------------------------------ the ops


def measure(namespace: dict, name: str, check: bool = False) -> dict:
    """Counts, bbox, volume/area/length, centre of mass, face inventory and the cheap edge checks
    (closed, manifold); BRepCheck validity (``valid``) only with ``check``: ``validate`` is the tool
    for it, and it was most of a measure's time."""
    shape = select_one(namespace, name)
    c = counts(shape)
    d: dict = {"name": cap(name, NAME_CAP), "counts": c, "bbox": bbox(shape)}
    if c["solids"]:
        g = _props(shape, "volume")
        d["volume"] = f(g.Mass())
        d["area"] = f(_props(shape, "area").Mass())
    elif c["faces"]:
        g = _props(shape, "area")
        d["area"] = f(g.Mass())
    elif c["edges"]:
        g = _props(shape, "length")
        d["length"] = f(g.Mass())
    else:
        g = None
    d["center_of_mass"] = _pnt(g.CentreOfMass()) if g is not None and g.Mass() > 0 else None
    if c["faces"]:
        d["face_types"], d["cylinders"] = face_inventory(shape)
    if check:
        d["valid"] = is_valid(shape)
    d.update(edge_checks(shape))
    return d


def common(a, b):
    """The boolean common of two TopoDS shapes, computed single-threaded; None if OCCT fails."""
    from OCP.BRepAlgoAPI import BRepAlgoAPI_Common
    op = BRepAlgoAPI_Common(a, b)
    try:
        op.SetRunParallel(False)
    except Exception:  # noqa: BLE001
        pass
    return op.Shape() if op.IsDone() else None


def _common_volume(a, b) -> float:
    shape = common(a, b)
    if shape is None:
        raise MeasureError("the overlap of the two objects could not be computed")
    return _props(shape, "volume").Mass()


def _boxes_overlap(a, b) -> bool:
    ba, bb = bbox(a), bbox(b)
    return all(ba["min"][i] <= bb["max"][i] and bb["min"][i] <= ba["max"][i] for i in range(3))


def distance(namespace: dict, name_a: str, name_b: str) -> dict:
    """Minimum distance between two objects and the two closest points; for two solids that
    overlap (or one inside the other) the distance is 0 and ``overlap_volume`` says how much."""
    from OCP.BRepExtrema import BRepExtrema_DistShapeShape
    from OCP.TopAbs import TopAbs_SOLID
    a, b = select_one(namespace, name_a), select_one(namespace, name_b)
    ext = BRepExtrema_DistShapeShape()
    try:
        ext.SetMultiThread(False)
    except Exception:  # noqa: BLE001
        pass
    ext.LoadS1(a)
    ext.LoadS2(b)
    ext.Perform()
    if not ext.IsDone() or ext.NbSolution() < 1:
        mesh = next((n for n, s in ((name_a, a), (name_b, b)) if is_mesh(s)), None)
        raise MeasureError(f"{cap(mesh, NAME_CAP)!r} is {mesh_error('distance')}" if mesh is not None
                           else "the distance could not be computed")
    dist = ext.Value()
    d: dict = {"a": cap(name_a, NAME_CAP), "b": cap(name_b, NAME_CAP), "distance": f(dist),
               "point_a": _pnt(ext.PointOnShape1(1)), "point_b": _pnt(ext.PointOnShape2(1)),
               "inside": bool(ext.InnerSolution())}
    touching = dist <= 1e-7
    d["intersect"] = touching
    both_solid = bool(_unique(a, TopAbs_SOLID)) and bool(_unique(b, TopAbs_SOLID))
    if both_solid and (touching or d["inside"] or _boxes_overlap(a, b)):
        vol = _common_volume(a, b)  # also finds one solid wholly inside the other
        d["overlap_volume"] = f(vol)
        d["intersect"] = vol > 1e-9
        if vol > 1e-9:
            touching = True
    if touching:
        d["distance"] = 0.0
    return d


PAIRS_CHECKED = 20  # solids in a compound whose pairs validate compares (a boolean per pair)


def _self_interferes(shape) -> bool:
    from OCP.BOPAlgo import BOPAlgo_ArgumentAnalyzer
    an = BOPAlgo_ArgumentAnalyzer()
    an.SetShape1(shape)
    an.SetRunParallel(False)
    an.SelfInterMode = True  # a read/write property in OCP
    an.Perform()
    return bool(an.HasFaulty())


def _between_solids(shape) -> list | None:
    """Why a compound of solids interferes: ``[(i, j, shared volume)]`` for the pairs that overlap,
    ``[]`` when each solid is sound and they only touch (a lid resting on a box), None when a solid
    is faulty on its own or there are more than ``PAIRS_CHECKED`` solids (not looked into)."""
    from OCP.TopAbs import TopAbs_SOLID
    solids = _unique(shape, TopAbs_SOLID)
    if len(solids) > PAIRS_CHECKED or any(_self_interferes(so) for so in solids):
        return None
    scale = max(max(abs(x) for x in bbox(shape)["size"]), 1.0)
    out = []
    for i, a in enumerate(solids):
        for j in range(i + 1, len(solids)):
            b = solids[j]
            if _boxes_overlap(a, b):
                v = _common_volume(a, b)
                if v > 1e-9 * scale ** 3:
                    out.append((i, j, v))
    return out


def _fmt_num(x: float) -> str:
    return f"{x:.6g}"


def validate(namespace: dict, name: str) -> dict:
    """PASS/FAIL for export readiness: every check that fails is a reason; warnings do not fail."""
    from OCP.TopAbs import TopAbs_SOLID
    shape = select_one(namespace, name)
    c = counts(shape)
    topo = topology_checks(shape)
    checks: list[dict] = []

    def check(name_: str, ok: bool, detail: str, severity: str = "error") -> None:
        checks.append({"check": name_, "ok": bool(ok), "severity": severity, "detail": detail})

    check("valid", topo["valid"], "BRepCheck finds no fault" if topo["valid"] else
          "BRepCheck reports faults in the geometry or topology (try .clean() or rebuild the feature)")
    check("has_solid", c["solids"] > 0, f"{c['solids']} solid(s)" if c["solids"] else
          "no solid: faces, wires or edges cannot be exported as a printable/machinable body")
    if c["solids"]:
        check("closed", topo["closed"], "every edge joins two faces" if topo["closed"] else
              f"{topo['free_edges']} free edge(s): the surface has gaps")
        check("manifold", topo["manifold"], "no edge is shared by more than two faces" if topo["manifold"]
              else f"{topo['non_manifold_edges']} non-manifold edge(s)")
        bad = []
        for i, so in enumerate(_unique(shape, TopAbs_SOLID)):
            v = _props(so, "volume").Mass()
            if not (v > 1e-9):
                bad.append((i, v))
        check("positive_volume", not bad, "every solid has a positive volume" if not bad else
              f"{len(bad)} solid(s) with zero or negative volume (inside-out)")
        try:
            faulty = _self_interferes(shape)
            between = _between_solids(shape) if faulty and c["solids"] > 1 else None
            if not faulty:
                check("self_intersection", True, "no self-intersection")
            elif between == []:
                check("self_intersection", False, "the solids touch but share no volume (fine for an "
                      "assembly; fuse them for one printable body)", "warning")
            elif between:
                said = [f"solids {i} and {j} overlap by {_fmt_num(v)} mm^3" if k == 0 else
                        f"solids {i} and {j} by {_fmt_num(v)} mm^3" for k, (i, j, v) in enumerate(between[:3])]
                more = f" and {len(between) - 3} more pairs" if len(between) > 3 else ""
                check("self_intersection", False, ", ".join(said) + more + " (fuse them, or move one)")
            else:
                check("self_intersection", False, "the shape intersects itself (overlapping solids in one "
                      "compound?) or has faults a boolean operation would trip on")
        except Exception as e:  # noqa: BLE001
            check("self_intersection", True, f"not checked: {type(e).__name__}", "warning")
        check("single_solid", c["solids"] == 1, "one solid" if c["solids"] == 1 else
              f"{c['solids']} separate solids (fine for an assembly; a single part fell apart?)", "warning")
    errors = [ch for ch in checks if not ch["ok"] and ch["severity"] == "error"]
    return {"name": cap(name, NAME_CAP), "status": "FAIL" if errors else "PASS",
            "reasons": [ch["detail"] for ch in errors],
            "warnings": [ch["detail"] for ch in checks if not ch["ok"] and ch["severity"] == "warning"],
            "checks": checks, "counts": c}


def warm_up(shape) -> None:
    """Called by the zygote: run each measurement once so forked sessions start warm."""
    ns = {"warm_a": shape, "warm_b": shape.moved(shape.location) if hasattr(shape, "moved") else shape}
    measure(ns, "warm_a", True)
    validate(ns, "warm_a")
    distance(ns, "warm_a", "warm_b")


# ------------------------------------------------------------------ the jail ops


def _op(fn, *args) -> tuple[dict, bytes]:
    try:
        return {"ok": True, "result": fn(*args)}, b""
    except MeasureError as e:
        return {"ok": False, "error": str(e)}, b""


def op_measure(msg: dict, ctx) -> tuple[dict, bytes]:
    """``{"t": "measure", "name", "check"?}`` -> ``{"ok", "result"}`` (``check`` true: BRepCheck too)."""
    return _op(measure, ctx.namespace, msg.get("name"), msg.get("check") is True)


def op_distance(msg: dict, ctx) -> tuple[dict, bytes]:
    """``{"t": "distance", "a", "b"}`` -> ``{"ok", "result"}``."""
    return _op(distance, ctx.namespace, msg.get("a"), msg.get("b"))


def op_validate(msg: dict, ctx) -> tuple[dict, bytes]:
    """``{"t": "validate", "name"}`` -> ``{"ok", "result"}``."""
    return _op(validate, ctx.namespace, msg.get("name"))

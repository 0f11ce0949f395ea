"""Recognise oval pockets and windows: a wall extruded from an ellipse, all the way round a void.

A pocket's finder (``features_pockets``) walks from wall to wall over straight edges; an ellipse's
wall has none to walk (one face, or two halves from a STEP file), so it was not read. Here the
faces of kind "other" whose surface is an extrusion of an ellipse are grouped by their ellipse
(centre line, radii, axes); a group that goes all the way round (its faces' parameter spans add
up to a turn) with the material outside (the normal points at the centre line) is an oval. Its ends
are read as a hole's (``features_find.open_beyond``: from the face across, else probed on the
centre line just beyond): both open = through, one = blind, entered from the open end; neither =
a closed cavity, not listed.

Each is a pocket of shape "oval": ``width`` the minor diameter, ``length`` the major one along
``direction`` (the major axis), ``sides`` 1, ``curved`` 1, ``center`` on the centre line at the
wall's end where it is entered, ``depth`` from there to the other end. Not read: a drafted oval
(build123d's tapered extrude of an ellipse is a B-spline), an elliptical boss, and a chamfer or a
rounding round its mouth or floor (the depth is then the straight wall's).

Blocks nothing (a computation). OCP is imported at the top: jailed processes and tests only.
"""
from __future__ import annotations

from OCP.BRepAdaptor import BRepAdaptor_Surface
from OCP.BRepTools import BRepTools
from OCP.GeomAbs import GeomAbs_Ellipse, GeomAbs_SurfaceOfExtrusion
from OCP.TopoDS import TopoDS

from jail.cad.features_faces import TWO_PI, FaceInfo, _xyz, add, canonical_dir, dot, edge_points, mul, norm, sub
from jail.cad.features_find import FULL, entry_first, open_beyond, part_scale
from jail.cad.features_material import Material

def _ellipse(fi: FaceInfo) -> dict | None:
    """The ellipse ``fi`` is extruded from, as ``{centre, d, major, minor, x, span}`` (``centre`` a
    point of the centre line, ``d`` the canonical extrusion direction, ``x`` the major axis), when
    its surface is an extrusion of an ellipse square to the direction."""
    ad = BRepAdaptor_Surface(TopoDS.Face(fi.face))
    if ad.GetType() != GeomAbs_SurfaceOfExtrusion or ad.BasisCurve().GetType() != GeomAbs_Ellipse:
        return None
    e = ad.BasisCurve().Ellipse()
    d = canonical_dir(_xyz(ad.Direction()))
    if abs(abs(dot(_xyz(e.Axis().Direction()), d)) - 1) > 1e-9:
        return None  # an extrusion slanted to its ellipse's plane: not a wall along one direction
    umin, umax, _, _ = BRepTools.UVBounds_s(TopoDS.Face(fi.face))
    centre = _xyz(e.Location())
    return {"centre": sub(centre, mul(d, dot(centre, d))), "d": d, "major": e.MajorRadius(),
            "minor": e.MinorRadius(), "x": canonical_dir(_xyz(e.XAxis().Direction())),
            "span": min(abs(umax - umin), TWO_PI)}


def _same(a: dict, b: dict, tol: float) -> bool:
    return (abs(abs(dot(a["d"], b["d"])) - 1) <= 1e-9 and norm(sub(a["centre"], b["centre"])) <= tol
            and abs(a["major"] - b["major"]) <= tol and abs(a["minor"] - b["minor"]) <= tol
            and abs(abs(dot(a["x"], b["x"])) - 1) <= 1e-9)


def ovals(infos: list[FaceInfo], mat: Material, used: set) -> list[dict]:
    """Oval pockets and windows (module docstring); their walls become ``used``."""
    tol = 1e-6 * part_scale(infos) + 1e-6
    groups: list[tuple[dict, list[FaceInfo]]] = []
    for fi in infos:
        if fi.index in used or fi.kind != "other" or fi.normal is None:
            continue
        el = _ellipse(fi)
        if el is None:
            continue
        w = sub(fi.mid, el["centre"])
        if dot(sub(w, mul(el["d"], dot(w, el["d"]))), fi.normal) >= 0:
            continue  # material inside: an elliptical boss or shaft
        for g, faces in groups:
            if _same(g, el, tol * 10):
                g["span"] += el["span"]
                faces.append(fi)
                break
        else:
            groups.append((el, [fi]))
    out = []
    for el, faces in groups:
        if el["span"] < FULL:
            continue
        d, c = el["d"], el["centre"]
        ts = [dot(p, d) for fi in faces for e in fi.edges.values() for p in edge_points(e)]
        lo, hi = min(ts), max(ts)
        step = max(1e-4, 1e-3 * el["minor"])
        open_lo, open_hi = (open_beyond(infos, faces, c, d, t, sign,
                                        lambda t=t, sign=sign: [add(c, mul(d, t + sign * step))], mat, tol * 10)
                            for t, sign in ((lo, -1.0), (hi, 1.0)))
        if not (open_lo or open_hi):
            continue  # a closed cavity
        through = open_lo and open_hi
        from_lo = entry_first(d) if through else open_lo
        out.append({"center": add(c, mul(d, lo if from_lo else hi)), "axis": mul(d, 1.0 if from_lo else -1.0),
                    "depth": None if through else hi - lo, "through": through, "width": 2 * el["minor"],
                    "length": 2 * el["major"], "direction": el["x"], "sides": 1, "shape": "oval",
                    "corner_radius": None, "draft": None, "curved": 1, "island": None, "sector": None})
        used.update(fi.index for fi in faces)
    return out


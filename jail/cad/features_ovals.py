"""Recognise oval pockets and windows: a wall extruded from an ellipse, all the way round a void.

A pocket's finder (``features_pockets``) walks from wall to wall over straight edges; an ellipse's
wall has none to walk (one face, or two halves from a STEP file), so it was not read. Here the
faces of kind "other" whose surface is an extrusion of an ellipse are grouped by their ellipse
(centre line, radii, axes); a group that goes all the way round (its faces' parameter spans add
up to a turn) with the material outside (the normal points at the centre line) is an oval. Its ends
are read as a freeform pocket's (``features_outlines.read_ends``: past a chamfer or rounding round
its mouth or floor, then as a hole's): both open = through, one = blind, entered from the open
end; neither = a closed cavity, not listed.

Each is a pocket of shape "oval": ``width`` the minor diameter, ``length`` the major one along
``direction`` (the major axis), ``sides`` 1, ``curved`` 1, ``center`` where the centre line
meets the surface it opens onto, ``depth`` from there to the other end. Not read: a drafted oval
(build123d's tapered extrude of an ellipse is a B-spline) and an elliptical boss.

Blocks nothing (a computation). OCP is imported at the top: jailed processes and tests only.
"""
from __future__ import annotations

from OCP.BRepAdaptor import BRepAdaptor_Surface
from OCP.BRepTools import BRepTools
from OCP.GeomAbs import GeomAbs_Ellipse, GeomAbs_SurfaceOfExtrusion
from OCP.TopoDS import TopoDS

from jail.cad.features_faces import TWO_PI, FaceInfo, _xyz, canonical_dir, dot, mul, norm, sub
from jail.cad.features_find import FULL, part_scale
from jail.cad.features_material import Material
from jail.cad.features_outlines import read_ends

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
        ends = read_ends(infos, faces, c, d, 2 * el["minor"], mat, tol)
        if ends is None:
            continue  # a closed cavity
        ends.pop("floor"), ends.pop("walls")
        out.append({**ends, "width": 2 * el["minor"], "length": 2 * el["major"], "direction": el["x"], "sides": 1,
                    "shape": "oval", "corner_radius": None, "draft": None, "curved": 1, "island": None,
                    "sector": None})
        used.update(fi.index for fi in faces)
    return out


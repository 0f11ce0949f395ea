"""Recognise spherical dimples: a ball seat, a detent, a ball-end mill's plunge into a flat face.

A dimple has no wall: it is a concave sphere's cap whose only neighbour is one plane, the face it is
cut into, every edge they share on a circle in that plane round the foot of the sphere's centre.
It is a blind hole entered there: ``diameter`` the mouth's, ``depth`` from the plane to the
sphere's far pole, ``axis`` into the material, and ``ball`` the sphere's radius (a cap deeper than
the radius is a ball seat that holds the ball: its mouth narrower than the ball). A ball-ended
hole's floor meets a cylinder and a spherical cavity meets the holes into it: neither is one.

Blocks nothing (a computation); the launcher checks the reply.
"""
from __future__ import annotations

import math

from jail.cad.features_faces import FaceInfo, dot, edge_points, mul, norm, sub
from jail.cad.features_find import part_scale


def dimples(infos: list[FaceInfo], used: set) -> list[dict]:
    """The dimples among ``infos`` as holes (with ``ball``); their faces become ``used``."""
    tol = 10 * (1e-6 * part_scale(infos) + 1e-6)
    out = []
    for fi in infos:
        if fi.index in used or fi.sphere is None or not fi.concave or len(fi.neighbours) != 1:
            continue
        plane = infos[next(iter(fi.neighbours))]
        if plane.kind != "plane" or plane.normal is None:
            continue
        centre, r = fi.sphere
        s = dot(sub(centre, plane.mid), plane.normal)  # the centre's height over the plane, out of the material
        if not -r + tol < s < r - tol:
            continue
        foot = sub(centre, mul(plane.normal, s))
        mouth = math.sqrt(r * r - s * s)
        pts = [p for k, e in fi.edges.items() if k in plane.edges for p in edge_points(e)]
        if not pts or any(abs(dot(sub(p, foot), plane.normal)) > tol or abs(norm(sub(p, foot)) - mouth) > tol
                          for p in pts):
            continue
        depth = r - s
        out.append({"center": foot, "axis": mul(plane.normal, -1.0), "diameter": 2 * mouth, "depth": depth,
                    "through": False, "countersink": None, "counterbore": None, "bores": [], "length": depth,
                    "keyway": None, "flat": None, "partial": False, "draft": None, "ball": r})
        used.add(fi.index)
    return out

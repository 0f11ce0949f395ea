"""Rendering, sections: the plane of a request, a cut through the solids (the ``section`` view: the
cut faces filled and hatched, on a grid with axes in mm) and the clipped 3D views (a view with a
``section``: the half facing the camera cut away, the cut faces drawn as hatched caps).

Blocks: a plane that is not finite and within +-1e9 is refused. Does not bound the time OCCT takes
to cut a huge model (the launcher's wall-clock kill does). OCP and Pillow are imported where used.
"""

from __future__ import annotations

import math
import numpy as np

from jail.cad.measure import common, f as _f
from jail.cad.render_annotate import axis_names, fmt, legend, nice
from jail.cad.render_mesh import ANGULAR, box_corners, has, mesh_deflection, mesh_shapes, shapes_bbox
from jail.cad.render_shade import BG, GRID, compose, shade
from jail.cad.render_view import RenderError, View, camera_along, fit, number, unit

__all__ = ["section_plane", "section_faces", "clipped", "render_section"]


def section_plane(section: dict) -> tuple[np.ndarray, np.ndarray, str]:
    """(point, unit normal, label) from ``{"axis", "offset"}`` or ``{"point", "normal"}``."""
    if not isinstance(section, dict):
        raise RenderError("section must be an object: {axis, offset} or {point, normal}")
    if section.get("axis") is not None:
        axis = section.get("axis")
        if axis not in ("x", "y", "z", "X", "Y", "Z"):
            raise RenderError("section axis must be x, y or z")
        axis = axis.lower()
        off = number(section.get("offset", 0.0), "section offset")
        n = {"x": [1.0, 0, 0], "y": [0, 1.0, 0], "z": [0, 0, 1.0]}[axis]
        p = [0.0, 0.0, 0.0]
        p["xyz".index(axis)] = off
        return np.array(p), np.array(n), f"{axis} = {fmt(off)}"
    pt = section.get("point", [0, 0, 0])
    nv = section.get("normal")
    if not (isinstance(pt, (list, tuple)) and len(pt) == 3 and isinstance(nv, (list, tuple)) and len(nv) == 3):
        raise RenderError("section needs axis (+ offset) or point and normal (three numbers each)")
    p = np.array([number(v, "section point") for v in pt])
    n = unit([number(v, "section normal") for v in nv])
    return p, n, f"point ({', '.join(fmt(v) for v in p)}) normal ({', '.join(fmt(v) for v in n)})"


def _plane_frame(n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a = int(np.argmin(np.abs(n)))
    x = np.zeros(3)
    x[a] = 1.0
    x = unit(x - n * (x @ n))
    return x, np.cross(n, x)


def _big_face(p0, n, L):
    from OCP.gp import gp_Pln, gp_Pnt, gp_Dir
    from OCP.BRepBuilderAPI import BRepBuilderAPI_MakeFace
    pln = gp_Pln(gp_Pnt(*map(float, p0)), gp_Dir(*map(float, n)))
    return BRepBuilderAPI_MakeFace(pln, -L, L, -L, L).Face()


def _boolean(kind: str, a, b):
    shape = common(a, b)
    if shape is None:
        raise RenderError(f"the {kind} could not be computed for this shape")
    return shape


def section_faces(shapes: list, p0, n, L: float) -> list:
    from OCP.TopAbs import TopAbs_SOLID, TopAbs_FACE
    out = []
    face = _big_face(p0, n, L)
    for s in shapes:
        if not has(s, TopAbs_SOLID):
            out.append(None)
            continue
        r = _boolean("section", s, face)
        out.append(r if has(r, TopAbs_FACE) else None)
    return out


def clipped(shapes: list, p0, keep_dir, L: float) -> list:
    """Each solid cut by the plane through ``p0`` normal to ``keep_dir``, keeping the part on the
    ``keep_dir`` side (a box of size 2L x 2L x L stands in for the half-space); non-solids as they are."""
    from OCP.gp import gp_Ax2, gp_Pnt, gp_Dir
    from OCP.BRepPrimAPI import BRepPrimAPI_MakeBox
    from OCP.TopAbs import TopAbs_SOLID
    k = unit(keep_dir)
    x, _y = _plane_frame(k)
    corner = p0 - L * x - L * np.cross(k, x)
    box = BRepPrimAPI_MakeBox(gp_Ax2(gp_Pnt(*map(float, corner)), gp_Dir(*map(float, k)),
                                     gp_Dir(*map(float, x))), 2 * L, 2 * L, L).Shape()
    out = []
    for s in shapes:
        out.append(_boolean("clipped view", s, box) if has(s, TopAbs_SOLID) else s)
    return out


def render_section(shapes, names, section, lo, hi, diag, width, height, font, small, max_triangles, ss):
    """The ``section`` view of ``shapes`` as a Pillow image, and its meta (``plane``, ``mm_per_px``,
    ``triangles``, ``extent``, ``cut``); ``ss`` is the supersampling factor."""
    from PIL import Image, ImageDraw
    p0, n, plabel = section_plane(section)
    axis = section.get("axis")
    axis = axis.lower() if isinstance(axis, str) else None
    # the viewer stands where the usual view of that plane puts it: x -> right, y -> front, z -> top
    d = {"x": np.array([1.0, 0, 0]), "y": np.array([0, -1.0, 0]), "z": np.array([0, 0, 1.0])}.get(axis, n)
    r, u, d = camera_along(d)
    L = diag * 2 + float(np.abs(p0).max())
    faces = section_faces(shapes, p0, n, L)
    got = [(i, s) for i, s in enumerate(faces) if s is not None]
    if not got:
        what = "" if any(has(s, _solid_kind()) for s in shapes) else " (none of the objects is a solid)"
        raise RenderError(f"the plane {plabel} does not cut {', '.join(names)[:200]}{what}; "
                          f"bbox from ({', '.join(fmt(_f(v, 4)) for v in lo)}) to "
                          f"({', '.join(fmt(_f(v, 4)) for v in hi)})")
    slo, shi = shapes_bbox([s for _, s in got])
    margin_l, margin_b, margin_t, margin_r = 58, 40, 26, 16
    pw, ph = width - margin_l - margin_r, height - margin_b - margin_t
    if pw < 32 or ph < 32:
        raise RenderError("the image is too small for a section with axes")
    corners = box_corners(slo, shi)
    centre, mm = fit(corners, r, u, pw, ph, fill=0.84)
    parts = mesh_shapes([s for _, s in got], mesh_deflection(mm, diag), ANGULAR, max_triangles=max_triangles)
    # restore object indices (colours) of the shapes that were cut
    parts.O = np.array([got[o][0] for o in parts.O], np.int32) if len(parts.O) else parts.O
    mesh = parts
    view = View(r, u, d, centre, mm, pw, ph, ss)
    rgb, cov = shade(mesh, view, hatch_caps=False, flat_fill=True, coverage=True)
    rgb = rgb.astype(np.float32)
    # hatch: diagonal stripes over the filled section
    yy, xx = np.mgrid[0:ph, 0:pw]
    stripe = ((xx + yy) % 8) < 1.5
    inside = cov > 0.99
    rgb[inside & stripe] = rgb[inside & stripe] * 0.62
    # grid + axes: output pixel X shows p.r = u_lo + X * mm; pixel Y shows p.u = v_hi - Y * mm
    u_lo, u_hi = centre[0] - pw / 2 * mm, centre[0] + pw / 2 * mm
    v_lo, v_hi = centre[1] - ph / 2 * mm, centre[1] + ph / 2 * mm
    off_u = float(p0 @ r) if axis is None else 0.0
    off_v = float(p0 @ u) if axis is None else 0.0
    # grid lines every 1, 2 or 5 x 10^n mm: about 15 across the part, at least 14 px apart
    part = max(float(np.ptp(corners @ r)), float(np.ptp(corners @ u)), 1e-9)
    step = nice(max(part / 15, 14 * mm))
    bg = np.empty((ph, pw, 3), np.float32)
    bg[:] = BG
    ticks_u = np.arange(math.ceil((u_lo - off_u) / step), math.floor((u_hi - off_u) / step) + 1) * step
    ticks_v = np.arange(math.ceil((v_lo - off_v) / step), math.floor((v_hi - off_v) / step) + 1) * step
    tu_px = [int(round((t + off_u - u_lo) / mm)) for t in ticks_u]
    tv_px = [int(round((v_hi - (t + off_v)) / mm)) for t in ticks_v]
    for x in tu_px:
        if 0 <= x < pw:
            bg[:, x] = GRID
    for y in tv_px:
        if 0 <= y < ph:
            bg[y, :] = GRID
    panel = compose(rgb, cov, bg)
    img = Image.new("RGB", (width, height), tuple(int(c) for c in BG))
    img.paste(Image.fromarray(panel), (margin_l, margin_t))
    draw = ImageDraw.Draw(img)
    c = (40, 40, 40)
    draw.rectangle([margin_l - 1, margin_t - 1, margin_l + pw, margin_t + ph], outline=c)
    for t, x in zip(ticks_u, tu_px):
        if 0 <= x < pw:
            X = margin_l + x
            draw.line([(X, margin_t + ph), (X, margin_t + ph + 4)], fill=c)
            lbl = fmt(_f(t, 6))
            draw.text((X - 3 * len(lbl), margin_t + ph + 6), lbl, fill=c, font=small)
    for t, y in zip(ticks_v, tv_px):
        if 0 <= y < ph:
            Y = margin_t + y
            draw.line([(margin_l - 5, Y), (margin_l - 1, Y)], fill=c)
            lbl = fmt(_f(t, 6))
            draw.text((margin_l - 8 - 6 * len(lbl), Y - 6), lbl, fill=c, font=small)
    names_uv = axis_names(r, u, axis)
    draw.text((margin_l + pw // 2 - 20, height - 16), f"{names_uv[0]} (mm)", fill=c, font=small)
    draw.text((4, margin_t - 16), f"{names_uv[1]} (mm)", fill=c, font=small)
    draw.text((margin_l, 6), f"section {plabel}", fill=(20, 20, 20), font=font)
    if len(names) > 1:
        legend(draw, [names[i] for i, _ in got], margin_l + 8, margin_t + 6, small)
    extent = (f"{names_uv[0]} {fmt(_f(float(min(corners @ r)) - off_u, 5))}.."
              f"{fmt(_f(float(max(corners @ r)) - off_u, 5))}, "
              f"{names_uv[1]} {fmt(_f(float(min(corners @ u)) - off_v, 5))}.."
              f"{fmt(_f(float(max(corners @ u)) - off_v, 5))} mm")
    return img, {"plane": plabel, "mm_per_px": _f(mm), "triangles": int(len(mesh.T)),
                 "extent": extent, "cut": [names[i] for i, _ in got]}


def _solid_kind():
    from OCP.TopAbs import TopAbs_SOLID
    return TopAbs_SOLID

"""Render the session's shapes to a PNG: the ``render`` op (views, four-view sheet, sections).

The steps: select the shapes (``measure.select_shapes``), mesh them (``render_mesh``; an idle spare
may have meshed the default view already, ``render_premesh``), place the
camera (``render_view``), rasterise (``render_raster``) and shade (``render_shade``) once per pixel,
the pixels on edges and contours from 2 x 2 samples (anti-aliased), draw labels
(``render_annotate``), cut sections (``render_section``), and encode the PNG here (``PNG_SAVE``). numpy and Pillow only: no VTK, OpenGL, X or EGL, no font files.

Runs in a jailed, disposable next: whatever the user's code did to build123d, numpy or these
modules, the process exits after the reply, and the launcher checks the PNG's outer format
(signature, IHDR size, byte cap) before passing it on. Blocks: sizes outside
``RENDER_MIN_PX..RENDER_MAX_PX``, more than ``RENDER_MAX_OBJECTS`` names, PNGs over
``PNG_MAX_BYTES``, meshes over ``MAX_TRIANGLES``, all refused before any large allocation. Does
not block: the time OCCT takes on a huge model (the launcher's wall-clock kill does), or a user
who patched OCP, numpy or Pillow in their session getting a wrong picture of their own model.
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np

from jail.cad.measure import MeasureError, f as _f
from jail.cad.render_annotate import draw_polylines, fmt, legend, load_font, scale_bar, triad, triad_size
from jail.cad.render_mesh import (ANGULAR, MAX_TRIANGLES, box_corners, edge_polylines, has, mesh_deflection,
                                  mesh_shapes, shapes_bbox)
from jail.cad import render_premesh
from jail.cad.render_select import select_parts, select_shown
from jail.cad.render_section import clipped, render_section, section_plane
from jail.cad.render_shade import BG, BG_PACKED, shade_window, to_image
from jail.cad.render_view import SHEET, SS, VIEWS, RenderError, View, camera, fit, number
from jail.wire.caps import PNG_MAX_BYTES, RENDER_MAX_OBJECTS, RENDER_MAX_PX, RENDER_MIN_PX

__all__ = ["RenderError", "render", "op_render", "warm_up", "SS_MAX_PIXELS", "PNG_SAVE"]

SS_MAX_PIXELS = 1_000_000  # images up to this many output pixels are supersampled (SS), larger ones not
BG_RGB = tuple(int(c) for c in BG)  # the background as Pillow takes it
PNG_SAVE = {"format": "PNG", "compress_level": 6}  # Pillow's encoder settings (the bench's floor uses them)


def _check_size(width: Any, height: Any) -> tuple[int, int]:
    for v, what in ((width, "width"), (height, "height")):
        if isinstance(v, bool) or not isinstance(v, int) or not (RENDER_MIN_PX <= v <= RENDER_MAX_PX):
            raise RenderError(f"{what} must be an integer from {RENDER_MIN_PX} to {RENDER_MAX_PX}")
    return int(width), int(height)


def _ss(width: int, height: int) -> int:
    return SS if width * height <= SS_MAX_PIXELS else 1


def render(namespace: dict, objects: list[str] | None = None, view: str = "iso", *,
           azimuth: float | None = None, elevation: float | None = None, width: int = 800,
           height: int = 600, section: dict | None = None,
           max_triangles: int = MAX_TRIANGLES, shown: bool = False) -> tuple[bytes, dict]:
    """Render to PNG bytes; returns ``(png, meta)`` with meta ``{"view", "width", "height",
    "mm_per_px", "bbox", "objects", "triangles", "caption"}``. ``shown``: draw only what
    ``ocp_vscode.show()`` displayed last (RenderError when nothing is displayed)."""
    width, height = _check_size(width, height)
    if objects is not None and (not isinstance(objects, list) or len(objects) > RENDER_MAX_OBJECTS
                                or not all(isinstance(o, str) for o in objects)):
        raise RenderError(f"objects must be a list of at most {RENDER_MAX_OBJECTS} names")
    if view not in VIEWS and view not in ("sheet", "section"):
        raise RenderError("view must be one of " + ", ".join([*VIEWS, "sheet", "section"]))
    try:
        sel = select_parts(namespace, objects or None) if not shown else select_shown(namespace)
        if sel is None:
            raise RenderError("show() displays nothing now (show_clear() was called, or its record is gone)")
    except MeasureError as e:
        raise RenderError(str(e)) from None
    names = [n for n, _ in sel]
    shapes = [s for _, s in sel]
    palette = getattr(sel, "palette", None)  # show()'s colours (render_select.ShownParts), else the default
    lo, hi = shapes_bbox(shapes)
    diag = float(np.linalg.norm(hi - lo)) or 1.0
    if view == "section" and section is None:
        raise RenderError("view 'section' needs a section plane: {axis, offset} or {point, normal}")
    if view != "section" and view != "sheet" and (azimuth is not None or elevation is not None):
        az0, el0 = VIEWS[view]
        az = az0 if azimuth is None else number(azimuth, "azimuth")
        el = el0 if elevation is None else number(elevation, "elevation")
        if not -90.0 <= el <= 90.0:
            raise RenderError("elevation must be within -90..90 degrees")
        view_label = f"azimuth {fmt(az)}, elevation {fmt(el)}"
    elif view in VIEWS:
        az, el = VIEWS[view]
        view_label = view
    font = load_font(13)
    small = load_font(11)
    bbox_txt = "x".join(fmt(_f(v, 4)) for v in (hi - lo))
    meta: dict = {"view": view, "width": width, "height": height, "objects": names,
                  "bbox": {"min": [_f(v) for v in lo], "max": [_f(v) for v in hi],
                           "size": [_f(v) for v in hi - lo]}}

    if view == "section":
        img, extra = render_section(shapes, names, section, lo, hi, diag, width, height, font, small,
                                    max_triangles, _ss(width, height))
        meta.update(extra)
        meta["caption"] = (f"section {extra['plane']}: {extra['extent']}; "
                           f"1 px = {fmt(_f(extra['mm_per_px'], 3))} mm; objects {', '.join(names)[:300]}")
        return _png(img), meta

    cap_plane = None
    if section is not None:
        p0, n, plabel = section_plane(section)
        r_, u_, d_ = camera(az, el) if view != "sheet" else camera(*VIEWS["iso"])
        keep = -n if float(n @ d_) > 0 else n  # cut away the half facing the camera
        shapes = clipped(shapes, p0, keep, diag * 2 + float(np.abs(p0).max()))
        from OCP.TopAbs import TopAbs_FACE  # OCP is imported where used, as in the other steps
        if not any(has(sh, TopAbs_FACE) for sh in shapes):
            raise RenderError(f"cutting at {plabel} leaves nothing to see (the half facing the camera is cut "
                              f"away); bbox from ({', '.join(fmt(_f(v, 4)) for v in lo)}) to "
                              f"({', '.join(fmt(_f(v, 4)) for v in hi)})")
        cap_plane = (p0, n)
        meta["section"] = plabel

    if view == "sheet":
        img, mm = _sheet(shapes, names, lo, hi, diag, width, height, font, small, max_triangles, cap_plane, meta,
                         palette)
        meta["caption"] = (f"sheet (top, iso, front, right); 1 px = {fmt(_f(mm, 3))} mm; bbox {bbox_txt} mm; "
                           f"objects {', '.join(names)[:300]}")
        return _png(img), meta

    r, u, d = camera(az, el)
    corners = box_corners(lo, hi)
    centre, mm = fit(corners, r, u, width, height)
    deflection = mesh_deflection(mm, diag)
    # meshed ahead by an idle spare (the default view only), else here
    mesh = render_premesh.cached_mesh(shapes, deflection, max_triangles) if cap_plane is None else None
    if mesh is None:
        mesh = mesh_shapes(shapes, deflection, ANGULAR, max_triangles=max_triangles, cap_plane=cap_plane,
                           allow_empty=True)
    polys = edge_polylines(shapes, deflection)
    if not len(mesh.T) and not polys:
        raise RenderError("nothing to draw: the objects have no faces or edges")
    v = View(r, u, d, centre, mm, width, height, _ss(width, height))
    window, corner, _ = shade_window(mesh, v, palette=palette)
    from PIL import Image, ImageDraw  # Pillow is imported where used (the zygote's warm-up loads it)
    img = Image.new("RGB", (width, height), BG_RGB)
    img.paste(to_image(window), corner)
    draw = ImageDraw.Draw(img)
    draw_polylines(draw, v, polys, palette=palette)
    title = view_label + (f", cut at {meta['section']}" if cap_plane is not None else "")
    draw.text((8, 6), title, fill=(20, 20, 20), font=font)
    scale_bar(draw, 10, height - 14, mm, width // 4, small)
    ts = triad_size(width, height)
    triad(draw, v, width - ts - 18, height - ts - 18, ts, font)
    if len(names) > 1:
        legend(draw, names, 8, 26, small, palette)
    meta.update(view=view if azimuth is None and elevation is None else "custom", mm_per_px=_f(mm),
                triangles=int(len(mesh.T)), azimuth=_f(az), elevation=_f(el))
    meta["caption"] = (f"{title} view; 1 px = {fmt(_f(mm, 3))} mm; bbox {bbox_txt} mm; "
                       f"objects {', '.join(names)[:300]}")
    return _png(img), meta


def _sheet(shapes, names, lo, hi, diag, width, height, font, small, max_triangles, cap_plane, meta: dict,
           palette=None):
    """The four-view sheet (``SHEET``: top, iso, front, right at one scale) as a Pillow image, and
    its scale (mm per pixel); adds ``mm_per_px``, ``triangles`` and ``panels`` to ``meta``."""
    from PIL import Image, ImageDraw
    pw, ph = width // 2, height // 2
    cams = {name: camera(*VIEWS[name]) for name, _, _ in SHEET}
    corners = box_corners(lo, hi)
    mm = max(fit(corners, c[0], c[1], pw, ph - 16)[1] for c in cams.values())
    mesh = mesh_shapes(shapes, mesh_deflection(mm, diag), ANGULAR, max_triangles=max_triangles,
                       cap_plane=cap_plane, allow_empty=True)
    polys = edge_polylines(shapes, mesh_deflection(mm, diag))
    if not len(mesh.T) and not polys:
        raise RenderError("nothing to draw: the objects have no faces or edges")
    canvas = np.full((ph * 2, pw * 2), BG_PACKED, np.uint32)
    views = {}
    for name, cx, cy in SHEET:
        r, u, d = cams[name]
        centre, _ = fit(corners, r, u, pw, ph - 16)
        v = View(r, u, d, centre, mm, pw, ph, _ss(width, height))
        win, (ox, oy), _ = shade_window(mesh, v, palette=palette)
        y0, x0 = cy * ph + oy, cx * pw + ox
        canvas[y0:y0 + win.shape[0], x0:x0 + win.shape[1]] = win
        views[name] = v
    img = Image.new("RGB", (width, height), BG_RGB)
    img.paste(to_image(canvas), (0, 0))
    draw = ImageDraw.Draw(img)
    for name, cx, cy in SHEET:
        x0, y0 = cx * pw, cy * ph
        draw_polylines(draw, views[name], polys, x0, y0, palette)
        draw.text((x0 + 8, y0 + 6), name, fill=(20, 20, 20), font=font)
        ts = triad_size(pw, ph)
        triad(draw, views[name], x0 + pw - ts - 18, y0 + ph - ts - 18, ts, small)
    draw.line([(pw, 0), (pw, 2 * ph)], fill=(150, 150, 150), width=1)
    draw.line([(0, ph), (2 * pw, ph)], fill=(150, 150, 150), width=1)
    scale_bar(draw, 10, 2 * ph - 14, mm, pw // 3, small)
    if len(names) > 1:
        legend(draw, names, pw + 8, 24, small, palette)
    meta.update(mm_per_px=_f(mm), triangles=int(len(mesh.T)), panels=[s[0] for s in SHEET])
    return img, mm


def _png(img) -> bytes:
    buf = io.BytesIO()
    img.save(buf, **PNG_SAVE)
    return buf.getvalue()


def warm_up(shape) -> None:
    """Called by the zygote: import Pillow, load the fonts and run every code path once on tiny
    images (a view, a sheet, a section, a clipped view), so that forked sessions render without
    importing anything new (a first import inside the jail may need a syscall it denies)."""
    from PIL import Image, ImageDraw, ImageFont, PngImagePlugin  # noqa: F401
    load_font(13), load_font(11)
    ns = {"warm_up_shape": shape}
    render(ns, width=64, height=64)
    render(ns, view="sheet", width=128, height=128)
    lo, hi = shapes_bbox([shape.wrapped])
    mid = float((lo[2] + hi[2]) / 2)
    render(ns, view="section", section={"axis": "z", "offset": mid}, width=160, height=120)
    render(ns, view="top", section={"point": [0, 0, mid], "normal": [0, 0, 1]}, azimuth=10, width=64, height=64)
    render({"warm_up_edges": shape.edges()[0]}, width=64, height=64)  # lines: GCPnts, BRepAdaptor
    render_premesh.premesh_default_view(ns)  # a spare's mesh ahead of a render: BRepBuilderAPI_Copy
    render_premesh.forget()


def op_render(msg: dict, ctx) -> tuple[dict, bytes]:
    """``{"t": "render", "objects", "view", "azimuth", "elevation", "width", "height", "section", "shown"}``
    -> ``({"ok": True, "size", "caption", ...meta}, png)`` or ``({"ok": False, "error"}, b"")``."""
    try:
        png, meta = render(ctx.namespace, msg.get("objects"), msg.get("view") or "iso",
                           azimuth=msg.get("azimuth"), elevation=msg.get("elevation"),
                           width=msg.get("width", 800), height=msg.get("height", 600),
                           section=msg.get("section"), shown=msg.get("shown") is True)
    except (RenderError, MeasureError) as e:
        return {"ok": False, "error": str(e)}, b""
    if len(png) > PNG_MAX_BYTES:
        return {"ok": False, "error": f"the image is {len(png)} bytes, over the cap of {PNG_MAX_BYTES}"}, b""
    return {"ok": True, "size": len(png), **meta}, png

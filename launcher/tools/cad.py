"""Launcher side of the CAD services: ``render``, ``measure``, ``distance``, ``validate``.

Thin wrappers: each handler sends one request to a *disposable* next of the session (the op
runs in ``jail/render.py`` / ``jail/measure.py`` and the process exits afterwards) and keeps only
what it can check. The launcher never looks inside the model (docs/ARCHITECTURE.md: it parses no CAD data):

* arguments are checked here before anything is sent (nested ``section`` and ``objects`` too,
  which the generic schema check does not look into);
* a render reply's PNG goes through ``launcher/png_check.py`` (byte cap, signature, chunk walk,
  IHDR size equal to what was asked for) and is passed on untouched, base64-encoded; the
  caption shown to the assistant is built here from checked numbers and the request, not
  taken from the jail;
* measure/distance/validate replies are rebuilt field by field: known keys only, finite numbers,
  safe capped strings (:mod:`launcher.replies.validate`), capped lists. Non-finite numbers never get this
  far (the wire format refuses them).

What it does not do: judge whether the numbers or the picture are *true* - a session that ran
hostile code may lie about its own model; it cannot reach anything else.
"""
from __future__ import annotations

import base64
import math
import re

from jail.wire.caps import MEASURE_LIST_CAP, NAME_CAP, PNG_MAX_BYTES, RENDER_MAX_OBJECTS, RENDER_MAX_PX, RENDER_MIN_PX

from launcher.replies import png as png_check

from launcher.replies import validate as replies

__all__ = ["render", "measure", "distance", "validate", "render_reply", "measure_reply",
           "distance_reply", "validate_reply", "VIEWS", "RENDER_PARAMS", "MEASURE_PARAMS"]

VIEWS = ("iso", "top", "bottom", "front", "back", "left", "right", "sheet", "section")
MIN_PX, MAX_PX = RENDER_MIN_PX, RENDER_MAX_PX
MAX_OBJECTS = RENDER_MAX_OBJECTS
NAME_RE = re.compile(rf"^[A-Za-z_][A-Za-z0-9_]{{0,{NAME_CAP - 1}}}$")
LIST_CAP = MEASURE_LIST_CAP


class CadError(ValueError):
    """A request refused before it reaches the jail, or a reply the launcher will not forward."""


# ------------------------------------------------------------------ argument checks


def _finite(v, what: str, lo: float = -1e9, hi: float = 1e9) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not lo <= v <= hi:
        raise CadError(f"{what} must be a finite number from {lo:g} to {hi:g}")
    return float(v)


def _vec(v, what: str) -> list[float]:
    if not isinstance(v, list) or len(v) != 3:
        raise CadError(f"{what} must be a list of three numbers")
    return [_finite(x, what) for x in v]


def check_section(sec) -> dict | None:
    if sec is None:
        return None
    if not isinstance(sec, dict):
        raise CadError("section must be an object: {axis, offset} or {point, normal}")
    unknown = sorted(set(sec) - {"axis", "offset", "point", "normal"})
    if unknown:
        raise CadError(f"section: unknown key(s) {', '.join(map(repr, unknown))[:200]}; use axis+offset or "
                       "point+normal")
    if "axis" in sec:
        if sec["axis"] not in ("x", "y", "z"):
            raise CadError("section axis must be 'x', 'y' or 'z'")
        if "point" in sec or "normal" in sec:
            raise CadError("section: give axis+offset or point+normal, not both")
        return {"axis": sec["axis"], "offset": _finite(sec.get("offset", 0.0), "section offset")}
    if "normal" not in sec:
        raise CadError("section needs axis (+ offset) or normal (+ point)")
    n = _vec(sec["normal"], "section normal")
    if math.sqrt(sum(x * x for x in n)) < 1e-9:
        raise CadError("section normal must not be zero")
    return {"point": _vec(sec.get("point", [0.0, 0.0, 0.0]), "section point"), "normal": n}


def check_objects(objs) -> list[str] | None:
    if objs is None:
        return None
    if not isinstance(objs, list) or len(objs) > MAX_OBJECTS:
        raise CadError(f"objects must be a list of at most {MAX_OBJECTS} names")
    for o in objs:
        if not isinstance(o, str) or not 1 <= len(o) <= 200:
            raise CadError("objects must hold names of 1-200 characters")
    return list(objs)


def _size(v, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or not MIN_PX <= v <= MAX_PX:
        raise CadError(f"{what} must be an integer from {MIN_PX} to {MAX_PX}")
    return v


def render_request(objects=None, view="iso", azimuth=None, elevation=None, width=800, height=600,
                   section=None) -> dict:
    """The checked ``render`` request sent to the jail."""
    if view not in VIEWS:
        raise CadError("view must be one of " + ", ".join(VIEWS))
    req = {"t": "render", "objects": check_objects(objects), "view": view,
           "width": _size(width, "width"), "height": _size(height, "height"), "section": check_section(section),
           "azimuth": None if azimuth is None else _finite(azimuth, "azimuth", -360, 360),
           "elevation": None if elevation is None else _finite(elevation, "elevation", -90, 90)}
    if view == "section" and req["section"] is None:
        raise CadError("view 'section' needs a section plane: {\"axis\": \"z\", \"offset\": 5} or "
                       "{\"point\": [x, y, z], \"normal\": [nx, ny, nz]}")
    if view in ("sheet", "section") and (azimuth is not None or elevation is not None):
        raise CadError(f"azimuth/elevation do not apply to view {view!r}")
    return req


# ------------------------------------------------------------------ reply checks


def _num(v, lo=-1e12, hi=1e12):
    x = replies.number(v)
    return x if x is not None and lo <= x <= hi else None


def _vec3(v):
    if isinstance(v, list) and len(v) == 3:
        xs = [_num(x) for x in v]
        if all(x is not None for x in xs):
            return xs
    return None


def _bbox(b) -> dict | None:
    if not isinstance(b, dict):
        return None
    out = {k: _vec3(b.get(k)) for k in ("min", "max", "size", "center") if k in b}
    return out if out.get("min") and out.get("max") else None


def _name(v) -> str:
    return v if isinstance(v, str) and NAME_RE.match(v) else "?"


def _counts(c) -> dict:
    out = {}
    if isinstance(c, dict):
        for k in ("solids", "shells", "faces", "wires", "edges", "vertices"):
            n = replies.count(c.get(k), 10 ** 9)
            if n is not None:
                out[k] = n
    return out


def _bool(v):
    return v if isinstance(v, bool) else None


def _fmt(x) -> str:
    return "?" if x is None else f"{x:.4g}"


def render_reply(msg: dict, blob: bytes, req: dict) -> dict:
    """Check a render reply; returns ``{"ok", "png_b64", "caption", ...}`` or raises CadError."""
    if not isinstance(msg, dict):
        raise CadError("invalid render reply")
    if msg.get("ok") is not True:
        err = replies.line(msg.get("error"), 1000) or "render failed"
        return {"ok": False, "error": err}
    try:
        w, h = png_check.check_png(blob, expect_size=(req["width"], req["height"]))
    except png_check.PngError as e:
        raise CadError(f"the session's image was refused: {e}") from None
    if replies.count(msg.get("size")) != len(blob):
        raise CadError("the session's image was refused: its size does not match the reply")
    mm = _num(msg.get("mm_per_px"), 1e-12, 1e9)
    bb = _bbox(msg.get("bbox"))
    objs = msg.get("objects") if isinstance(msg.get("objects"), list) else []
    names = [_name(o) for o in objs[:MAX_OBJECTS]]
    if req["view"] == "section":
        view = "section " + _plane_label(req["section"])
    elif req["azimuth"] is not None or req["elevation"] is not None:
        az = req["azimuth"] if req["azimuth"] is not None else _num(msg.get("azimuth"), -360, 360)
        el = req["elevation"] if req["elevation"] is not None else _num(msg.get("elevation"), -90, 90)
        view = f"azimuth {_fmt(az)}, elevation {_fmt(el)}"
        if req["section"] is not None:
            view += ", cut at " + _plane_label(req["section"])
    else:
        view = req["view"] + ("" if req["view"] != "sheet" else " (top, iso, front, right)")
        if req["section"] is not None:
            view += ", cut at " + _plane_label(req["section"])
    size = "x".join(_fmt(v) for v in bb["size"]) if bb and bb.get("size") else "?"
    caption = (f"{view} view, {w}x{h} px; 1 px = {_fmt(mm)} mm; bbox {size} mm; "
               f"objects: {', '.join(names) if names else '?'}")
    out = {"ok": True, "png_b64": base64.b64encode(blob).decode("ascii"), "caption": caption,
           "width": w, "height": h, "bytes": len(blob), "mm_per_px": mm, "bbox": bb, "objects": names,
           "triangles": replies.count(msg.get("triangles"), 10 ** 9)}
    return out


def _plane_label(sec: dict) -> str:
    if "axis" in sec:
        return f"{sec['axis']} = {sec['offset']:g}"
    p, n = sec["point"], sec["normal"]
    return f"point ({', '.join(f'{v:g}' for v in p)}) normal ({', '.join(f'{v:g}' for v in n)})"


def measure_reply(r) -> dict:
    if not isinstance(r, dict):
        raise CadError("invalid measure reply")
    out: dict = {"name": _name(r.get("name")), "counts": _counts(r.get("counts")), "bbox": _bbox(r.get("bbox"))}
    for k in ("volume", "area", "length"):
        if k in r:
            out[k] = _num(r.get(k))
    out["center_of_mass"] = _vec3(r.get("center_of_mass"))
    if isinstance(r.get("face_types"), list):
        out["face_types"] = [{"type": replies.line(ft.get("type"), 20) or "?",
                              "count": replies.count(ft.get("count"), 10 ** 9), "area": _num(ft.get("area"))}
                             for ft in r["face_types"][:LIST_CAP] if isinstance(ft, dict)]
    if isinstance(r.get("cylinders"), list):
        out["cylinders"] = [{"diameter": _num(c.get("diameter")), "faces": replies.count(c.get("faces"), 10 ** 9),
                             "hole": _bool(c.get("hole")), "area": _num(c.get("area"))}
                            for c in r["cylinders"][:LIST_CAP] if isinstance(c, dict)]
    for k in ("valid", "closed", "manifold"):
        if k in r:
            out[k] = _bool(r.get(k))
    for k in ("free_edges", "non_manifold_edges"):
        if k in r:
            out[k] = replies.count(r.get(k), 10 ** 9)
    return out


def distance_reply(r) -> dict:
    if not isinstance(r, dict):
        raise CadError("invalid distance reply")
    out = {"a": _name(r.get("a")), "b": _name(r.get("b")), "distance": _num(r.get("distance"), 0.0),
           "point_a": _vec3(r.get("point_a")), "point_b": _vec3(r.get("point_b")),
           "intersect": _bool(r.get("intersect")), "inside": _bool(r.get("inside"))}
    if "overlap_volume" in r:
        out["overlap_volume"] = _num(r.get("overlap_volume"), 0.0)
    return out


def validate_reply(r) -> dict:
    if not isinstance(r, dict):
        raise CadError("invalid validate reply")
    status = r.get("status") if r.get("status") in ("PASS", "FAIL") else None
    if status is None:
        raise CadError("invalid validate reply (status)")
    checks = []
    for c in (r.get("checks") or [])[:20] if isinstance(r.get("checks"), list) else []:
        if isinstance(c, dict):
            checks.append({"check": replies.line(c.get("check"), 40) or "?", "ok": c.get("ok") is True,
                           "severity": "warning" if c.get("severity") == "warning" else "error",
                           "detail": replies.line(c.get("detail"), 300) or ""})
    failed = [c for c in checks if not c["ok"] and c["severity"] == "error"]
    if status == "PASS" and failed:  # a reply that contradicts itself is not forwarded as a PASS
        status = "FAIL"
    return {"name": _name(r.get("name")), "status": status,
            "reasons": [c["detail"] for c in failed],
            "warnings": [c["detail"] for c in checks if not c["ok"] and c["severity"] == "warning"],
            "checks": checks, "counts": _counts(r.get("counts"))}


# ------------------------------------------------------------------ handlers (tooldefs)


def _ask(s, req: dict, cap: int | None = None):
    from launcher.session.session import SessionError
    try:
        return s.ask(req, req["t"], cap=cap)
    except SessionError:
        raise
    except Exception as e:  # noqa: BLE001
        raise CadError(f"{req['t']} failed: {type(e).__name__}") from None


def render(ctx, s, objects=None, view="iso", azimuth=None, elevation=None, width=800, height=600,
           section=None) -> dict:
    try:
        req = render_request(objects, view, azimuth, elevation, width, height, section)
    except CadError as e:
        return {"ok": False, "error": str(e)}
    msg, blob = _ask(s, req, cap=PNG_MAX_BYTES + 65536)
    try:
        return render_reply(msg, blob, req)
    except CadError as e:
        return {"ok": False, "error": str(e)}


def _simple(s, req: dict, check) -> dict:
    msg, _blob = _ask(s, req)
    if not isinstance(msg, dict):
        return {"ok": False, "error": f"invalid {req['t']} reply"}
    if msg.get("ok") is not True:
        return {"ok": False, "error": replies.line(msg.get("error"), 1000) or f"{req['t']} failed"}
    try:
        return {"ok": True, req["t"]: check(msg.get("result"))}
    except CadError as e:
        return {"ok": False, "error": str(e)}


def _object_name(v, what="object_name") -> str:
    if not isinstance(v, str) or not 1 <= len(v) <= 200:
        raise CadError(f"{what} must be a name of 1-200 characters")
    return v


def measure(ctx, s, object_name) -> dict:
    try:
        req = {"t": "measure", "name": _object_name(object_name)}
    except CadError as e:
        return {"ok": False, "error": str(e)}
    return _simple(s, req, measure_reply)


def distance(ctx, s, a, b) -> dict:
    try:
        req = {"t": "distance", "a": _object_name(a, "a"), "b": _object_name(b, "b")}
    except CadError as e:
        return {"ok": False, "error": str(e)}
    return _simple(s, req, distance_reply)


def validate(ctx, s, object_name) -> dict:
    try:
        req = {"t": "validate", "name": _object_name(object_name)}
    except CadError as e:
        return {"ok": False, "error": str(e)}
    return _simple(s, req, validate_reply)


# ------------------------------------------------------------------ replies as MCP content


def _text(s: str) -> dict:
    return {"type": "text", "text": s}


def content_render(result: dict) -> list[dict]:
    if result.get("ok") is not True:
        return [_text(f"Error: {result.get('error', 'render failed')}")]
    return [_text(result["caption"]), {"type": "image", "data": result["png_b64"], "mimeType": "image/png"}]


def _g(x) -> str:
    return "?" if x is None else f"{x:.6g}"


def _v(v) -> str:
    return "(?)" if not v else "(" + ", ".join(_g(x) for x in v) + ")"


def content_measure(result: dict) -> list[dict]:
    if result.get("ok") is not True:
        return [_text(f"Error: {result.get('error', 'measure failed')}")]
    m = result["measure"]
    c = m.get("counts", {})
    def n_of(k: str) -> str:
        n = c.get(k, 0)
        return f"{n} {k if n != 1 else k[:-1] if k != 'vertices' else 'vertex'}"
    lines = [f"{m['name']}: " + ", ".join(n_of(k) for k in ("solids", "shells", "faces", "edges", "vertices"))]
    for k in ("volume", "area", "length"):
        if k in m:
            unit = {"volume": "mm^3", "area": "mm^2", "length": "mm"}[k]
            lines.append(f"{k}: {_g(m[k])} {unit}")
    bb = m.get("bbox") or {}
    lines.append(f"bbox: size {_v(bb.get('size'))}, min {_v(bb.get('min'))}, max {_v(bb.get('max'))}, "
                 f"centre {_v(bb.get('center'))}")
    lines.append(f"centre of mass: {_v(m.get('center_of_mass'))}")
    if m.get("face_types"):
        lines.append("faces: " + ", ".join(f"{ft['type']} x{ft['count']} ({_g(ft['area'])} mm^2)"
                                           for ft in m["face_types"]))
    if m.get("cylinders"):
        lines.append("cylinders: " + ", ".join(
            f"d={_g(cy['diameter'])} x{cy['faces']}" + (" hole" if cy["hole"] else " boss" if cy["hole"] is False
                                                        else "") for cy in m["cylinders"]))
    checks = [f"valid={m['valid']}"] if "valid" in m else []
    for k in ("closed", "manifold"):
        if k in m:
            checks.append(f"{k}={m[k]}")
    if checks:
        lines.append(" ".join(checks))
    return [_text("\n".join(lines))]


def content_distance(result: dict) -> list[dict]:
    if result.get("ok") is not True:
        return [_text(f"Error: {result.get('error', 'distance failed')}")]
    d = result["distance"]
    s = f"distance {d['a']} - {d['b']}: {_g(d['distance'])} mm, closest points {_v(d['point_a'])} and {_v(d['point_b'])}"
    if d.get("intersect"):
        s += f"\nthey intersect: overlap volume {_g(d.get('overlap_volume'))} mm^3"
    elif d.get("distance") == 0:
        s += "\nthey touch (no overlap volume)"
    return [_text(s)]


def content_validate(result: dict) -> list[dict]:
    if result.get("ok") is not True:
        return [_text(f"Error: {result.get('error', 'validate failed')}")]
    v = result["validate"]
    lines = [f"{v['name']}: {v['status']}"]
    lines += [f"  FAIL: {r}" for r in v["reasons"]]
    lines += [f"  warning: {w}" for w in v["warnings"]]
    lines += [f"  ok: {c['check']}: {c['detail']}" for c in v["checks"] if c["ok"]]
    return [_text("\n".join(lines))]


# ------------------------------------------------------------------ parameter schemas

OBJECT = {"type": "string", "minLength": 1, "maxLength": 200,
          "description": "A top-level name bound in the session (e.g. 'part'), as listed by session_state."}
RENDER_PARAMS = {
    "objects": {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 200},
                "maxItems": MAX_OBJECTS,
                "description": "Names of the objects to draw (one colour each, with a legend). Default: every "
                               "top-level shape."},
    "view": {"type": "string", "enum": list(VIEWS),
             "description": "iso (default), top, bottom, front, back, left, right; 'sheet' = top, iso, front "
                            "and right in one image; 'section' = a filled planar cut with mm axes (needs "
                            "`section`)."},
    "azimuth": {"type": "number", "minimum": -360, "maximum": 360,
                "description": "Optional camera azimuth in degrees around Z: 0 looks from the front (-Y), 90 "
                               "from the right (+X). Overrides the named view's."},
    "elevation": {"type": "number", "minimum": -90, "maximum": 90,
                  "description": "Optional camera elevation in degrees: 90 looks straight down."},
    "width": {"type": "integer", "minimum": MIN_PX, "maximum": MAX_PX,
              "description": f"Image width in pixels ({MIN_PX}-{MAX_PX}, default 800)."},
    "height": {"type": "integer", "minimum": MIN_PX, "maximum": MAX_PX,
               "description": f"Image height in pixels ({MIN_PX}-{MAX_PX}, default 600)."},
    "section": {"type": "object",
                "properties": {"axis": {"type": "string", "enum": ["x", "y", "z"]},
                               "offset": {"type": "number"},
                               "point": {"type": "array", "items": {"type": "number"}, "minItems": 3,
                                         "maxItems": 3},
                               "normal": {"type": "array", "items": {"type": "number"}, "minItems": 3,
                                          "maxItems": 3}},
                "additionalProperties": False,
                "description": "A cutting plane: {\"axis\": \"z\", \"offset\": 5} or {\"point\": [x, y, z], "
                               "\"normal\": [nx, ny, nz]}. With view 'section' the cut is drawn flat, filled "
                               "and hatched; with a 3D view the half facing the camera is cut away and the cut "
                               "face is hatched."},
}
MEASURE_PARAMS = {"object_name": OBJECT}
DISTANCE_PARAMS = {"a": dict(OBJECT, description="The first object's name."),
                   "b": dict(OBJECT, description="The second object's name.")}

RENDER_DESCRIPTION = (
    "Render the session's shapes to a PNG image (returned as image content) plus a one-line caption "
    "(view, mm per pixel, bounding box). Flat-shaded with dark edges, one colour per object, axis triad "
    "and mm scale bar. Views: iso, top, bottom, front, back, left, right, any azimuth/elevation, 'sheet' "
    "(four views) and 'section' (a true planar cut, filled and hatched, with mm axes). Runs in a disposable "
    "jailed process: the session is never changed.")
MEASURE_DESCRIPTION = (
    "Measure one object exactly (OCCT, not the mesh): volume, area, bounding box (min/max/size/centre), "
    "centre of mass, counts of solids/shells/faces/edges/vertices, face types with areas, cylinder "
    "diameters (hole or boss), validity, and for solids whether they are closed and manifold.")
DISTANCE_DESCRIPTION = (
    "Minimum distance between two objects and the two closest points; when two solids overlap (or one is "
    "inside the other) the distance is 0 and the overlap volume is given.")
VALIDATE_DESCRIPTION = (
    "Check an object is ready to export (STEP/STL for printing or machining): PASS or FAIL with the reasons "
    "(BRepCheck validity, has a solid, closed, manifold, positive volume, no self-intersection) and "
    "warnings (e.g. several separate solids).")

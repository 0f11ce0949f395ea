"""Replies of the CAD services (render, measure, distance, validate), rebuilt from untrusted input.

The op ran in a disposable next of a session that may have run hostile code, so its reply is
rebuilt field by field: known keys only, finite numbers within bounds, safe capped strings
(:mod:`launcher.replies.validate`), capped lists. A render's PNG goes through
:mod:`launcher.replies.png` (byte cap, chunk walk, IHDR size equal to what was asked for) and is
passed on untouched, base64-encoded; its caption is built here from checked numbers and the
request, never taken from the jail.

Blocks: malformed, oversized or self-contradicting replies (a validate PASS with a failed check
becomes FAIL). Does not block: a session that lies about its own model; it cannot reach anything
else.
"""
from __future__ import annotations

import base64
import re

from jail.wire.caps import MEASURE_LIST_CAP, NAME_CAP, RENDER_MAX_OBJECTS

from launcher.replies import png as png_check
from launcher.replies import validate as replies

NAME_RE = re.compile(rf"^[A-Za-z_][A-Za-z0-9_]{{0,{NAME_CAP - 1}}}$")
# a render's part: a name, an element of it (parts[0], parts['lid'], parts[#2]) or a child's label
_KEY = r"(?:-?[0-9]{1,19}|#[0-9]{1,6}|'[A-Za-z0-9_][A-Za-z0-9_ .\-]{0,47}')"
PART_RE = re.compile(rf"^(?:[A-Za-z_][A-Za-z0-9_]{{0,{NAME_CAP - 1}}}(?:\[{_KEY}\])?|[A-Za-z0-9_][A-Za-z0-9_ .\-]{{0,47}})$")


class ReplyRefused(ValueError):
    """A reply the launcher will not forward; the message says why."""


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


def _part_name(v) -> str:
    """A render's part name (an untrusted label shown only when it is a plain word), else "?"."""
    return v if isinstance(v, str) and len(v) <= NAME_CAP + 60 and PART_RE.fullmatch(v) and v.strip() == v else "?"


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


def plane_label(sec: dict) -> str:
    """A checked section plane as text: ``z = 5`` or ``point (...) normal (...)``."""
    if "axis" in sec:
        return f"{sec['axis']} = {sec['offset']:g}"
    p, n = sec["point"], sec["normal"]
    return f"point ({', '.join(f'{v:g}' for v in p)}) normal ({', '.join(f'{v:g}' for v in n)})"


def render_reply(msg: dict, blob: bytes, req: dict) -> dict:
    """A render reply checked against its request ``req``: ``{"ok", "png_b64", "caption", ...}``,
    ``{"ok": False, "error"}`` for the op's own failure; ReplyRefused for a reply not forwarded."""
    if not isinstance(msg, dict):
        raise ReplyRefused("invalid render reply")
    if msg.get("ok") is not True:
        err = replies.line(msg.get("error"), 1000) or "render failed"
        return {"ok": False, "error": err}
    try:
        w, h = png_check.check_png(blob, expect_size=(req["width"], req["height"]))
    except png_check.PngError as e:
        raise ReplyRefused(f"the session's image was refused: {e}") from None
    if replies.count(msg.get("size")) != len(blob):
        raise ReplyRefused("the session's image was refused: its size does not match the reply")
    mm = _num(msg.get("mm_per_px"), 1e-12, 1e9)
    bb = _bbox(msg.get("bbox"))
    objs = msg.get("objects") if isinstance(msg.get("objects"), list) else []
    names = [_part_name(o) for o in objs[:RENDER_MAX_OBJECTS]]
    cut = ""
    if req["view"] == "section":
        view, cut = "section", ", cut at " + plane_label(req["section"])
    else:
        if req["azimuth"] is not None or req["elevation"] is not None:
            az = req["azimuth"] if req["azimuth"] is not None else _num(msg.get("azimuth"), -360, 360)
            el = req["elevation"] if req["elevation"] is not None else _num(msg.get("elevation"), -90, 90)
            view = f"azimuth {_fmt(az)}, elevation {_fmt(el)}"
        else:
            view = req["view"] + ("" if req["view"] != "sheet" else " (top, iso, front, right)")
        if req["section"] is not None:
            cut = ", cut at " + plane_label(req["section"])
    size = "x".join(_fmt(v) for v in bb["size"]) if bb and bb.get("size") else "?"
    caption = (f"{view} view{cut}, {w}x{h} px; 1 px = {_fmt(mm)} mm; bbox {size} mm; "
               f"objects: {', '.join(names) if names else '?'}")
    return {"ok": True, "png_b64": base64.b64encode(blob).decode("ascii"), "caption": caption,
            "width": w, "height": h, "bytes": len(blob), "mm_per_px": mm, "bbox": bb, "objects": names,
            "triangles": replies.count(msg.get("triangles"), 10 ** 9)}


def measure_reply(r) -> dict:
    if not isinstance(r, dict):
        raise ReplyRefused("invalid measure reply")
    out: dict = {"name": _name(r.get("name")), "counts": _counts(r.get("counts")), "bbox": _bbox(r.get("bbox"))}
    for k in ("volume", "area", "length"):
        if k in r:
            out[k] = _num(r.get(k))
    out["center_of_mass"] = _vec3(r.get("center_of_mass"))
    if isinstance(r.get("face_types"), list):
        out["face_types"] = [{"type": replies.line(ft.get("type"), 20) or "?",
                              "count": replies.count(ft.get("count"), 10 ** 9), "area": _num(ft.get("area"))}
                             for ft in r["face_types"][:MEASURE_LIST_CAP] if isinstance(ft, dict)]
    if isinstance(r.get("cylinders"), list):
        out["cylinders"] = [{"diameter": _num(c.get("diameter")), "faces": replies.count(c.get("faces"), 10 ** 9),
                             "hole": _bool(c.get("hole")), "full": _bool(c.get("full")),
                             "over_half": _bool(c.get("over_half")), "area": _num(c.get("area"))}
                            for c in r["cylinders"][:MEASURE_LIST_CAP] if isinstance(c, dict)]
    for k in ("valid", "closed", "manifold"):
        if k in r:
            out[k] = _bool(r.get(k))
    for k in ("free_edges", "non_manifold_edges"):
        if k in r:
            out[k] = replies.count(r.get(k), 10 ** 9)
    return out


def distance_reply(r) -> dict:
    if not isinstance(r, dict):
        raise ReplyRefused("invalid distance reply")
    out = {"a": _name(r.get("a")), "b": _name(r.get("b")), "distance": _num(r.get("distance"), 0.0),
           "point_a": _vec3(r.get("point_a")), "point_b": _vec3(r.get("point_b")),
           "intersect": _bool(r.get("intersect")), "inside": _bool(r.get("inside"))}
    if "overlap_volume" in r:
        out["overlap_volume"] = _num(r.get("overlap_volume"), 0.0)
    return out


def validate_reply(r) -> dict:
    if not isinstance(r, dict):
        raise ReplyRefused("invalid validate reply")
    status = r.get("status") if r.get("status") in ("PASS", "FAIL") else None
    if status is None:
        raise ReplyRefused("invalid validate reply (status)")
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

"""The CAD service tools: ``render``, ``measure``, ``distance``, ``validate``, ``api``, ``features``.

Each handler sends one request to a *disposable* next of the session (the op runs in
jail/cad/render.py, measure.py or api.py and the process exits afterwards), so the session is
never changed. The schema checks every argument, nested ``objects`` and ``section`` included;
:func:`render_request` adds the rules a plain schema does not express (a section plane is
axis+offset or point+normal, its normal not zero; view 'section' needs a plane; azimuth and
elevation do not apply to 'sheet' or 'section'). Replies are rebuilt by launcher/replies/cad.py;
the launcher never looks inside the model.
"""
from __future__ import annotations

import math

from jail.wire.caps import NAME_CAP, PNG_MAX_BYTES, RENDER_MAX_OBJECTS, RENDER_MAX_PX, RENDER_MIN_PX

from launcher.replies import cad as cad_replies
from launcher.replies import features as feature_replies
from launcher.replies import validate as replies
from launcher.session import SessionError
from launcher.tools import content, text
from launcher.tools.tool import Tool, hints

VIEWS = ("iso", "top", "bottom", "front", "back", "left", "right", "sheet", "section")
COORD = 10 ** 9  # section offsets, points and normals stay within +-COORD


class CadError(ValueError):
    """A request refused before it reaches the jail, or a call that failed in the launcher."""


# ------------------------------------------------------------------ requests
def section_plane(sec: dict | None) -> dict | None:
    """The plane sent to the jail: ``{"axis", "offset"}`` or ``{"point", "normal"}`` (defaults filled).
    A point and a normal along an axis become that axis' plane, so the section's axes read in world
    coordinates (X, Y, Z), not u and v from the point."""
    if sec is None:
        return None
    if "axis" in sec:
        if "point" in sec or "normal" in sec:
            raise CadError("section: give axis+offset or point+normal, not both")
        return {"axis": sec["axis"], "offset": float(sec.get("offset", 0.0))}
    if "normal" not in sec:
        raise CadError("section needs axis (+ offset) or normal (+ point)")
    n = [float(x) for x in sec["normal"]]
    size = math.sqrt(sum(x * x for x in n))
    if size < 1e-9:
        raise CadError("section normal must not be zero")
    point = [float(x) for x in sec.get("point", (0.0, 0.0, 0.0))]
    along = [i for i, x in enumerate(n) if abs(x) > 1e-12 * size]
    if len(along) == 1:  # the plane x = point's x (and so on): drawn and labelled in world coordinates
        return {"axis": "xyz"[along[0]], "offset": point[along[0]]}
    return {"point": point, "normal": n}


def render_request(objects=None, view="iso", azimuth=None, elevation=None, width=800, height=600,
                   section=None) -> dict:
    """The ``render`` request for arguments the schema accepted; CadError for a bad combination."""
    req = {"t": "render", "objects": None if objects is None else list(objects), "view": view,
           "width": width, "height": height, "section": section_plane(section),
           "azimuth": None if azimuth is None else float(azimuth),
           "elevation": None if elevation is None else float(elevation)}
    if view == "section" and req["section"] is None:
        raise CadError("view 'section' needs a section plane: {\"axis\": \"z\", \"offset\": 5} or "
                       "{\"point\": [x, y, z], \"normal\": [nx, ny, nz]}")
    if view in ("sheet", "section") and (azimuth is not None or elevation is not None):
        raise CadError(f"azimuth/elevation do not apply to view {view!r}")
    return req


def _ask(session, req: dict, cap: int | None = None):
    try:
        return session.ask(req, req["t"], cap=cap)
    except SessionError:
        raise
    except Exception as e:  # noqa: BLE001 - the type only: the text may come from the session
        raise CadError(f"{req['t']} failed: {type(e).__name__}") from None


def _service(session, req: dict, rebuild) -> dict:
    """``{"ok": True, <op>: rebuilt result}`` for a measure/distance/validate request."""
    msg, _blob = _ask(session, req)
    if not isinstance(msg, dict):
        return {"ok": False, "error": f"invalid {req['t']} reply"}
    if msg.get("ok") is not True:
        return {"ok": False, "error": replies.line(msg.get("error"), 1000) or f"{req['t']} failed"}
    try:
        return {"ok": True, req["t"]: rebuild(msg.get("result"))}
    except cad_replies.ReplyRefused as e:
        return {"ok": False, "error": str(e)}


# ------------------------------------------------------------------ handlers
def render(ctx, session, objects=None, view="iso", azimuth=None, elevation=None, width=800, height=600,
           section=None) -> dict:
    try:
        req = render_request(objects, view, azimuth, elevation, width, height, section)
    except CadError as e:
        return {"ok": False, "error": str(e)}
    msg, blob = _ask(session, req, cap=PNG_MAX_BYTES + 65536)
    try:
        return cad_replies.render_reply(msg, blob, req)
    except cad_replies.ReplyRefused as e:
        return {"ok": False, "error": str(e)}


def measure(ctx, session, object_name, check=False) -> dict:
    return _service(session, {"t": "measure", "name": object_name, "check": check is True},
                    cad_replies.measure_reply)


def distance(ctx, session, a, b) -> dict:
    return _service(session, {"t": "distance", "a": a, "b": b}, cad_replies.distance_reply)


def validate(ctx, session, object_name) -> dict:
    return _service(session, {"t": "validate", "name": object_name}, cad_replies.validate_reply)


def api(ctx, session, name="", query="") -> dict:
    msg, _ = session.ask({"t": "api", "name": name, "query": query}, "api", timeout=30)
    r = replies.bounded(msg, depth=3, items=100, str_cap=3000)  # untrusted: a safe, bounded copy
    if not isinstance(r, dict) or r.get("ok") is not True:
        return {"error": text.api_text(r if isinstance(r, dict) else {}).removeprefix("Error: ")}
    return {"ok": True, "text": text.api_text(r)}


# ------------------------------------------------------------------ content
def _failed(result: dict, what: str) -> list[dict] | None:
    if result.get("ok") is not True:
        return [content.text(f"Error: {result.get('error', what + ' failed')}")]
    return None


def _g(x) -> str:
    return "?" if x is None else f"{x:.6g}"


def _v(v) -> str:
    return "(?)" if not v else "(" + ", ".join(_g(x) for x in v) + ")"


def render_content(result: dict) -> list[dict]:
    return _failed(result, "render") or [content.text(result["caption"]), content.image(result["png_b64"])]


def measure_content(result: dict) -> list[dict]:
    failed = _failed(result, "measure")
    if failed:
        return failed
    m = result["measure"]
    c = m.get("counts", {})

    def n_of(k: str) -> str:
        n = c.get(k, 0)
        return f"{n} {k if n != 1 else k[:-1] if k != 'vertices' else 'vertex'}"
    lines = [f"{m['name']}: " + ", ".join(n_of(k) for k in ("solids", "shells", "faces", "edges", "vertices"))]
    for k, unit in (("volume", "mm^3"), ("area", "mm^2"), ("length", "mm")):
        if k in m:
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
            f"d={_g(cy['diameter'])} x{cy['faces']}{_cylinder_word(cy)}" for cy in m["cylinders"]))
    checks = [f"valid={m['valid']}"] if "valid" in m else ["validity: not checked (call validate)"]
    checks += [f"{k}={m[k]}" for k in ("closed", "manifold") if k in m]
    if checks:
        lines.append(" ".join(checks))
    return [content.text("\n".join(lines))]


def _cylinder_word(cy: dict) -> str:
    """What a group of cylinder faces is: all the way round, a hole (concave) or a shaft/boss; more
    than half round, a partial hole (a keyway, or cut by an edge) or a partial shaft (a flat); at
    most half, a rounded edge (convex) or a fillet in a corner or a slot's round end (concave: measure
    cannot tell them apart, features can). Unknown: nothing said."""
    concave, full = cy.get("hole"), cy.get("full")
    if concave is None or full is None:
        return ""
    if full:
        return " hole" if concave else " shaft/boss"
    if cy.get("over_half"):
        return " partial hole" if concave else " partial shaft"
    return " fillet/slot end" if concave else " rounded edge"


def distance_content(result: dict) -> list[dict]:
    failed = _failed(result, "distance")
    if failed:
        return failed
    d = result["distance"]
    s = f"distance {d['a']} - {d['b']}: {_g(d['distance'])} mm, closest points {_v(d['point_a'])} and {_v(d['point_b'])}"
    if d.get("intersect") and d.get("overlap_volume") is None:  # a face, wire or edge: no volume to share
        s += "\nthey touch or cross (not both solids: no overlap volume)"
    elif d.get("intersect"):
        s += f"\nthey intersect: overlap volume {_g(d.get('overlap_volume'))} mm^3"
    elif d.get("distance") == 0:
        s += "\nthey touch (no overlap volume)"
    return [content.text(s)]


def validate_content(result: dict) -> list[dict]:
    failed = _failed(result, "validate")
    if failed:
        return failed
    v = result["validate"]
    lines = [f"{v['name']}: {v['status']}"]
    lines += [f"  FAIL: {r}" for r in v["reasons"]]
    lines += [f"  warning: {w}" for w in v["warnings"]]
    lines += [f"  ok: {c['check']}: {c['detail']}" for c in v["checks"] if c["ok"]]
    return [content.text("\n".join(lines))]


def api_content(result: dict) -> list[dict]:
    return [content.text(str(result.get("text", "")))]


# ------------------------------------------------------------------ declarations
OBJECT = {"type": "string", "minLength": 1, "maxLength": NAME_CAP,
          "description": "A top-level name bound in the session (e.g. 'part'), as listed by session_state."}
_VEC3 = {"type": "array", "items": {"type": "number", "minimum": -COORD, "maximum": COORD},
         "minItems": 3, "maxItems": 3}
# every CAD service reads the session from a disposable process: read-only, repeatable
_READS = hints(read_only=True, destructive=False, idempotent=True, open_world=False)

RENDER = Tool(
    "render", "Render a view",
    "Render the session's shapes to a PNG image (returned as image content) plus a one-line caption "
    "(view, mm per pixel, bounding box). Flat-shaded with dark edges, one colour per object, axis triad "
    "and mm scale bar. Views: iso, top, bottom, front, back, left, right, any azimuth/elevation, 'sheet' "
    "(four views) and 'section' (a true planar cut, filled and hatched, with mm axes). Runs in a disposable "
    "jailed process: the session is never changed.",
    params={
        "objects": {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": NAME_CAP},
                    "maxItems": RENDER_MAX_OBJECTS,
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
        "width": {"type": "integer", "minimum": RENDER_MIN_PX, "maximum": RENDER_MAX_PX,
                  "description": f"Image width in pixels ({RENDER_MIN_PX}-{RENDER_MAX_PX}, default 800)."},
        "height": {"type": "integer", "minimum": RENDER_MIN_PX, "maximum": RENDER_MAX_PX,
                   "description": f"Image height in pixels ({RENDER_MIN_PX}-{RENDER_MAX_PX}, default 600)."},
        "section": {"type": "object",
                    "properties": {"axis": {"type": "string", "enum": ["x", "y", "z"]},
                                   "offset": {"type": "number", "minimum": -COORD, "maximum": COORD},
                                   "point": _VEC3, "normal": _VEC3},
                    "additionalProperties": False,
                    "description": "A cutting plane: {\"axis\": \"z\", \"offset\": 5} or {\"point\": [x, y, z], "
                                   "\"normal\": [nx, ny, nz]}. With view 'section' the cut is drawn flat, filled "
                                   "and hatched; with a 3D view the half facing the camera is cut away and the cut "
                                   "face is hatched."},
    },
    handler=render, renderer=render_content, changes_session=False, annotations=_READS)

MEASURE = Tool(
    "measure", "Measure an object",
    "Measure one object exactly (OCCT, not the mesh): volume, area, bounding box (min, max, size, centre), "
    "centre of mass, topology counts, face types with areas, cylinder "
    "diameters (hole, shaft/boss, partial hole/shaft, rounded edge, fillet/slot end), validity, and whether "
    "solids are closed and "
    "manifold. The full "
    "validity check (BRepCheck) runs only with check=true (validate runs it too).",
    params={"object_name": OBJECT, "check": {"type": "boolean", "default": False,
                                             "description": "Also run the full validity check (slower)."}},
    required=("object_name",),
    handler=measure, renderer=measure_content, changes_session=False, annotations=_READS)

DISTANCE = Tool(
    "distance", "Distance between two objects",
    "Minimum distance between two objects and the two closest points; when two solids overlap (or one is "
    "inside the other) the distance is 0 and the overlap volume is given.",
    params={"a": dict(OBJECT, description="The first object's name."),
            "b": dict(OBJECT, description="The second object's name.")}, required=("a", "b"),
    handler=distance, renderer=distance_content, changes_session=False, annotations=_READS)

VALIDATE = Tool(
    "validate", "Check export readiness",
    "Check an object is ready to export (STEP/STL for printing or machining): PASS or FAIL with the reasons "
    "(BRepCheck validity, has a solid, closed, manifold, positive volume, no self-intersection) and "
    "warnings (e.g. several separate solids).",
    params={"object_name": OBJECT}, required=("object_name",),
    handler=validate, renderer=validate_content, changes_session=False, annotations=_READS)

API = Tool(
    "api", "build123d API look-up",
    "Look up the build123d API (computed in the jail, read-only): api(name='fillet'), api(name='Box'), "
    "api(name='Part.edges') give the signature, docstring, a class's methods, properties and class "
    "attributes, an enum's members; api(query='chamf') lists the names containing it; api() gives the build123d and OCP "
    "versions. Use it instead of dir()/help()/__doc__, which session code cannot use.",
    params={"name": {"type": "string", "maxLength": NAME_CAP,
                     "pattern": r"^$|^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*){0,3}$",
                     "description": "A name `from build123d import *` binds, or Class.attribute "
                                    "(e.g. 'Box', 'fillet', 'Part.edges', 'Axis.Z')."},
            "query": {"type": "string", "maxLength": NAME_CAP,
                      "description": "Substring to search for among the build123d names (case-insensitive), "
                                     "e.g. 'fillet'."}},
    handler=api, renderer=api_content, changes_session=False, annotations=_READS)


# ------------------------------------------------------------------ features
FEATURE_KINDS = feature_replies.KINDS


def features(ctx, session, object_name, kinds=None) -> dict:
    req = {"t": "features", "name": object_name, "kinds": None if not kinds else list(dict.fromkeys(kinds))}
    out = _service(session, req, lambda r: feature_replies.features_reply(r, object_name))
    if out.get("ok") and req["kinds"]:
        out["kinds"] = req["kinds"]  # what was asked (the launcher's own, schema-checked): for the text
    return out


def _at(c) -> str:
    return "(" + ", ".join(f"{x:.4g}" for x in c) + ")"


def _axis_word(a) -> str:
    names = {(0, 0, -1): "-Z", (0, 0, 1): "+Z", (0, -1, 0): "-Y", (0, 1, 0): "+Y", (-1, 0, 0): "-X", (1, 0, 0): "+X"}
    key = tuple(round(x) if abs(abs(x) - round(abs(x))) < 1e-6 else None for x in a)
    return names.get(key, "axis " + _at(a))


def _hole_kind(h: dict) -> str:
    s = "through" if h["through"] else f"blind depth {_g(h['depth'])}"
    s += f" d={_g(h['diameter'])}"
    if h["countersink"]:
        s += f" countersink d={_g(h['countersink']['diameter'])} {_g(h['countersink']['angle'])}°"
    if h["counterbore"]:
        s += f" counterbore d={_g(h['counterbore']['diameter'])} depth {_g(h['counterbore']['depth'])}"
    for b in h["bores"]:
        s += f", bore d={_g(b['diameter'])} at depth {_g(b['start'])} to {_g(b['end'])}"
    if h["keyway"]:
        s += f" keyway width {_g(h['keyway']['width'])} depth {_g(h['keyway']['depth'])}"
    if h["flat"]:
        s += (f" flat {_g(h['flat']['across'])} across" if h["flat"]["count"] == 1
              else f" double-D {_g(h['flat']['across'])} across flats")
    if h["partial"]:
        s += " partial (open on one side)"
    if h["ball"] is not None:
        s += f" spherical (ball r={_g(h['ball'])})"
    return s + _draft(h)


def _draft(x: dict) -> str:
    """A drafted wall's angle; a negative one widens away from the entry (or the base): an undercut."""
    if x["draft"] is None:
        return ""
    return f" draft {_g(x['draft'])}°" + (" (undercut)" if x["draft"] < 0 else "")


_SLOT_ENDS = {("round", "open"): "open-ended ", ("square", "open"): "square-ended open-ended ",
              ("square", "square"): "square-ended ", ("open", "open"): "open at both ends "}


def _slot_kind(s: dict) -> str:
    size = (f"arc r={_g(s['arc']['radius'])} {_g(s['arc']['sweep'])}°" if s["arc"] else f"length {_g(s['length'])}")
    cb = s["counterbore"]
    tee = (f" T-slot (cavity {_g(s['tee']['width'])} wide, {_g(s['tee']['height'])} high)" if s["tee"] else "")
    return (f"{size} width {_g(s['width'])}{_slot_walls(s)}{tee} " + _SLOT_ENDS.get(tuple(s["ends"]), "")
            + ("through" if s["through"] else f"depth {_g(s['depth'])}")
            + (f" counterbore {_g(cb['length'])} x {_g(cb['width'])} depth {_g(cb['depth'])}" if cb else ""))


def _slot_walls(s: dict) -> str:
    """Slanted walls: a V (they meet at the bottom) by its included angle, a dovetail by its walls' angle
    to the floor (a 60° cutter's is 60°), else the draft."""
    d = s["draft"]
    if d is None:
        return ""
    if d < 0:
        return f" dovetail {_g(90 + d)}°"
    depth = s["depth"] or 0.0
    if depth > 0 and abs(s["width"] - 2 * depth * math.tan(math.radians(d))) <= 1e-5 * max(1.0, s["width"]):
        return f" V {_g(2 * d)}°"
    return _draft(s)


def _step_kind(s: dict) -> str:
    stopped = " stopped at one end" if "square" in s["ends"] else ""
    return (f"width {_g(s['width'])} depth {_g(s['depth'])} length {_g(s['length'])}{stopped} "
            f"{_axis_word(s['axis'])} along {_axis_word(s['direction'])} facing {_axis_word(s['side'])}")


def _polygon(p: dict) -> str | None:
    """A pocket's or pad's rectangle or regular polygon in words; None for other shapes. A regular
    polygon's width is across flats when its sides come in opposite pairs, else from a flat to the
    opposite corner (a pentagon)."""
    w, n = _g(p["width"]), p["sides"]
    if p["shape"] == "rectangle":
        return f"square {w}" if p["width"] == p["length"] else f"rectangle {_g(p['length'])} x {w}"
    if p["shape"] == "regular":
        return f"{'hex' if n == 6 else f'{n}-sided'} {w} {'across flats' if n % 2 == 0 else 'flat to corner'}"
    return None


def _laid(p: dict, s: str, along: bool) -> str:
    """``s`` with the outline's direction (a long one, when ``along``) and corner radius."""
    if along and p["width"] != p["length"] and p["shape"] != "regular":
        s += f" along {_axis_word(p['direction'])}"
    if p["corner_radius"] is not None:
        s += f" r={_g(p['corner_radius'])}"
    return s


def _pocket_kind(p: dict, along: bool = True) -> str:
    """``along``: name the direction of a long outline (not for copies turned round a circle)."""
    w, n = _g(p["width"]), p["sides"]
    if (poly := _polygon(p)) is not None:
        s = poly
    elif p["shape"] == "L":
        s = f"L-shaped {_g(p['length'])} x {w}"
    elif p["shape"] == "oval":
        s = f"oval {_g(p['length'])} x {w}"
    elif p["shape"] == "freeform":
        s = f"freeform {_g(p['length'])} x {w}"
    elif p["shape"] == "sector" and p["sector"]:
        sc = p["sector"]
        s = f"sector r={_g(sc['inner_radius'])}..{_g(sc['outer_radius'])} {_g(sc['angle'])}°"
        if p["corner_radius"] is not None:
            s += f" corners r={_g(p['corner_radius'])}"
        return s + (" through" if p["through"] else f" depth {_g(p['depth'])}") + _island(p)
    else:
        s = f"{n}-sided {_g(p['length'])} x {w}"
        if p["curved"]:
            s = f"{n}-sided ({p['curved']} curved) {_g(p['length'])} x {w}"
    return _laid(p, s, along) + _draft(p) + (" through" if p["through"] else f" depth {_g(p['depth'])}") + _island(p)


def _pad_kind(p: dict, along: bool = True) -> str:
    """A pad's outline and height; ``along`` as for a pocket."""
    s = _polygon(p) or (f"obround {_g(p['length'])} x {_g(p['width'])}" if p["shape"] == "obround" else
                        f"{_g(p['length'])} x {_g(p['width'])} ({p['sides']} straight sides)")
    return _laid(p, s, along) + f" height {_g(p['height'])}"


def _island(p: dict) -> str:
    """What stands on a pocket's floor: the largest island's size."""
    i = p["island"]
    if not i:
        return ""
    size = f"{_g(i['length'])} x {_g(i['width'])}"
    return f" round an island {size}" if i["count"] == 1 else f" round {i['count']} islands (the largest {size})"


def _pattern_text(p: dict) -> str:
    if p["type"] == "bolt_circle":
        return f"bolt circle r={_g(p['radius'])} at {_at(p['center'])}"
    if p["type"] == "arc":
        return (f"arc r={_g(p['radius'])} at {_at(p['center'])}, {_g(p['pitch_angle'])}° apart from "
                f"{_g(p['start_angle'])}°")
    if p["type"] == "radial":
        return f"radial pattern r={_g(p['radius'])} round {_axis_word(p['axis'])} through {_at(p['center'])}"
    if p["type"] == "bundle":
        return (f"staggered bundle of {p['counts'][1]} rows (up to {p['counts'][0]} a row) pitch "
                f"{_g(p['pitch'][0])} x {_g(p['pitch'][1])}, rows along {_axis_word(p['directions'][0])}")
    if p["type"] in ("grid", "staggered"):
        grid = f"{p['counts'][0]}x{p['counts'][1]} grid pitch {_g(p['pitch'][0])} x {_g(p['pitch'][1])}"
        return grid + _empty_text(p) if p["type"] == "grid" else \
            f"staggered {grid}, rows along {_axis_word(p['directions'][0])}"
    return f"linear pitch {_g(p['pitch'])} along {_at(p['direction'])}{_empty_text(p)}"


EMPTY_SHOWN = 4  # a lattice's empty positions named in its text (the rest: counted)


def _empty_text(p: dict) -> str:
    """`` (1 empty: (0, 0, 5))``: the lattice's positions that hold no member, the first few named."""
    empty = p.get("empty") or []
    if not empty:
        return ""
    more = ", ..." if len(empty) > EMPTY_SHOWN else ""
    return f" ({len(empty)} empty: {', '.join(_at(q) for q in empty[:EMPTY_SHOWN])}{more})"


def _a(text: str) -> str:
    """``text`` with its article: "an arc ...", "a bolt circle ..."."""
    return ("an " if text.startswith("a") else "a ") + text


def _or(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def features_content(result: dict) -> list[dict]:
    """One line per kind found; holes, bosses and slots grouped by kind, with the pattern a group makes and
    its centres (entry centres, base centres); the numbers are in structuredContent."""
    failed = _failed(result, "features")
    if failed:
        return failed
    f = result["features"]
    lines = [f"{f['name']}:"]
    said: dict[str, set] = {"holes": set(), "bosses": set(), "slots": set(), "pockets": set(), "pads": set(),
                            "steps": set()}  # lists a line named

    def grouped(of: str, kind_of) -> None:
        """One line per kind of hole (boss, slot): count, kind, the pattern they make, centres."""
        radial = {i: k for k, p in enumerate(f["patterns"]) if p["of"] == of and p["type"] == "radial"
                  for i in p["members"]}  # one line per radial pattern, whatever each member's axis
        turned = {i: k for k, p in enumerate(f["patterns"]) if p["of"] == of and p["type"] in ("bolt_circle", "arc")
                  and len({tuple(f[of][m].get("direction", ())) for m in p["members"]}) > 1
                  for i in p["members"]}  # and per circle of copies turned round it, whatever their direction
        groups: dict[tuple, list[int]] = {}
        for i, x in enumerate(f[of]):
            groups.setdefault((kind_of(x, i in radial, i in turned), radial.get(i, turned.get(i))), []).append(i)
        pats: dict[tuple, list[str]] = {}
        for p in f["patterns"]:
            if p["of"] == of:
                pats.setdefault(tuple(sorted(p["members"])), []).append(_pattern_text(p))
        lines_of: list[tuple[tuple, list[int]]] = []
        for key, idx in groups.items():  # a line per pattern among them (a C-beam's two flanges: two rows)
            rest, parts = set(idx), []
            for members in sorted(pats, key=lambda m: (-len(m), m)):
                if members and len(members) < len(idx) and set(members) <= rest:
                    parts.append(list(members))
                    rest -= set(members)
            if rest:
                parts.append([i for i in idx if i in rest])
            lines_of += [(key, m) for m in sorted(parts, key=min)]
        for (kind, own), idx in lines_of:
            on = pats.get(tuple(sorted(idx)))
            if on:
                said[of].add(tuple(sorted(idx)))
            # copies turned round the circle they are on (an index plate's radial slots) say so
            how = " turned round " if own is not None and own in turned.values() else " on "
            where = (how + " / ".join(_a(t) for t in on)) if on else ""
            centres = ", ".join(_at(f[of][i]["center"]) for i in idx[:12]) + (" ..." if len(idx) > 12 else "")
            lines.append(f"{of}: {len(idx)} x {kind}{where} at {centres}")

    def way(x, radial: bool) -> str:  # a radial pattern's line names the pattern's axis instead
        return "" if radial else " " + _axis_word(x["axis"])

    grouped("holes", lambda h, radial, _: _hole_kind(h) + way(h, radial))
    grouped("bosses", lambda b, radial, _: f"d={_g(b['diameter'])} height {_g(b['height'])}{_draft(b)}"
            + way(b, radial))
    for g in f["fillets"]:
        lines.append(f"fillets: {g['count']} x r={_g(g['radius'])} ({'convex rounds' if g['convex'] else 'concave'})")
    for g in f["chamfers"]:
        size = _g(g["size"]) if g["size2"] is None else f"{_g(g['size'])} x {_g(g['size2'])}"
        lines.append(f"chamfers: {g['count']} x {size}")
    grouped("slots", lambda s, radial, turned: _slot_kind(s) + way(s, radial)
            + ("" if turned or not s["open_end"] else f" along {_axis_word(s['direction'])}" if "round" not in s["ends"]
               and "square" not in s["ends"] else f" opening {_axis_word(s['direction'])}"))
    grouped("pockets", lambda p, radial, turned: _pocket_kind(p, along=not turned) + way(p, radial))
    grouped("pads", lambda p, radial, turned: _pad_kind(p, along=not turned) + way(p, radial))
    for g in f["grooves"]:
        if g["face"]:
            inner = g["diameter"] - 2 * g["width"]
            lines.append(f"groove: face d={_g(g['diameter'])} (inner {_g(inner)}) width {_g(g['width'])} "
                         f"depth {_g(g['depth'])} {_axis_word(g['axis'])} at {_at(g['center'])}")
            continue
        profile = "round-bottomed" if g["profile"] == "round" else g["profile"]  # "round +Z" follows
        lines.append(f"groove: {profile} d={_g(g['diameter'])} width {_g(g['width'])} depth {_g(g['depth'])} "
                     f"{'in a bore ' if g['internal'] else ''}round {_axis_word(g['axis'])} at {_at(g['center'])}")
    grouped("steps", lambda s, radial, turned: _step_kind(s))
    for p in f["patterns"]:
        if tuple(sorted(p["members"])) not in said[p["of"]]:
            # members past the list's cap are not in the reply: say how many a pattern has there
            unlisted = p["count"] - len(set(p["members"]))
            beyond = f" ({unlisted} not listed: past the list's cap)" if unlisted > 0 and f["truncated"] else ""
            lines.append(f"pattern: {p['count']} {p['of']} on {_a(_pattern_text(p))}{beyond}")
    if len(lines) == 1:
        asked = [k for k in result.get("kinds") or () if k in FEATURE_KINDS and k != "patterns"]
        lines.append(f"no {_or(asked or [k for k in FEATURE_KINDS if k != 'patterns'])} "
                     "found")
    if f["truncated"]:
        lines.append("lists cut: " + ", ".join(f"{k} ({n} found)" for k, n in f["truncated"].items()))
    if f["faceted"]:
        lines.append(f"faceted: {f['faceted']['triangles']} of {f['faceted']['faces']} faces are flat triangles, "
                     "as in a mesh made solid (an STL): its round holes, bosses and rounds are facets, which "
                     "features does not read")
    return [content.text("\n".join(lines))]


FEATURES = Tool(
    "features", "Find holes, bosses, fillets",
    "Find one object's holes, bosses, fillets, chamfers, slots, pockets, pads, grooves, steps and patterns from its "
    "exact "
    "geometry "
    "(OCCT). Holes: centre of the entry circle, axis into the material, diameter, depth or through, countersink {diameter, angle}, counterbore "
    "{diameter, depth}, a stepped bore's further bores {diameter, start, end}, keyway {width, depth}, flat (a D or double D), partial: its wall open on one side, draft, ball: a "
    "spherical dimple's radius), bosses (base centre, axis, diameter, height, draft), fillets (radius, convex or concave, "
    "count, centres; a part's rounded corners are fillets, never holes or bosses), chamfers (size, count), "
    "slots (round, square or open ends: a U channel across a block is open at both; straight or arc, counterbored, drafted; "
    "V grooves and dovetails: draft; T-slots: tee), "
    "pockets (walls all round: windows, rectangular, L, oval or freeform (spline) pockets, hex "
    "sockets, a wheel's sector windows; width, length, sides, corner radius, draft, depth or through), pads "
    "(raised outlines that are not round: a rectangular pad, a hex or obround boss, a rib; shape, width, length, "
    "height), grooves (flat, v or round-bottomed; round a shaft, in a bore or in a face), steps (a rebate or shoulder: a floor and one wall along an edge; "
    "width, depth, length, side), and "
    "patterns of holes, bosses, slots, pockets or pads (bolt circles, arcs, grids, staggered rows and bundles, "
    "linear arrays, radial; a grid or array's empty positions). A mesh made solid (mostly flat triangles, an STL) is said to be one: faceted. "
    "The numbers are in structuredContent; the text is a summary. Read-only: runs in "
    "a disposable jailed process.",
    params={"object_name": OBJECT,
            "kinds": {"type": "array", "items": {"type": "string", "enum": list(FEATURE_KINDS)},
                      "minItems": 1, "maxItems": len(FEATURE_KINDS),
                      "description": "Only these kinds (default: all). The reply has every key; the others "
                                     "are empty lists (a pattern's members then too: they index its "
                                     "kind's list)."}},
    required=("object_name",), handler=features, renderer=features_content, changes_session=False,
    annotations=_READS, output_schema=feature_replies.OUTPUT_SCHEMA)

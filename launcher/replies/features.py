"""The ``features`` reply, rebuilt from untrusted input, and its JSON schema (the tool's outputSchema).

The op ran in a disposable next of a session that may have run hostile code, so the reply is
rebuilt field by field into exactly the shape of :data:`OUTPUT_SCHEMA`: known keys only, every
number finite and within +-1e12 (``ReplyRefused`` otherwise, naming the field), vectors of three,
booleans that are booleans, enums from the list, lists cut to ``FEATURES_LIST_CAP`` (the cut
counted in ``truncated``; a pattern's ``empty`` positions to ``PATTERN_EMPTY_CAP``). Nothing the
jail sends is copied as text: the only strings kept are enum values. :func:`check` validates the
rebuilt dict against the schema once more (the MCP server sends it as ``structuredContent``, which
clients validate).

Blocks: non-finite or huge numbers, wrong types, unknown keys, oversized lists, text of any kind,
a ``faceted`` count with more triangles than faces.
Does not block: a session that lies about its own model (wrong but well-formed numbers).
"""
from __future__ import annotations

from jail.wire.caps import FEATURES_LIST_CAP, NAME_CAP, PATTERN_EMPTY_CAP

from launcher.replies import validate as replies
from launcher.replies.cad import ReplyRefused

KINDS = ("holes", "bosses", "fillets", "chamfers", "slots", "pockets", "pads", "grooves", "steps", "patterns")
SLOT_ENDS = ("round", "square", "open")
CENTERS_CAP = 20
BORES_CAP = 8  # a stepped hole's bores listed (more: the first ones)
POCKET_SHAPES = ("rectangle", "regular", "L", "sector", "oval", "freeform", "other")
PAD_SHAPES = ("rectangle", "obround", "regular", "other")
ONE_WALL = ("oval", "freeform")  # shapes whose one wall may go all the way round (an ellipse, a closed spline)
LIMIT = 1e12

# ------------------------------------------------------------------ the schema
_NUM = {"type": "number"}
_POS = {"type": "number", "minimum": 0}
_VEC = {"type": "array", "items": _NUM, "minItems": 3, "maxItems": 3}
_OPT_POS = {"type": ["number", "null"], "minimum": 0}
_COUNT = {"type": "integer", "minimum": 0}


def _obj(props: dict, desc: str = "") -> dict:
    d = {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}
    if desc:
        d["description"] = desc
    return d


def _list(item: dict, cap: int = FEATURES_LIST_CAP) -> dict:
    return {"type": "array", "items": item, "maxItems": cap}


_DRAFT = {"type": ["number", "null"], "minimum": -90, "maximum": 90}
HOLE = _obj({
    "center": dict(_VEC, description="centre of the entry circle (mm)"),
    "axis": dict(_VEC, description="unit vector from the entry into the material"),
    "diameter": dict(_POS, description="diameter of the hole's narrowest full cylinder; a drafted hole's: its "
                                       "wall's at the entry (mm)"),
    "depth": dict(_OPT_POS, description="blind: from the entry to the bottom of the cylinder (mm); through: null"),
    "through": {"type": "boolean"},
    "countersink": {"anyOf": [_obj({"diameter": _POS, "angle": dict(_POS, description="included angle, degrees")}),
                              {"type": "null"}]},
    "counterbore": {"anyOf": [_obj({"diameter": _POS, "depth": _POS}), {"type": "null"}]},
    "bores": dict(_list(_obj({"diameter": _POS,
                              "start": dict(_POS, description="from the entry, along the axis (mm)"),
                              "end": dict(_POS, description="from the entry, along the axis (mm)")}), BORES_CAP),
                  description="a stepped hole's bores besides its counterbore, wider than its diameter, in order "
                              "from the entry (a through hole's may reach its far end: a counterbore from the other "
                              "side)"),
    "length": dict(_POS, description="axial length of the whole hole (mm)"),
    "keyway": {"anyOf": [_obj({"width": _POS, "depth": dict(_POS, description="from the hole's wall to the "
                                                              "keyway's floor (mm)")}),
                         {"type": "null"}]},
    "flat": {"anyOf": [_obj({"count": {"type": "integer", "minimum": 1, "maximum": 2},
                             "across": dict(_POS, description="a D's: from the flat to the wall opposite; a "
                                                               "double D's: between its flats (mm)")},
                            "a D hole's flat, or a double D's two"),
                       {"type": "null"}]},
    "partial": {"type": "boolean", "description": "its wall is open on one side (drilled across the part's edge, "
                                                  "a saddle): more than half a turn, not all the way round"},
    "draft": dict(_DRAFT, description="a drafted (tapered) wall, a moulded part's: its angle to the axis, degrees, "
                                      "positive when it narrows deeper in, negative when it widens (an undercut); "
                                      "null: a straight wall"),
    "ball": dict(_OPT_POS, description="a spherical dimple (a ball seat, a detent: a sphere's cap in a face, no "
                                       "wall): its sphere's radius (mm); diameter is the mouth's, depth to the "
                                       "sphere's bottom; null: not one"),
})
BOSS = _obj({"center": dict(_VEC, description="centre of the base circle (mm)"),
             "axis": dict(_VEC, description="unit vector from the base to the top"),
             "diameter": dict(_POS, description="a drafted boss's: at its base (mm)"), "height": _POS,
             "draft": dict(_DRAFT, description="a drafted (tapered) wall: its angle to the axis, degrees, positive "
                                               "when it narrows towards the top; null: a straight wall")})
FILLET = _obj({"radius": _POS, "convex": {"type": "boolean", "description": "a rounded outside edge"},
               "count": _COUNT, "centers": _list(_VEC, CENTERS_CAP)})
CHAMFER = _obj({"size": _POS, "size2": dict(_OPT_POS, description="the other leg when unequal, else null"),
                "count": _COUNT, "centers": _list(_VEC, CENTERS_CAP)})
SLOT = _obj({"center": dict(_VEC, description="centre of the slot where it opens (the entry) (mm)"),
             "length": dict(_POS, description="overall length, end to end (mm)"), "width": _POS,
             "axis": dict(_VEC, description="unit vector from the entry into the material"),
             "direction": dict(_VEC, description="unit vector along the slot's length"),
             "depth": dict(_OPT_POS, description="blind: from the entry to the floor (mm); through: null"),
             "through": {"type": "boolean"},
             "open_end": {"type": "boolean", "description": "runs out of the part at an end (a U slot or a notch "
                          "at an edge, a channel): direction points there when one end is open"},
             "ends": {"type": "array", "items": {"type": "string", "enum": list(SLOT_ENDS)}, "minItems": 2,
                      "maxItems": 2, "description": "what closes each end, the one at -direction first: round (a "
                      "milled slot's), square (an end wall: a straight-walled slot) or open (runs out of the "
                      "part: a channel open at both ends)"},
             "arc": {"anyOf": [_obj({"center": dict(_VEC, description="the arc's centre, at the entry (mm)"),
                                     "radius": dict(_POS, description="of the slot's centre line (mm)"),
                                     "sweep": {"type": "number", "minimum": 0, "maximum": 360,
                                               "description": "end centre to end centre, degrees"}},
                                    "an arc (kidney) slot: its centre line is this arc; center is the slot's "
                                    "middle on it, length runs between the ends' tips along direction"),
                               {"type": "null"}]},
             "counterbore": {"anyOf": [_obj({"width": _POS, "length": _POS,
                                             "depth": dict(_POS, description="from the entry to its floor (mm)")},
                                            "a wider, longer slot over this one on its centre line (for a cap "
                                            "screw's head); center is then its entry, depth counts from there"),
                                       {"type": "null"}]},
             "draft": dict(_DRAFT, description="slanted walls: their angle to the axis, degrees, positive when the "
                                               "slot narrows deeper in (a V groove: its walls meet at the bottom, "
                                               "a 90° V has 45; a drafted channel), negative when it widens (a "
                                               "dovetail: an undercut); width is then the mouth's; null: walls "
                                               "square to the mouth"),
             "tee": {"anyOf": [_obj({"width": dict(_POS, description="across the cavity, wall to wall (mm)"),
                                     "height": dict(_POS, description="from the floor to the lips (mm)")},
                                    "a T-slot: a wider cavity under the lips either side of the mouth; width is "
                                    "then the mouth's, depth from the entry to the cavity's floor"),
                               {"type": "null"}]}})
POCKET = _obj({"center": dict(_VEC, description="centre of the outline where the pocket opens (the entry) (mm)"),
               "axis": dict(_VEC, description="unit vector from the entry into the material"),
               "depth": dict(_OPT_POS, description="blind: from the entry to the floor (mm); through (a window): "
                                                   "null"),
               "through": {"type": "boolean"},
               "width": dict(_POS, description="narrowest distance across, between opposite walls; an L's or "
                                                "other outline with a convex corner: its narrower extent (mm)"),
               "length": dict(_POS, description="extent square to width, along direction (mm)"),
               "direction": dict(_VEC, description="unit vector along length"),
               "sides": {"type": "integer", "minimum": 1, "description": "number of walls, straight and curved "
                                                                       "(corner radii not counted); an oval's or a "
                                                                       "closed spline's: 1"},
               "shape": {"type": "string", "enum": list(POCKET_SHAPES),
                         "description": "rectangle (a square too), regular (a hexagon), L (six walls at right "
                                        "angles, one convex corner), sector (a wheel's window: see sector), "
                                        "oval (an ellipse: width and length its diameters), freeform (a "
                                        "spline or other free curve among its walls: width its outline's "
                                        "narrowest extent), or other"},
               "corner_radius": dict(_OPT_POS, description="the largest corner's; null for sharp corners"),
               "draft": dict(_DRAFT, description="drafted (tapered) walls, a moulded part's: their angle to the "
                                                 "axis, degrees, positive when it narrows deeper in, negative when "
                                                 "it widens (an undercut); width and length are then the entry's; "
                                                 "null: straight walls"),
               "island": {"anyOf": [_obj({"count": {"type": "integer", "minimum": 1},
                                          "width": dict(_POS, description="the largest island's, across (mm)"),
                                          "length": dict(_POS, description="the largest island's, along "
                                                                           "direction (mm)")},
                                         "what stands on a blind pocket's floor: a rectangular groove's middle, "
                                         "a post (a round one is also a boss)"),
                                    {"type": "null"}]},
               "curved": dict(_COUNT, description="how many of its sides are curved (an arc: a D's round end, "
                                                  "a wheel's rim); 0: straight walls"),
               "sector": {"anyOf": [_obj({"center": dict(_VEC, description="on its axis, at the entry (mm)"),
                                          "inner_radius": dict(_POS, description="0: a pie slice (mm)"),
                                          "outer_radius": _POS,
                                          "angle": {"type": "number", "minimum": 0, "maximum": 360,
                                                    "description": "between its straight sides, degrees"}},
                                         "a ring sector: two straight sides round one axis (through it, or off "
                                         "it for spokes of even width), an arc round it outside and one inside "
                                         "or none; width is then radial, length the outer chord"),
                                    {"type": "null"}]}},
              "walls all round a void along one axis: a window, a milled pocket, a hex socket, a wheel's window")
PAD = _obj({"center": dict(_VEC, description="centre of its outline on the floor it stands on (mm)"),
            "axis": dict(_VEC, description="unit vector from the floor to its top"),
            "shape": {"type": "string", "enum": list(PAD_SHAPES),
                      "description": "rectangle (a square too; corner radii allowed), obround (two straight "
                                     "sides and two half-round ends), regular (a hexagon), or other"},
            "width": dict(_POS, description="narrowest extent across one of its straight sides (across flats; "
                                            "an obround's: its ends' diameter) (mm)"),
            "length": dict(_POS, description="extent along that side, along direction (mm)"),
            "direction": dict(_VEC, description="unit vector along length"),
            "height": dict(_POS, description="from the floor to its top (mm)"),
            "sides": {"type": "integer", "minimum": 1, "description": "its straight sides"},
            "corner_radius": dict(_OPT_POS, description="the largest corner's; null for sharp corners")},
           "a raised feature that is not round: a flat top, walls square to it all round, standing on a floor "
           "(a mounting pad, a hex or obround boss, a rib)")
GROOVE = _obj({"center": dict(_VEC, description="on the axis, midway along the groove; a face groove's: at its "
                                                "mouth (mm)"),
               "axis": dict(_VEC, description="a face groove's: from the mouth into the material"),
               "diameter": dict(_POS, description="of the groove's bottom; a face groove's: its outer wall's (mm)"),
               "depth": dict(_POS, description="from the bottom to the lower of its two walls (mm)"),
               "width": dict(_POS, description="along the axis: the bottom's (flat), the opening's (v); a face "
                                                "groove's: radial, outer radius less inner (mm)"),
               "profile": {"type": "string", "enum": ["flat", "v", "round"]},
               "internal": {"type": "boolean", "description": "in a bore (its diameter is the larger)"},
               "face": {"type": "boolean", "description": "a ring cut into a face round the axis (an O-ring face "
                                                          "seal's), between an outer and an inner wall"}},
              "a groove round a shaft (a circlip's, a pulley's V), in a bore (an O-ring's) or in a face")
STEP = _obj({"center": dict(_VEC, description="where the step is entered: mid-length, midway across its floor, at "
                                             "the top of its wall (mm)"),
             "axis": dict(_VEC, description="unit vector from the entry down to the floor"),
             "direction": dict(_VEC, description="unit vector along the step; towards its open end when the other "
                                                 "is stopped"),
             "side": dict(_VEC, description="unit vector from the wall across the floor to the part's edge"),
             "width": dict(_POS, description="across the floor, from the wall to the edge (mm)"),
             "length": dict(_POS, description="along direction (mm)"),
             "depth": dict(_POS, description="the wall's height, from the entry to the floor (mm)"),
             "ends": {"type": "array", "items": {"type": "string", "enum": ["square", "open"]}, "minItems": 2,
                      "maxItems": 2, "description": "each end, the one at -direction first: open (runs out of the "
                      "part) or square (stopped by an end wall)"}},
            "a rebate or shoulder: a floor and one wall along the part's edge")
_MEMBERS = {"type": "array", "items": _COUNT, "maxItems": FEATURES_LIST_CAP}
_OF = {"type": "string", "enum": ["holes", "bosses", "slots", "pockets", "pads"]}
_ROUND = {"center": _VEC, "radius": _POS, "axis": _VEC, "pitch_angle": _NUM, "start_angle": _NUM}
ROUND_TYPES = ("bolt_circle", "arc", "radial")  # the pattern types with the _ROUND fields
GRID_TYPES = ("grid", "staggered", "bundle")  # the pattern types with counts, pitch and directions
_GRID = {"of": _OF, "count": _COUNT, "members": _MEMBERS,  # the fields of GRID_TYPES
         "counts": {"type": "array", "items": _COUNT, "minItems": 2, "maxItems": 2},
         "pitch": {"type": "array", "items": _POS, "minItems": 2, "maxItems": 2},
         "directions": {"type": "array", "items": _VEC, "minItems": 2, "maxItems": 2}}
_EMPTY = {"type": "array", "items": _VEC, "maxItems": PATTERN_EMPTY_CAP,
          "description": "centres of the lattice's positions that hold no member (a grid round a central "
                         "boss, a row with a hole left out); empty when every position holds one"}
PATTERN = {"anyOf": [
    _obj({"type": {"const": "bolt_circle"}, "of": _OF, "count": _COUNT, "members": _MEMBERS, **_ROUND}),
    _obj({"type": {"const": "arc"}, "of": _OF, "count": _COUNT, "members": _MEMBERS, **_ROUND},
         "equally spaced on part of a circle: pitch_angle apart from start_angle, counter-clockwise round axis"),
    _obj({"type": {"const": "radial"}, "of": _OF, "count": _COUNT, "members": _MEMBERS, **_ROUND},
         "members whose axes meet at center, square to axis, equally spaced round it (radius: from center "
         "to their entries)"),
    _obj({"type": {"const": "grid"}, **_GRID, "empty": _EMPTY},
         "counts[0] x counts[1] positions pitch[0] apart along directions[0] and pitch[1] apart along "
         "directions[1]; count: the members, fewer than the positions when some are empty"),
    _obj({"type": {"const": "staggered"}, **_GRID},
         "rows along directions[0] pitch[0] apart, the rows pitch[1] apart along directions[1], every other row "
         "shifted by half a pitch; counts: the longest row's members, the rows"),
    _obj({"type": {"const": "bundle"}, **_GRID},
         "staggered rows of different lengths (a round tube bundle): rows along directions[0] pitch[0] apart, "
         "pitch[1] apart along directions[1], every other row shifted by half a pitch; counts: the longest "
         "row's members, the rows"),
    _obj({"type": {"const": "linear"}, "of": _OF, "count": _COUNT, "members": _MEMBERS, "pitch": _POS,
          "direction": _VEC, "empty": _EMPTY}, "members on one line pitch apart along direction, but for the "
         "empty positions between them"),
]}
OUTPUT_SCHEMA = _obj({
    "name": {"type": "string"},
    "holes": _list(HOLE), "bosses": _list(BOSS), "fillets": _list(FILLET), "chamfers": _list(CHAMFER),
    "slots": _list(SLOT), "pockets": _list(POCKET), "pads": _list(PAD), "grooves": _list(GROOVE),
    "steps": _list(STEP),
    "patterns": _list(PATTERN),
    "truncated": {"type": "object", "additionalProperties": _COUNT,
                  "description": "kinds whose list was cut, with how many were found"},
    "faceted": {"anyOf": [_obj({"faces": _COUNT, "triangles": _COUNT},
                               "most faces are flat triangles: a mesh made solid (an STL), whose round holes, "
                               "bosses and rounds are facets that features does not read"),
                          {"type": "null"}]},
})
_VALIDATOR = []  # built on first use (launcher.tools imports this module)


# ------------------------------------------------------------------ rebuilding
class _Path:
    def __init__(self, where: str):
        self.where = where

    def refuse(self, what: str):
        raise ReplyRefused(f"the session's features reply was refused: {self.where} {what}")


def _num(v, where: str, lo: float = -LIMIT, hi: float = LIMIT) -> float:
    x = replies.number(v)
    if x is None or not lo <= x <= hi:
        _Path(where).refuse("is not a finite number in range")
    return float(x)


def _opt(v, where: str):
    return None if v is None else _num(v, where, 0.0)


def _angle(v, where: str):
    return None if v is None else _num(v, where, -90.0, 90.0)


def _vec(v, where: str) -> list:
    if not isinstance(v, list) or len(v) != 3:
        _Path(where).refuse("is not a 3-vector")
    return [_num(x, f"{where}[{i}]") for i, x in enumerate(v)]


def _bool(v, where: str) -> bool:
    if not isinstance(v, bool):
        _Path(where).refuse("is not a boolean")
    return v


def _int(v, where: str, hi: int = 10 ** 9) -> int:
    n = replies.count(v, hi)
    if n is None:
        _Path(where).refuse("is not a count")
    return n


def _dict(v, where: str) -> dict:
    if not isinstance(v, dict):
        _Path(where).refuse("is not an object")
    return v


def _sub(v, where: str, keys) -> dict | None:
    if v is None:
        return None
    d = _dict(v, where)
    return {k: _num(d.get(k), f"{where}.{k}", 0.0) for k in keys}


def _hole(h, w) -> dict:
    h = _dict(h, w)
    return {"center": _vec(h.get("center"), w + ".center"), "axis": _vec(h.get("axis"), w + ".axis"),
            "diameter": _num(h.get("diameter"), w + ".diameter", 0.0), "depth": _opt(h.get("depth"), w + ".depth"),
            "through": _bool(h.get("through"), w + ".through"),
            "countersink": _sub(h.get("countersink"), w + ".countersink", ("diameter", "angle")),
            "counterbore": _sub(h.get("counterbore"), w + ".counterbore", ("diameter", "depth")),
            "bores": _bores(h.get("bores"), w + ".bores"),
            "length": _num(h.get("length"), w + ".length", 0.0),
            "keyway": _sub(h.get("keyway"), w + ".keyway", ("width", "depth")), "flat": _flat(h.get("flat"), w + ".flat"),
            "partial": _bool(h.get("partial"), w + ".partial"), "draft": _angle(h.get("draft"), w + ".draft"),
            "ball": _opt(h.get("ball"), w + ".ball")}


def _bores(v, w) -> list:
    """Up to BORES_CAP ``{diameter, start, end}``, each starting no deeper than it ends."""
    if not isinstance(v, list):
        _Path(w).refuse("is not a list")
    out = []
    for i, b in enumerate(v[:BORES_CAP]):
        d = _sub(_dict(b, f"{w}[{i}]"), f"{w}[{i}]", ("diameter", "start", "end"))
        if d["start"] > d["end"]:
            _Path(f"{w}[{i}].start").refuse("is past its end")
        out.append(d)
    return out


def _flat(v, w) -> dict | None:
    if v is None:
        return None
    d = _dict(v, w)
    count = _int(d.get("count"), w + ".count", 2)
    if count < 1:
        _Path(w + ".count").refuse("is not 1 or 2")
    return {"count": count, "across": _num(d.get("across"), w + ".across", 0.0)}


def _boss(b, w) -> dict:
    b = _dict(b, w)
    return {"center": _vec(b.get("center"), w + ".center"), "axis": _vec(b.get("axis"), w + ".axis"),
            "diameter": _num(b.get("diameter"), w + ".diameter", 0.0),
            "height": _num(b.get("height"), w + ".height", 0.0), "draft": _angle(b.get("draft"), w + ".draft")}


def _centers(v, w) -> list:
    if not isinstance(v, list):
        _Path(w).refuse("is not a list")
    return [_vec(c, f"{w}[{i}]") for i, c in enumerate(v[:CENTERS_CAP])]


def _fillet(g, w) -> dict:
    g = _dict(g, w)
    return {"radius": _num(g.get("radius"), w + ".radius", 0.0), "convex": _bool(g.get("convex"), w + ".convex"),
            "count": _int(g.get("count"), w + ".count"), "centers": _centers(g.get("centers"), w + ".centers")}


def _chamfer(g, w) -> dict:
    g = _dict(g, w)
    return {"size": _num(g.get("size"), w + ".size", 0.0), "size2": _opt(g.get("size2"), w + ".size2"),
            "count": _int(g.get("count"), w + ".count"), "centers": _centers(g.get("centers"), w + ".centers")}


def _slot(s, w) -> dict:
    s = _dict(s, w)
    return {"center": _vec(s.get("center"), w + ".center"), "length": _num(s.get("length"), w + ".length", 0.0),
            "width": _num(s.get("width"), w + ".width", 0.0), "axis": _vec(s.get("axis"), w + ".axis"),
            "direction": _vec(s.get("direction"), w + ".direction"), "depth": _opt(s.get("depth"), w + ".depth"),
            "through": _bool(s.get("through"), w + ".through"), "open_end": _bool(s.get("open_end"), w + ".open_end"),
            "arc": _arc(s.get("arc"), w + ".arc"),
            "counterbore": _sub(s.get("counterbore"), w + ".counterbore", ("width", "length", "depth")),
            "ends": _ends(s.get("ends"), w + ".ends", SLOT_ENDS), "draft": _angle(s.get("draft"), w + ".draft"),
            "tee": _sub(s.get("tee"), w + ".tee", ("width", "height"))}


def _ends(v, where: str, allowed) -> list[str]:
    if not isinstance(v, list) or len(v) != 2 or not all(isinstance(x, str) and x in allowed for x in v):
        _Path(where).refuse(f"is not two of: {', '.join(allowed)}")
    return [allowed[allowed.index(x)] for x in v]  # the schema's own strings


def _step(s, w) -> dict:
    s = _dict(s, w)
    return {"center": _vec(s.get("center"), w + ".center"), "axis": _vec(s.get("axis"), w + ".axis"),
            "direction": _vec(s.get("direction"), w + ".direction"), "side": _vec(s.get("side"), w + ".side"),
            "width": _num(s.get("width"), w + ".width", 0.0), "length": _num(s.get("length"), w + ".length", 0.0),
            "depth": _num(s.get("depth"), w + ".depth", 0.0),
            "ends": _ends(s.get("ends"), w + ".ends", ("square", "open"))}


def _arc(a, w) -> dict | None:
    if a is None:
        return None
    a = _dict(a, w)
    return {"center": _vec(a.get("center"), w + ".center"), "radius": _num(a.get("radius"), w + ".radius", 0.0),
            "sweep": _num(a.get("sweep"), w + ".sweep", 0.0, 360.0)}


def _pattern(p, w, n_items: dict) -> dict:
    p = _dict(p, w)
    kind, of = p.get("type"), p.get("of")
    if kind not in (*ROUND_TYPES, *GRID_TYPES, "linear") or of not in _OF["enum"]:
        _Path(w).refuse("has an unknown type")
    members = p.get("members")
    if not isinstance(members, list):
        _Path(w + ".members").refuse("is not a list")
    out: dict = {"type": kind, "of": of, "count": _int(p.get("count"), w + ".count"),
                 "members": [_int(m, f"{w}.members[{i}]", max(n_items[of] - 1, 0))
                             for i, m in enumerate(members[:FEATURES_LIST_CAP])]}
    if kind in ROUND_TYPES:
        out.update(center=_vec(p.get("center"), w + ".center"), radius=_num(p.get("radius"), w + ".radius", 0.0),
                   axis=_vec(p.get("axis"), w + ".axis"), pitch_angle=_num(p.get("pitch_angle"), w + ".pitch_angle"),
                   start_angle=_num(p.get("start_angle"), w + ".start_angle"))
    elif kind in GRID_TYPES:
        counts, pitch, dirs = p.get("counts"), p.get("pitch"), p.get("directions")
        if not (isinstance(counts, list) and isinstance(pitch, list) and isinstance(dirs, list)
                and len(counts) == len(pitch) == len(dirs) == 2):
            _Path(w).refuse("is not a grid")
        out.update(counts=[_int(c, f"{w}.counts[{i}]") for i, c in enumerate(counts)],
                   pitch=[_num(x, f"{w}.pitch[{i}]", 0.0) for i, x in enumerate(pitch)],
                   directions=[_vec(d, f"{w}.directions[{i}]") for i, d in enumerate(dirs)])
    else:
        out.update(pitch=_num(p.get("pitch"), w + ".pitch", 0.0), direction=_vec(p.get("direction"), w + ".direction"))
    if kind in ("grid", "linear"):
        empty = p.get("empty", [])
        if not isinstance(empty, list):
            _Path(w + ".empty").refuse("is not a list")
        out["empty"] = [_vec(q, f"{w}.empty[{i}]") for i, q in enumerate(empty[:PATTERN_EMPTY_CAP])]
    return out


def _pocket(p, w) -> dict:
    p = _dict(p, w)
    shape = p.get("shape")
    if shape not in POCKET_SHAPES:
        _Path(w + ".shape").refuse("is not " + ", ".join(POCKET_SHAPES))
    sides = _int(p.get("sides"), w + ".sides", 10 ** 6)
    if sides < (1 if shape in ONE_WALL else 2):  # an oval's or a closed spline's one wall goes all the way round
        _Path(w + ".sides").refuse("is under 1" if shape in ONE_WALL else "is under 2")
    return {"center": _vec(p.get("center"), w + ".center"), "axis": _vec(p.get("axis"), w + ".axis"),
            "depth": _opt(p.get("depth"), w + ".depth"), "through": _bool(p.get("through"), w + ".through"),
            "width": _num(p.get("width"), w + ".width", 0.0), "length": _num(p.get("length"), w + ".length", 0.0),
            "direction": _vec(p.get("direction"), w + ".direction"), "sides": sides, "shape": shape,
            "corner_radius": _opt(p.get("corner_radius"), w + ".corner_radius"),
            "draft": _angle(p.get("draft"), w + ".draft"), "curved": _int(p.get("curved"), w + ".curved", sides),
            "island": _island(p.get("island"), w + ".island"),
            "sector": _sector(p.get("sector"), w + ".sector")}


def _pad(p, w) -> dict:
    p = _dict(p, w)
    shape = p.get("shape")
    if shape not in PAD_SHAPES:
        _Path(w + ".shape").refuse("is not " + ", ".join(PAD_SHAPES))
    return {"center": _vec(p.get("center"), w + ".center"), "axis": _vec(p.get("axis"), w + ".axis"),
            "shape": shape, "width": _num(p.get("width"), w + ".width", 0.0),
            "length": _num(p.get("length"), w + ".length", 0.0),
            "direction": _vec(p.get("direction"), w + ".direction"),
            "height": _num(p.get("height"), w + ".height", 0.0),
            "sides": _int(p.get("sides"), w + ".sides", 10 ** 6),
            "corner_radius": _opt(p.get("corner_radius"), w + ".corner_radius")}


def _island(v, w) -> dict | None:
    if v is None:
        return None
    d = _dict(v, w)
    count = _int(d.get("count"), w + ".count")
    if count < 1:
        _Path(w + ".count").refuse("is under 1")
    return {"count": count, "width": _num(d.get("width"), w + ".width", 0.0),
            "length": _num(d.get("length"), w + ".length", 0.0)}


def _sector(v, w) -> dict | None:
    if v is None:
        return None
    d = _dict(v, w)
    return {"center": _vec(d.get("center"), w + ".center"),
            "inner_radius": _num(d.get("inner_radius"), w + ".inner_radius", 0.0),
            "outer_radius": _num(d.get("outer_radius"), w + ".outer_radius", 0.0),
            "angle": _num(d.get("angle"), w + ".angle", 0.0, 360.0)}


def _groove(g, w) -> dict:
    g = _dict(g, w)
    profile = g.get("profile")
    if profile not in ("flat", "v", "round"):
        _Path(w + ".profile").refuse("is not flat, v or round")
    return {"center": _vec(g.get("center"), w + ".center"), "axis": _vec(g.get("axis"), w + ".axis"),
            "diameter": _num(g.get("diameter"), w + ".diameter", 0.0), "depth": _num(g.get("depth"), w + ".depth", 0.0),
            "width": _num(g.get("width"), w + ".width", 0.0), "profile": profile,
            "internal": _bool(g.get("internal"), w + ".internal"), "face": _bool(g.get("face"), w + ".face")}


_REBUILD = {"holes": _hole, "bosses": _boss, "fillets": _fillet, "chamfers": _chamfer, "slots": _slot,
            "pockets": _pocket, "pads": _pad, "grooves": _groove, "steps": _step}


def features_reply(r, name: str) -> dict:
    """The reply rebuilt into the shape of :data:`OUTPUT_SCHEMA`; ReplyRefused when malformed.
    ``name`` is the object asked for (the launcher's, already schema-checked)."""
    r = _dict(r, "the reply")
    out: dict = {"name": replies.line(name, NAME_CAP) or "?"}
    truncated: dict = {}
    src_trunc = r.get("truncated") if isinstance(r.get("truncated"), dict) else {}
    for k in KINDS:
        items = r.get(k, [])
        if not isinstance(items, list):
            _Path(k).refuse("is not a list")
        if len(items) > FEATURES_LIST_CAP:
            truncated[k] = len(items)
        elif replies.count(src_trunc.get(k), 10 ** 9):
            truncated[k] = src_trunc[k]
        if k != "patterns":
            out[k] = [_REBUILD[k](x, f"{k}[{i}]") for i, x in enumerate(items[:FEATURES_LIST_CAP])]
    n_items = {k: len(out[k]) for k in _OF["enum"]}
    out["patterns"] = [_pattern(x, f"patterns[{i}]", n_items)
                       for i, x in enumerate(r.get("patterns", [])[:FEATURES_LIST_CAP])]
    out["truncated"] = truncated
    out["faceted"] = _faceted(r.get("faceted"), "faceted")
    check(out)
    return out


def _faceted(v, w) -> dict | None:
    """``{"faces", "triangles"}`` (no more triangles than faces) or None."""
    if v is None:
        return None
    d = _dict(v, w)
    faces = _int(d.get("faces"), w + ".faces")
    triangles = _int(d.get("triangles"), w + ".triangles")
    if triangles > faces:
        _Path(w + ".triangles").refuse("is more than faces")
    return {"faces": faces, "triangles": triangles}


def check(data) -> None:
    """ReplyRefused unless ``data`` conforms to :data:`OUTPUT_SCHEMA`."""
    if not _VALIDATOR:
        from launcher.tools import schema
        _VALIDATOR.append(schema.validator(OUTPUT_SCHEMA))
    err = next(iter(_VALIDATOR[0].iter_errors(data)), None)
    if err is not None:
        where = "/".join(str(p) for p in err.absolute_path) or "the reply"
        raise ReplyRefused(f"the features reply does not match its schema at {where}")

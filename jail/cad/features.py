"""The ``features`` op: holes, bosses, fillets, chamfers, slots, pockets, pads, grooves, steps and patterns of one
object.

Runs in a jailed, disposable next like ``measure``: the object is resolved by name with
``measure.select_one`` (same messages), its OCCT faces are read (``features_faces``), features
are recognised (``features_find``, ``features_slots``, ``features_grooves``, ``features_pockets``,
``features_ovals``: an ellipse's wall is a pocket of shape "oval", ``features_outlines``: a spline's
of shape "freeform", ``features_rounds``: a B-spline rounding along a curved edge is a fillet,
``features_dimples``: a sphere's cap in a plane is a hole with ``ball``, ``features_pads``: raised
features that are not round,
``features_channels``: channels and T-slots are slots; ``features_drafted``: V grooves and
dovetails are slots with a draft) and patterns
searched (``features_patterns``). A solid whose faces are mostly flat triangles (``faceted``: a
mesh made solid, an STL through ``Solid``/``insert``) is said to be one, and its triangles are
never chamfers (the slivers between two nearly coplanar facets read as 0.6 x 0.001 chamfers). The
reply is plain JSON: every number rounded and finite (``measure.f``), every list capped
(``FEATURES_LIST_CAP``, the count before the cap in ``truncated``), the ten kinds' keys always
present (an empty list for a kind not asked for; a pattern of a kind not asked for has no
``members``, which index that kind's list), and ``faceted``.

Does not guarantee honest numbers once user code ran in this process; the launcher rebuilds the
reply field by field (launcher/replies/features.py) and checks it against the tool's schema.
"""
from __future__ import annotations

import math

from OCP.ShapeUpgrade import ShapeUpgrade_UnifySameDomain

from jail.cad import (features_channels, features_dimples, features_drafted, features_find as ff, features_grooves,
                      features_outlines, features_ovals, features_pads, features_patterns as fp, features_pockets,
                      features_slots)
from jail.cad.features_faces import cross, dot, faces_of, split_surfaces, sub
from jail.cad.features_material import Material
from jail.cad.measure import MeasureError, f, is_mesh, is_valid, mesh_error, select_one
from jail.cad.names import cap
from jail.wire.caps import FEATURES_LIST_CAP, NAME_CAP

KINDS = ("holes", "bosses", "fillets", "chamfers", "slots", "pockets", "pads", "grooves", "steps", "patterns")
CENTERS_CAP = 20  # centres listed per fillet/chamfer group (keeps a full reply well under the cap)
SECTOR_SIZES = ("inner_radius", "outer_radius", "angle")  # a ring sector pocket's numbers besides its centre
FACETED_MIN = 20  # flat triangles (and at least half the faces) before a solid reads as a mesh made solid


def _v(p) -> list:
    return [0.0 if abs(x) < 1e-9 else f(x, 7) for x in p]


def _opt(d: dict | None) -> dict | None:
    return None if d is None else {k: f(v) for k, v in d.items()}


def _hole(h: dict) -> dict:
    return {"center": _v(h["center"]), "axis": _v(h["axis"]), "diameter": f(h["diameter"]),
            "depth": None if h["depth"] is None else f(h["depth"]), "through": bool(h["through"]),
            "countersink": _opt(h["countersink"]), "counterbore": _opt(h["counterbore"]),
            "bores": [_opt(b) for b in h.get("bores") or []],
            "length": f(h["length"]), "keyway": _opt(h["keyway"]),
            "flat": None if h["flat"] is None else {"count": int(h["flat"]["count"]),
                                                        "across": f(h["flat"]["across"])},
            "partial": bool(h["partial"]),
            "draft": None if h["draft"] is None else f(h["draft"]),
            "ball": None if h.get("ball") is None else f(h["ball"])}


def _boss(b: dict) -> dict:
    return {"center": _v(b["center"]), "axis": _v(b["axis"]), "diameter": f(b["diameter"]),
            "height": f(b["height"]), "draft": None if b["draft"] is None else f(b["draft"])}


def _group(g: dict, size_keys) -> dict:
    out = {k: (None if g[k] is None else f(g[k])) for k in size_keys}
    if "convex" in g:
        out["convex"] = bool(g["convex"])
    out["count"] = int(g["count"])
    # in the holes' order (top down, then by y and x), not the faces': a part read from another
    # file, its faces in another order, lists them alike
    centers = sorted(g["centers"], key=lambda c: (round(-c[2], 4), round(c[1], 4), round(c[0], 4)))
    out["centers"] = [_v(c) for c in centers[:CENTERS_CAP]]
    return out


def _slot(s: dict) -> dict:
    return {"center": _v(s["center"]), "length": f(s["length"]), "width": f(s["width"]),
            "axis": _v(s["axis"]), "direction": _v(s["direction"]),
            "depth": None if s["depth"] is None else f(s["depth"]), "through": bool(s["through"]),
            "open_end": bool(s["open_end"]),
            "arc": None if s["arc"] is None else {"center": _v(s["arc"]["center"]), "radius": f(s["arc"]["radius"]),
                                                  "sweep": f(s["arc"]["sweep"])},
            "counterbore": _opt(s["counterbore"]), "ends": [str(x) for x in s["ends"]],
            "draft": None if s.get("draft") is None else f(s["draft"]), "tee": _opt(s.get("tee"))}


def _pocket(p: dict) -> dict:
    return {"center": _v(p["center"]), "axis": _v(p["axis"]), "depth": None if p["depth"] is None else f(p["depth"]),
            "through": bool(p["through"]), "width": f(p["width"]), "length": f(p["length"]),
            "direction": _v(p["direction"]), "sides": int(p["sides"]), "shape": str(p["shape"]),
            "corner_radius": None if p["corner_radius"] is None else f(p["corner_radius"]),
            "draft": None if p["draft"] is None else f(p["draft"]), "curved": int(p["curved"]),
            "island": None if p["island"] is None else {"count": int(p["island"]["count"]),
                                                        "width": f(p["island"]["width"]),
                                                        "length": f(p["island"]["length"])},
            "sector": None if p["sector"] is None else {"center": _v(p["sector"]["center"]),
                                                        **{k: f(p["sector"][k]) for k in SECTOR_SIZES}}}


def _pad(p: dict) -> dict:
    return {"center": _v(p["center"]), "axis": _v(p["axis"]), "shape": str(p["shape"]), "width": f(p["width"]),
            "length": f(p["length"]), "direction": _v(p["direction"]), "height": f(p["height"]),
            "sides": int(p["sides"]), "corner_radius": None if p["corner_radius"] is None else f(p["corner_radius"])}


def _groove(g: dict) -> dict:
    return {"center": _v(g["center"]), "axis": _v(g["axis"]), "diameter": f(g["diameter"]), "depth": f(g["depth"]),
            "width": f(g["width"]), "profile": str(g["profile"]), "internal": bool(g["internal"]),
            "face": bool(g.get("face", False))}


def _step(s: dict) -> dict:
    return {"center": _v(s["center"]), "axis": _v(s["axis"]), "direction": _v(s["direction"]), "side": _v(s["side"]),
            "width": f(s["width"]), "length": f(s["length"]), "depth": f(s["depth"]),
            "ends": [str(x) for x in s["ends"]]}


def _pattern(p: dict) -> dict:
    out: dict = {"type": p["type"], "of": p["of"], "count": int(p["count"]),
                 # the listed ones only (the list is cut at the cap; a pattern's order may not be the list's)
                 "members": [int(m) for m in p["members"] if m < FEATURES_LIST_CAP][:FEATURES_LIST_CAP]}
    if p["type"] in ("bolt_circle", "arc", "radial"):
        out.update(center=_v(p["center"]), radius=f(p["radius"]), axis=_v(p["axis"]),
                   pitch_angle=f(p["pitch_angle"]), start_angle=f(p["start_angle"]))
    elif p["type"] in ("grid", "staggered", "bundle"):
        out.update(counts=[int(n) for n in p["counts"]], pitch=_v(p["pitch"]),
                   directions=[_v(d) for d in p["directions"]])
    else:
        out.update(pitch=f(p["pitch"]), direction=_v(p["direction"]))
    if p["type"] in ("grid", "linear"):
        out["empty"] = [_v(q) for q in p.get("empty", ())]
    return out


def _sig(h: dict) -> tuple:
    return (h["through"], h["countersink"] is not None, h["counterbore"] is not None,
            tuple(round(b["diameter"], 3) for b in h.get("bores") or ()),
            None if h["depth"] is None else round(h["depth"], 3),
            None if h["keyway"] is None else (round(h["keyway"]["width"], 3), round(h["keyway"]["depth"], 3)),
            None if h["flat"] is None else (h["flat"]["count"], round(h["flat"]["across"], 3)),
            h["partial"], None if h["draft"] is None else round(h["draft"], 3),
            None if h.get("ball") is None else round(h["ball"], 3))


def _slot_sig(s: dict, turned: bool = False) -> tuple:
    """Slots in one pattern: same length, depth, through and open end, along the same direction
    (``turned``: any direction); arc slots: same arc radius, sweep, width, depth and through,
    turned any way."""
    if s["arc"] is not None:  # turned copies round a circle: their directions differ
        return (round(s["arc"]["radius"], 3), round(s["arc"]["sweep"], 3), round(s["width"], 3),
                None if s["depth"] is None else round(s["depth"], 3), s["through"])
    return (round(s["length"], 3), None if s["depth"] is None else round(s["depth"], 3), s["through"],
            s["open_end"], tuple(s["ends"]), None if turned else tuple(round(x, 6) for x in s["direction"]),
            None if s["counterbore"] is None else tuple(round(x, 3) for x in s["counterbore"].values()),
            None if s.get("draft") is None else round(s["draft"], 3),
            None if s.get("tee") is None else tuple(round(x, 3) for x in s["tee"].values()))


def _pocket_sig(p: dict, turned: bool = False) -> tuple:
    """Pockets in one pattern: same outline, depth and through, turned the same way (``turned``:
    any way); ring sectors (a wheel's windows) turned any way."""
    if p["sector"] is not None:
        return (tuple(round(p["sector"][k], 3) for k in SECTOR_SIZES),
                None if p["depth"] is None else round(p["depth"], 3), p["through"],
                None if p["corner_radius"] is None else round(p["corner_radius"], 3))
    return (p["sides"], round(p["length"], 3), None if p["depth"] is None else round(p["depth"], 3), p["through"],
            None if p["corner_radius"] is None else round(p["corner_radius"], 3),
            None if turned else tuple(round(x, 6) for x in p["direction"]),
            None if p["draft"] is None else round(p["draft"], 3), p["curved"], None if p["island"] is None else tuple(round(x, 3) for x in p["island"].values()))


def _pad_sig(p: dict, turned: bool = False) -> tuple:
    """What pads of one pattern share: outline, sizes, height and (unless ``turned``) direction."""
    return (p["shape"], round(p["length"], 3), round(p["height"], 3),
            None if p["corner_radius"] is None else round(p["corner_radius"], 3),
            None if turned else tuple(round(x, 6) for x in p["direction"]))


def _with_turned(items: list[dict], of: str, turned_sig) -> list[dict]:
    """The patterns of ``items`` (slots or pockets, each turned the same way), then circles of
    copies turned round the circle's centre among the rest (an index plate's radial slots): the
    same but for their direction (``turned_sig``), each at the same angle to its radius."""
    found = fp.find(items, of)
    taken = {m for p in found for m in p["members"]}
    rest = [i for i in range(len(items)) if i not in taken]
    sub = [dict(items[i], sig=turned_sig(items[i])) for i in rest]
    for p in fp.find(sub, of):
        if p["type"] in ("bolt_circle", "arc") and _turned_alike(sub, p):
            found.append(dict(p, members=[rest[m] for m in p["members"]]))
    return found


def _turned_alike(items: list[dict], p: dict) -> bool:
    """Do the members of the circle ``p`` all lie at one angle to their radius (a direction's sign
    does not count)?"""
    angles = []
    for m in p["members"]:
        w = sub(items[m]["center"], p["center"])
        w = sub(w, tuple(x * dot(w, p["axis"]) for x in p["axis"]))
        d = items[m]["direction"]
        angles.append(math.atan2(dot(cross(w, d), p["axis"]), dot(w, d)) % math.pi)
    return all(min(abs(a - angles[0]), math.pi - abs(a - angles[0])) < 1e-3 for a in angles)


def _order(h: dict) -> tuple:
    c = h["center"]
    return (round(-c[2], 4), round(c[1], 4), round(c[0], 4))


def _merged(shape):
    """``shape`` with the faces that lie on one surface merged (OCCT's ``ShapeUpgrade_UnifySameDomain``,
    as build123d's ``clean``), or None when OCCT cannot: a STEP file's half cylinders read as one."""
    try:
        unify = ShapeUpgrade_UnifySameDomain(shape, True, True, False)
        unify.AllowInternalEdges(False)
        unify.Build()
        return unify.Shape()
    except Exception:  # noqa: BLE001 - OCCT's failures: read the faces as they are
        return None


def find(shape, kinds=None, mat: Material | None = None) -> dict:
    """The features of a TopoDS shape as plain data (unrounded), every kind computed; ``mat``: its
    solids' probes when the caller has them already."""
    infos = faces_of(shape)
    if split_surfaces(infos) and (merged := _merged(shape)) is not None:
        try:
            shape, infos, mat = merged, faces_of(merged), None
        except Exception:  # noqa: BLE001 - a merged face OCCT left without edges: read the pieces
            pass
    mat = Material(shape) if mat is None else mat
    used: set = set()
    face_gr = features_grooves.face_grooves(infos, mat, used) if mat.solids else []
    hs = ff.holes(infos, mat, used) if mat.solids else []
    hs = sorted(hs + (features_dimples.dimples(infos, used) if mat.solids else []), key=_order)
    bs = sorted(ff.bosses(infos, mat, used) if mat.solids else [], key=_order)
    sl = features_slots.slots(infos, mat, used) if mat.solids else []
    gr = sorted(face_gr + features_grooves.grooves(infos, used), key=_order)
    pk = (features_pockets.pockets(infos, mat, used) + features_ovals.ovals(infos, mat, used)) if mat.solids else []
    freeform, round_holes = features_outlines.outlines(infos, mat, used) if mat.solids else ([], [])
    hs, pk = sorted(hs + round_holes, key=_order), sorted(pk + freeform, key=_order)
    slanted = features_drafted.find(infos, mat, used) if mat.solids else []  # before steps: a V's walls are none
    channels, steps = features_channels.find(infos, mat, used) if mat.solids else ([], [])
    sl, st = sorted(sl + channels + slanted, key=_order), sorted(steps, key=_order)
    # after slots and steps: a waffle's posts are its channels' walls, a shoulder all round four steps
    pd = sorted(features_pads.pads(infos, mat, used), key=_order) if mat.solids else []
    fl = ff.fillets(infos, used)
    triangles = {fi.index for fi in infos if fi.kind == "plane" and len(fi.edges) == 3}
    facets = None
    if len(triangles) >= FACETED_MIN and 2 * len(triangles) >= len(infos):
        facets = {"faces": len(infos), "triangles": len(triangles)}
        used = used | triangles  # a facet is no chamfer
    ch = ff.chamfers(infos, used)
    items = [dict(h, sig=_sig(h)) for h in hs]
    pats = fp.find(items, "holes")
    pats += fp.find([dict(b, sig=(round(b["height"], 3), None if b["draft"] is None else round(b["draft"], 3)))
                     for b in bs], "bosses")
    pats += _with_turned([dict(s, diameter=s["width"], sig=_slot_sig(s)) for s in sl], "slots",
                         lambda s: _slot_sig(s, turned=True))
    pats += _with_turned([dict(p, diameter=p["width"], sig=_pocket_sig(p)) for p in pk], "pockets",
                         lambda p: _pocket_sig(p, turned=True))
    pats += _with_turned([dict(p, diameter=p["width"], sig=_pad_sig(p)) for p in pd], "pads",
                         lambda p: _pad_sig(p, turned=True))
    return {"holes": hs, "bosses": bs, "fillets": fl, "chamfers": ch, "slots": sl, "pockets": pk, "pads": pd,
            "grooves": gr, "steps": st, "patterns": pats, "faceted": facets}


def features(namespace: dict, name: str, kinds=None) -> dict:
    if kinds is not None and (not isinstance(kinds, list) or not all(k in KINDS for k in kinds)):
        raise MeasureError(f"kinds must be a list of: {', '.join(KINDS)}")
    shape = select_one(namespace, name)
    if is_mesh(shape):  # before any surface query: OCCT's crash the process on its faces
        raise MeasureError(f"{cap(name, NAME_CAP)!r} is {mesh_error('features')}")
    mat = Material(shape)
    if not mat.solids:
        raise MeasureError(f"{cap(name, NAME_CAP)!r} has no solid: features finds holes, bosses, slots, fillets "
                           "and chamfers on solids (extrude or revolve a sketch first; measure reads faces "
                           "and wires)")
    try:
        raw = find(shape, mat=mat)
    except Exception as e:  # noqa: BLE001 - OCCT's Standard_Failure family, on broken geometry
        if _valid(shape):
            raise
        raise MeasureError(f"{cap(name, NAME_CAP)!r} is not a valid solid (BRepCheck), and features could not "
                           f"read it ({type(e).__name__}); validate says what is wrong") from None
    want = set(kinds) if kinds else set(KINDS)
    conv = {"holes": _hole, "bosses": _boss, "slots": _slot, "pockets": _pocket, "pads": _pad, "grooves": _groove,
            "steps": _step, "patterns": _pattern,
            "fillets": lambda g: _group(g, ("radius",)), "chamfers": lambda g: _group(g, ("size", "size2"))}
    out: dict = {}
    truncated: dict = {}
    for k in KINDS:
        items = raw[k] if k in want else []
        if len(items) > FEATURES_LIST_CAP:
            truncated[k] = len(items)
        out[k] = [conv[k](x) for x in items[:FEATURES_LIST_CAP]]
    for p in out["patterns"]:  # members index the listed items of their kind: none when it was not asked for
        if p["of"] not in want:
            p["members"] = []
    out["truncated"] = truncated
    out["faceted"] = raw["faceted"]
    return out


def _valid(shape) -> bool:
    try:
        return is_valid(shape)
    except Exception:  # noqa: BLE001 - too broken to check
        return False


def warm_up(shape) -> None:
    """For the zygote: run the recognisers once so forked sessions start warm."""
    find(shape.wrapped if hasattr(shape, "wrapped") else shape)


def op_features(msg: dict, ctx) -> tuple[dict, bytes]:
    """``{"t": "features", "name", "kinds"}`` -> ``{"ok", "result"}``."""
    try:
        return {"ok": True, "result": features(ctx.namespace, msg.get("name"), msg.get("kinds"))}, b""
    except MeasureError as e:
        return {"ok": False, "error": str(e)}, b""

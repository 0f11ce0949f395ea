"""One build123d shape measured for a reply's summary (counts, volume/area/length, bbox, validity), cheaply.

What makes it cheap: copies of one shape (``moved``, ``translate``, ``rotate``, ``Pos() *``,
``GridLocations``: the same OCCT TShape at another Location) are measured once, in the shape's own
coordinates (``_LOCAL``): counts, volume and validity carry over to every rigid copy, the bounding
box is shifted for a translated one and measured again only for a rotated one; a shape placed any
other way (a scaled or mirrored Location) is cached as placed. A compound is the
sum of its children (so a pattern of 1000 copies costs one measure plus 999 look-ups). Validity
(``BRepCheck``, the slowest part) is checked for the first ``VALIDATE_MAX`` leaf shapes of a
``Meter`` only; past that, and for a shape of more than ``LIGHT_FACES`` faces, ``valid`` is left
out. Such a huge shape gets the light summary: explorer counts, ``GProp`` and a plain (not optimal)
bounding box. ``Meter.over()`` lets the caller stop between shapes (its time budget).

Blocks: nothing. It runs next to user code (which may have patched it); the launcher checks every
number it receives. Caches hold the shapes they describe, so an id or a TShape cannot be reused
while its entry lives; ``rotate_caches`` drops what the last pass did not use (``Meter.keep``: what a
caller's own cache answered for counts as used).
"""
from __future__ import annotations

import math
import time
from typing import Any

from jail.cad import measure

__all__ = ["num", "Meter", "local_measures", "LIGHT_FACES", "VALIDATE_MAX", "rotate_caches", "light_summary",
           "deadline_over"]

LIGHT_FACES = 2000   # past this many faces: the light summary (no validity, plain bounding box)
VALIDATE_MAX = 50    # leaf shapes whose validity one pass checks (the rest: no "valid" key)

# TShape (placed at the origin, with its orientation) -> (that TopoDS shape, local measures):
# shared by every copy of the shape; kept from call to call while a pass uses it.
_LOCAL: dict = {}
_LOCAL_NEXT: dict = {}


def rotate_caches() -> None:
    """End of a pass: keep the local measures the pass used, drop the others."""
    global _LOCAL, _LOCAL_NEXT
    _LOCAL, _LOCAL_NEXT = _LOCAL_NEXT, {}


def num(x: Any) -> float | None:
    """``float(x)`` when finite, else None (never raises: ``x`` may be a hostile object)."""
    try:
        f = float(x)
    except BaseException:  # noqa: BLE001
        return None
    return f if math.isfinite(f) else None


def _count(wrapped, kind) -> int:
    """Distinct sub-shapes of ``kind`` (shared ones counted once, as ``IsSame`` tells them apart), in
    one OCCT call: an explorer walked from Python cost ~10x as much (0.13 against 0.011 ms for the
    plate's three counts; a face-heavy part visits each edge twice)."""
    from OCP.collections import IndexedMap_TopoDS_Shape_TopTools_ShapeMapHasher as ShapeMap
    from OCP.TopExp import TopExp
    found = ShapeMap()
    TopExp.MapShapes_s(wrapped, kind, found)
    return found.Extent()


def _counts(wrapped) -> dict:
    from OCP.TopAbs import TopAbs_EDGE, TopAbs_FACE, TopAbs_SOLID
    return {"solids": _count(wrapped, TopAbs_SOLID), "faces": _count(wrapped, TopAbs_FACE),
            "edges": _count(wrapped, TopAbs_EDGE)}


def _which(counts: dict) -> str | None:
    return "volume" if counts["solids"] else "area" if counts["faces"] else "length" if counts["edges"] else None


def _cast(topods):
    from build123d.topology import Shape
    return Shape.cast(topods)


def _box(lo, hi) -> dict:
    return {"min": list(lo), "max": list(hi), "size": [h - l for l, h in zip(lo, hi)]}


def _plain_box(wrapped) -> tuple | None:
    from OCP.Bnd import Bnd_Box
    from OCP.BRepBndLib import BRepBndLib
    box = Bnd_Box()
    BRepBndLib.Add_s(wrapped, box)
    if box.IsVoid():
        return None
    lo, hi = box.CornerMin(), box.CornerMax()
    return (lo.X(), lo.Y(), lo.Z()), (hi.X(), hi.Y(), hi.Z())


def _gprop(wrapped, which: str) -> float | None:
    from OCP.BRepGProp import BRepGProp
    from OCP.GProp import GProp_GProps
    props = GProp_GProps()
    {"volume": BRepGProp.VolumeProperties_s, "area": BRepGProp.SurfaceProperties_s,
     "length": BRepGProp.LinearProperties_s}[which](wrapped, props)
    return num(props.Mass())


def light_summary(wrapped) -> dict:
    """Counts with TopExp, volume (else area, else length) with GProp, a plain bounding box; no validity
    (a mesh of tens of thousands of triangles, an imported part)."""
    c = _counts(wrapped)
    d: dict = {"counts": c}
    which = _which(c)
    if which:
        d[which] = _gprop(wrapped, which)
    b = _plain_box(wrapped)
    if b is not None:
        d["bbox"] = _box(*b)
    return d


class Meter:
    """Measures the shapes of one summary pass (``measure``) with the caches: each distinct shape's
    validity is checked once, then carried by the cache (``checks`` counts them)."""

    def __init__(self, *, validate_max: int = VALIDATE_MAX, over=None):
        self.validate_left = validate_max
        self.over = over or (lambda: False)   # the pass's budget: stop between leaf shapes
        self.checks = 0                       # validity checks (BRepCheck) this meter ran
        self.used: list = []                  # the cache keys of the leaf shapes it measured

    @staticmethod
    def keep(keys) -> None:
        """A caller's own cache answered for shapes measured earlier: keep their entries another pass."""
        for key in keys:
            ent = _LOCAL.get(key)
            if ent is not None:
                _LOCAL_NEXT[key] = ent

    def measure(self, shape: Any) -> dict:
        """``counts``, ``volume``/``area``/``length``, ``bbox`` and maybe ``valid`` of a build123d shape.
        Raises TimeoutError when the pass's budget ran out part-way through a compound."""
        from build123d import Compound
        if measure.is_empty_shape(shape) or shape.wrapped is None:  # an empty build123d object (Part(): unset)
            return {"counts": {"solids": 0, "faces": 0, "edges": 0}, "empty": True}
        if isinstance(shape, Compound):
            children = list(shape)
            if not children:  # Compound([]): no box, nothing to validate
                return {"counts": {"solids": 0, "faces": 0, "edges": 0}, "empty": True}
            if all(hasattr(c, "wrapped") for c in children):
                return self._compound(shape, children)
        return self._leaf(shape)

    def _compound(self, shape: Any, children: list) -> dict:
        counts = _counts(shape.wrapped)
        which = _which(counts)
        total, lo, hi, valid = 0.0, [math.inf] * 3, [-math.inf] * 3, True
        for c in children:
            if self.over():
                raise TimeoutError
            m = self.measure(c)
            if which and isinstance(m.get(which), (int, float)):
                total += m[which]
            b = m.get("bbox")
            if b and None not in b["min"] and None not in b["max"]:
                lo = [min(a, x) for a, x in zip(lo, b["min"])]
                hi = [max(a, x) for a, x in zip(hi, b["max"])]
            valid = valid and m.get("valid") is True
        d: dict = {"counts": counts}
        if which:
            d[which] = num(total)
        if all(math.isfinite(x) for x in lo + hi):
            d["bbox"] = _box(lo, hi)
        if valid:
            d["valid"] = True
        return d

    def _leaf(self, shape: Any) -> dict:
        from OCP.gp import gp_TrsfForm
        from OCP.TopLoc import TopLoc_Location
        w = shape.wrapped
        trsf = w.Location().Transformation()
        rigid = abs(trsf.ScaleFactor() - 1.0) < 1e-12 and not trsf.IsNegative()
        # a rigid copy shares its entry with every other copy (its shape at the origin); any other
        # placement (a scale, a mirror) is cached as placed, so it is measured once too
        origin = w.Located(TopLoc_Location()) if rigid else w
        key = (hash(origin), int(w.Orientation()), rigid)
        ent = _LOCAL.get(key)
        if ent is not None and not ent[0].IsEqual(origin):
            ent = None   # a hash collision: measure it
        if ent is None:
            ent = (origin, self._measure_local(_cast(origin) if rigid else shape))
            _LOCAL[key] = ent
        _LOCAL_NEXT[key] = ent
        self.used.append(key)
        local = ent[1]
        if local.get("light"):
            return light_summary(w)
        if "valid" not in local and self.validate_left > 0:
            self.validate_left -= 1
            self.checks += 1
            local["valid"] = measure.is_valid(w)
        d = {k: v for k, v in local.items() if k != "bbox"}
        b = local.get("bbox")
        if rigid and b is not None and trsf.Form() in (gp_TrsfForm.gp_Identity, gp_TrsfForm.gp_Translation):
            t = trsf.TranslationPart()
            off = (t.X(), t.Y(), t.Z())
            d["bbox"] = _box([a + o for a, o in zip(b["min"], off)], [a + o for a, o in zip(b["max"], off)])
        elif not rigid and b is not None:
            d["bbox"] = b   # measured in place
        else:
            d["bbox"] = _bbox(shape)  # rotated: measured again (counts, volume, validity carry over)
        return d

    def _measure_local(self, shape: Any) -> dict:
        return local_measures(shape)


def local_measures(shape: Any) -> dict:
    """A leaf shape's counts, its volume, area or length (the highest dimension it has) and its
    bounding box, in its own frame; ``{"light": True}`` past ``LIGHT_FACES`` faces."""
    counts = _counts(shape.wrapped)
    if counts["faces"] > LIGHT_FACES:
        return {"light": True}
    which = _which(counts)
    d: dict = {"counts": counts}
    if which == "volume":
        d["volume"] = num(shape.volume)
    elif which == "area":
        d["area"] = num(shape.area)
    elif which == "length":
        d["length"] = num(sum(e.length for e in shape.edges()))
    d["bbox"] = _bbox(shape)
    return d


def _bbox(shape: Any) -> dict:
    bb = shape.bounding_box()
    return {"min": [num(bb.min.X), num(bb.min.Y), num(bb.min.Z)],
            "max": [num(bb.max.X), num(bb.max.Y), num(bb.max.Z)],
            "size": [num(bb.size.X), num(bb.size.Y), num(bb.size.Z)]}


def deadline_over(deadline: float, stop=None):
    """A ``Meter.over`` for a ``time.monotonic()`` deadline and an optional ``stop()`` flag."""
    def over() -> bool:
        return time.monotonic() > deadline or (stop is not None and bool(stop()))
    return over

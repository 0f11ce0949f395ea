"""JSON-safe summaries of the session's top-level names (the ``objects`` of a reply).

``summarize`` describes each user name: volume, area, bbox, validity and topology counts for
build123d shapes and builders, a list, tuple or dict of shapes as one item, a capped repr for other values;
``value_summary`` does the same for a trailing expression's value (REPL style). Shape summaries
are cached between calls (see ``_SHAPE_CACHE`` and ``shape_measure``). A pass may have a time budget
(``budget_s``, and ``stop()``: the launcher's signal that the call's limit is near): past it, the names
left are listed as ``unsummarised`` (name and type only), so a call whose code finished in time is never
failed by its summary. build123d is imported where used, so this module loads without it.

Everything returned is built from plain ``str``/``int``/``float``/``bool``/``None``/``list``/
``dict`` so that ``json.dumps`` of it cannot run user code. Blocks: nothing; a user property that
raises becomes ``summary_error``. The launcher validates every summary it receives.
"""

from __future__ import annotations

import builtins as _builtins
import math
import reprlib
import sys
import time
import types
from typing import Any

from jail.cad import shape_measure
from jail.cad.shape_measure import num as _num
from jail.cad.names import cap, is_dunder, is_user_value, safe_str, star_exports, type_name
from jail.wire.caps import NAME_CAP, REPR_CAP, SUMMARY_MAX_OBJECTS, VALUE_REPR_CAP

__all__ = ["summarize", "summarize_value", "value_summary", "remember_shape"]

COLLECTION_MAX = 100_000      # elements of a list/tuple/dict looked at for a shape collection (more: its repr)
COLLECTION_MEASURE_MAX = 100  # shapes in a list measured one by one (more: counted by type only)
SUMMARY_BUDGET_S = 5.0        # an execute reply's summaries stop after this long (the rest: name and type)
UNSUMMARISED = "(not summarised in time)"

_repr = reprlib.Repr()
_repr.maxstring = REPR_CAP
_repr.maxother = REPR_CAP
_repr.maxlist = _repr.maxtuple = _repr.maxdict = _repr.maxset = _repr.maxfrozenset = 8
_repr.maxlevel = 3

_value_repr = reprlib.Repr()  # a trailing expression's value: more of it than a name's summary
_value_repr.maxstring = _value_repr.maxother = VALUE_REPR_CAP
_value_repr.maxlist = _value_repr.maxtuple = _value_repr.maxdict = _value_repr.maxset = 30
_value_repr.maxfrozenset = 30
_value_repr.maxlevel = 4


def _b3d_types():
    import build123d as b

    shape = getattr(b, "Shape", None)
    if shape is None:  # pragma: no cover - older layouts
        from build123d.topology import Shape as shape  # type: ignore[no-redef]
    builders = {}
    for cls, attr in (("BuildPart", "part"), ("BuildSketch", "sketch"), ("BuildLine", "line")):
        c = getattr(b, cls, None)
        if c is not None:
            builders[c] = attr
    return shape, builders


# Shape summaries survive from call to call (the dict is inherited by every fork): a
# 1000-solid compound is validated once, not on every execute. Keyed by the object's
# identity *and* its OCCT shape hash (TShape + Location), so a moved or rebuilt shape
# is measured again. Each entry holds the shape itself, so an id cannot be reused while
# the entry exists; entries of shapes no longer bound to a name are dropped each call.
_SHAPE_CACHE: dict = {}
_shape_cache_next: dict = {}


def _shape_key(shape: Any):
    try:
        return (id(shape), type(shape), hash(shape.wrapped))
    except Exception:  # noqa: BLE001
        return None


def _shape_summary(shape: Any, meter) -> dict:
    key = _shape_key(shape)
    if key is not None and key in _SHAPE_CACHE:
        ent = _SHAPE_CACHE[key]
        _shape_cache_next[key] = ent
        meter.keep(ent[2])  # the leaf entries behind it stay for copies made later
        return dict(ent[1])
    start = len(meter.used)
    d = meter.measure(shape)
    if key is not None:
        _shape_cache_next[key] = (shape, d, tuple(meter.used[start:]))
    return dict(d)


def summarize_value(value: Any, shape_cls, builders: dict, meter=None) -> dict:
    tp = type(value)
    if tp in (bytes, bytearray, memoryview):
        # reprlib would build the whole repr first (a 200 MB bytearray -> an 800 MB string)
        head = bytes(value[:48])
        more = "" if len(value) <= 48 else f"... ({len(value)} bytes)"
        return {"kind": "bytes", "length": len(value), "repr": cap(safe_str(repr(head)) + more, REPR_CAP + 40)}
    if tp is int and value.bit_length() > 4 * REPR_CAP:
        return {"kind": "number", "repr": f"<int of {value.bit_length()} bits>"}
    if value is None or tp in (bool, int, float, complex, str):
        kind = {type(None): "none", bool: "bool", int: "number", float: "number",
                complex: "number", str: "str"}[tp]
        return {"kind": kind, "repr": cap(_repr.repr(value), REPR_CAP)}
    meter = meter or shape_measure.Meter()
    if shape_cls is not None and isinstance(value, shape_cls):
        return {"kind": "shape", **_shape_summary(value, meter)}
    for bcls, attr in builders.items():
        if isinstance(value, bcls):
            obj = getattr(value, attr)
            d: dict = {"kind": "builder", "of": attr}
            if obj is None:
                d["empty"] = True
            else:
                d.update(_shape_summary(obj, meter))
            return d
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, types.MethodType,
                          types.LambdaType)):
        return {"kind": "function"}
    if isinstance(value, type):
        return {"kind": "class"}
    if isinstance(value, (list, tuple, dict)) and shape_cls is not None:
        if isinstance(value, dict):  # read with dict's own methods: a subclass's overrides are not called
            items = list(dict.values(value)) if 0 < dict.__len__(value) <= COLLECTION_MAX else None
        else:
            items = value if value else None
        coll = _shape_collection(items, shape_cls, meter) if items is not None else None
        if coll is not None:
            return coll
    if isinstance(value, (list, tuple, dict, set, frozenset)):
        kind = "mapping" if isinstance(value, dict) else "set" if isinstance(value, (set, frozenset)) \
            else "sequence"
        return {"kind": kind, "length": len(value), "repr": cap(safe_str(_repr.repr(value)), REPR_CAP)}
    np = sys.modules.get("numpy")
    if np is not None:
        if isinstance(value, np.ndarray):
            return {"kind": "array", "shape": [int(n) for n in value.shape],
                    "dtype": safe_str(value.dtype, 50),
                    "repr": cap(safe_str(_repr.repr(value)), REPR_CAP)}
        if isinstance(value, np.generic):
            return {"kind": "number", "repr": cap(safe_str(repr(value.item())), REPR_CAP)}
    return {"kind": "object", "repr": cap(safe_str(_repr.repr(value)), REPR_CAP)}


def _shape_collection(value, shape_cls, meter) -> dict | None:
    """A list/tuple of build123d shapes (or a dict's values) as one item: ``list of 50 Box, total
    volume 1275, bbox ...`` (``kind: "shapes"``, ``length``, ``of`` = type counts, total
    ``volume``/``area``/``length`` and the overall ``bbox``). None when an element is not a shape."""
    n = len(value)
    if n > COLLECTION_MAX:
        return None
    types_: dict[str, int] = {}
    for v in value:
        if not isinstance(v, shape_cls):
            return None
        t = type_name(v)
        types_[t] = types_.get(t, 0) + 1
    d: dict = {"kind": "shapes", "length": n,
               "of": ", ".join(f"{c} {t}" for t, c in sorted(types_.items(), key=lambda kv: -kv[1])[:6])}
    if n > COLLECTION_MEASURE_MAX:
        return d
    vol = area = 0.0
    lo = [math.inf] * 3
    hi = [-math.inf] * 3
    for v in value:  # volume (else area) and bounding box, from the meter's caches
        if meter.over():
            return d  # the pass's budget ran out: type counts only
        m = _shape_summary(v, meter)
        x = m.get("volume")
        if x:
            vol += x
        else:
            area += m.get("area") or 0.0
        bb = m.get("bbox") or {}
        mn, mx = bb.get("min") or [None] * 3, bb.get("max") or [None] * 3
        for i in range(3):
            if mn[i] is not None and mx[i] is not None:
                lo[i], hi[i] = min(lo[i], mn[i]), max(hi[i], mx[i])
    if vol:
        d["volume"] = _num(vol)
    elif area:
        d["area"] = _num(area)
    if all(math.isfinite(x) for x in lo + hi):
        d["bbox"] = {"min": lo, "max": hi, "size": [h - l for l, h in zip(lo, hi)]}
    return d


def summarize(namespace: dict, *, max_items: int = SUMMARY_MAX_OBJECTS, ids: dict | None = None,
              budget_s: float | None = None, stop=None) -> list[dict]:
    """Describe the user's top-level names (JSON-safe).

    Skipped: dunders, ``_``, modules, names bound to the very builtin of that
    name, and names that still hold what ``from build123d import *`` bound.
    Each item is ``{"name", "type", "kind", ...}`` where kind is one of
    ``shape`` / ``builder`` (+ ``counts``, ``bbox``, ``valid``, and ``volume``
    for solids, else ``area`` for faces, else ``length`` for edges; a builder
    has ``of`` and maybe ``empty``), ``number``/``str``/``bool``/``none``/
    ``bytes``/``object`` (+ ``repr``), ``sequence``/``mapping``/``set``
    (+ ``length``, ``repr``), ``array`` (+ ``shape``, ``dtype``, ``repr``),
    ``function``, ``class``. A value that fails to summarise gets
    ``summary_error`` instead. Past ``max_items`` a last item
    ``{"name": "...", "type": "", "kind": "omitted", "count": N}`` says how many
    were left out. With ``budget_s`` (seconds) or ``stop`` (a callable: true = stop
    now), the names left when either runs out are ``kind: "unsummarised"`` (name,
    type and a ``repr`` saying so); their validity is checked for the first
    ``shape_measure.VALIDATE_MAX`` shapes only.
    """
    star = star_exports()
    real_builtins = vars(_builtins)
    try:
        shape_cls, builders = _b3d_types()
    except Exception:  # noqa: BLE001
        shape_cls, builders = None, {}
    items: list[dict] = []
    omitted = 0
    cache: dict[int, dict] = {}
    if budget_s is not None or stop is not None:
        deadline = time.monotonic() + (budget_s if budget_s is not None else math.inf)
        meter = shape_measure.Meter(over=shape_measure.deadline_over(deadline, stop))
    else:
        meter = shape_measure.Meter()
    for name in list(namespace.keys()):
        if not isinstance(name, str) or is_dunder(name) or name == "_":
            continue
        try:
            value = namespace[name]
        except BaseException:  # noqa: BLE001
            continue
        if not is_user_value(name, value, star, real_builtins):
            continue
        if len(items) >= max_items:
            omitted += 1
            continue
        item: dict = {"name": cap(str.__str__(name), NAME_CAP), "type": type_name(value)}
        if ids is not None:
            ids[item["name"]] = id(value)
        key = id(value)
        try:
            if key not in cache:
                if meter.over():
                    raise TimeoutError
                cache[key] = summarize_value(value, shape_cls, builders, meter)
            item.update(cache[key])
        except TimeoutError:
            item.update(kind="unsummarised", repr=UNSUMMARISED)
        except BaseException as e:  # noqa: BLE001 - user properties may raise anything
            item["summary_error"] = f"{type_name(e)}: {safe_str(e, REPR_CAP)}"
        items.append(item)
    if omitted:
        items.append({"name": "...", "type": "", "kind": "omitted", "count": omitted})
    global _SHAPE_CACHE, _shape_cache_next
    _SHAPE_CACHE, _shape_cache_next = _shape_cache_next, {}
    shape_measure.rotate_caches()
    return items


def remember_shape(shape: Any, summary: dict) -> None:
    """Put ``summary`` (without ``kind``) in the shape cache for ``shape`` (the importer's light
    summary of a big mesh, so the next summaries of the session reuse it)."""
    key = _shape_key(shape)
    if key is not None:
        _SHAPE_CACHE[key] = (shape, {k: v for k, v in summary.items() if k != "kind"}, ())


def value_summary(value: Any) -> dict | None:
    """The trailing expression's value, REPL style (None: nothing to show)."""
    if value is None:
        return None
    try:
        shape_cls, builders = _b3d_types()
    except Exception:  # noqa: BLE001
        shape_cls, builders = None, {}
    out: dict = {"type": type_name(value)}
    try:
        out.update(summarize_value(value, shape_cls, builders))
    except BaseException as e:  # noqa: BLE001
        out["summary_error"] = f"{type_name(e)}: {safe_str(e, REPR_CAP)}"
    if out.get("kind") in ("number", "str", "bool", "bytes", "object", "sequence", "mapping", "set", "array"):
        out["repr"] = cap(safe_str(_value_repr.repr(value)), VALUE_REPR_CAP)
    return out


"""The ``api`` op: look build123d up without ``dir``/``help``/``__doc__`` (which user code may not use).

``lookup(name)``: signature and docstring of a name ``from build123d import *`` binds, or of an
attribute of one (``"fillet"``, ``"Part.edges"``), and a class's public methods and properties, its
members when it is an enum (``Align.MIN``) and its other public class attributes (short values);
``search(query)``: the bound names containing ``query``; ``versions()``: build123d and OCP.

Runs in a disposable next. Blocks: names are checked before any look-up (a ``str`` of at most
``NAME_CAP`` characters, at most 4 dotted parts, none starting with ``_``, the first one a name
build123d exports), so the op cannot reach ``__globals__``, modules or the session's own objects;
attributes are read with ``inspect.getattr_static`` first (no properties run). Does not block: a
session that patched build123d's classes sees its patches here, and ``inspect.signature`` may run
code they installed; the reply is capped and treated as untrusted text by the launcher.
"""
from __future__ import annotations

import difflib
import enum
import inspect
import re

from jail.cad.names import cap, star_exports
from jail.wire.caps import NAME_CAP

__all__ = ["lookup", "search", "versions", "op_api"]

DOC_CAP = 3000
SIG_CAP = 1000
MEMBERS_MAX = 80
ATTRS_MAX = 40        # class attributes listed (the rest counted)
VALUE_SHOWN = 40      # an attribute's repr is shown when at most this long
SEARCH_MAX = 60
CORE_CLASSES = ("Shape", "Part", "Sketch", "Curve", "Solid", "Face", "Wire", "Edge", "Vertex", "Compound",
                "ShapeList", "Location", "Vector", "Axis", "Plane", "BoundBox", "BuildPart", "BuildSketch",
                "BuildLine")
_PART = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,99}\Z")

_VERSIONS: dict | None = None


def versions() -> dict:
    """``{"build123d": "0.13.0", "OCP": "8.0.1.1"}`` (computed once, in the zygote's warm-up)."""
    global _VERSIONS
    if _VERSIONS is None:
        v: dict = {}
        try:
            import build123d
            v["build123d"] = str(getattr(build123d, "__version__", "?"))
        except Exception:  # noqa: BLE001
            v["build123d"] = "?"
        try:
            import OCP
            v["OCP"] = str(getattr(OCP, "__version__", "?"))
        except Exception:  # noqa: BLE001
            v["OCP"] = "?"
        _VERSIONS = v
    return dict(_VERSIONS)


def _kind(obj) -> str:
    if inspect.isclass(obj):
        return "class"
    if isinstance(obj, (staticmethod, classmethod)) or inspect.isroutine(obj):
        return "function"
    if isinstance(obj, property):
        return "property"
    if inspect.ismodule(obj):
        return "module"
    return "value"


def _signature(obj) -> str | None:
    try:
        if isinstance(obj, (staticmethod, classmethod)):
            obj = obj.__func__
        if isinstance(obj, property):
            obj = obj.fget
            if obj is None:
                return None
            sig = inspect.signature(obj)
            ret = sig.return_annotation
            return None if ret is inspect.Signature.empty else f"-> {_ann(ret)}"
        if inspect.isclass(obj):
            init = inspect.getattr_static(obj, "__init__", None)
            if inspect.isfunction(init):
                sig = inspect.signature(init)
                params = list(sig.parameters.values())[1:]
                return str(sig.replace(parameters=params))
        return str(inspect.signature(obj))
    except (TypeError, ValueError):
        return None


def _ann(a) -> str:
    return a if isinstance(a, str) else getattr(a, "__name__", None) or str(a)


def _doc(obj) -> str:
    try:
        if isinstance(obj, (staticmethod, classmethod)):
            obj = obj.__func__
        d = inspect.getdoc(obj)
    except Exception:  # noqa: BLE001
        d = None
    return d if isinstance(d, str) else ""


def _members(cls) -> dict:
    """Public methods and properties of a class (names only), from its MRO's dicts."""
    methods, props = set(), set()
    for klass in inspect.getmro(cls):
        if klass is object:
            continue
        for n, v in vars(klass).items():
            if not isinstance(n, str) or n.startswith("_"):
                continue
            if isinstance(v, property):
                props.add(n)
            elif isinstance(v, (staticmethod, classmethod)) or inspect.isroutine(v):
                methods.add(n)
    return {"methods": sorted(methods)[:MEMBERS_MAX], "properties": sorted(props)[:MEMBERS_MAX],
            "methods_total": len(methods), "properties_total": len(props)}


def _enum_members(cls) -> list[str]:
    """An enum's member names in definition order (read from the class dict: nothing runs)."""
    names = vars(cls).get("_member_names_") if isinstance(cls, enum.EnumMeta) else None
    return [n for n in names if isinstance(n, str)] if isinstance(names, list) else []


def _attributes(cls, skip: set) -> tuple[list[str], int]:
    """Public class attributes that are data (not callables, descriptors, classes or enum members),
    most derived first: ``"name = repr"`` when the repr is short, else ``"name (type)"``; and how many."""
    seen, out = set(skip), []
    for klass in inspect.getmro(cls):
        if klass is object or klass is enum.Enum:
            continue
        for n, v in vars(klass).items():
            if not isinstance(n, str) or n.startswith("_") or n in seen:
                continue
            seen.add(n)
            if callable(v) or hasattr(type(v), "__get__") or isinstance(v, enum.Enum):
                continue
            r = _safe_repr(v)
            out.append(f"{n} = {r}" if len(r) <= VALUE_SHOWN and "\n" not in r else f"{n} ({type(v).__name__})")
    return out[:ATTRS_MAX], len(out)


def check_name(name) -> list[str]:
    """The parts of a valid dotted name, else ValueError saying why."""
    if not isinstance(name, str):
        raise ValueError("name must be a string")
    if len(name) > NAME_CAP:
        raise ValueError(f"name is longer than {NAME_CAP} characters")
    parts = name.strip().split(".")
    if not 1 <= len(parts) <= 4:
        raise ValueError("name must be a build123d name or Class.attribute (at most 4 dotted parts)")
    for p in parts:
        if not _PART.match(p):
            raise ValueError(f"{p[:40]!r} is not a public name (letters, digits, '_'; no leading '_')")
    return parts


def lookup(name) -> dict:
    """Signature, docstring (and members for a class) of a build123d name or ``Class.attr``."""
    parts = check_name(name)
    exports = star_exports()
    head = parts[0]
    if head not in exports:
        close = difflib.get_close_matches(head, list(exports), n=5, cutoff=0.6)
        sub = [n for n in exports if head.lower() in n.lower()][:10]
        return {"ok": False, "error": f"build123d does not export {head!r}", "did_you_mean": close,
                "containing": sub}
    obj = exports[head]
    owner = None
    for p in parts[1:]:
        owner = obj
        try:
            nxt = inspect.getattr_static(obj, p)
        except AttributeError:
            try:
                nxt = getattr(obj, p)  # e.g. an enum member, a class attribute set by a metaclass
            except Exception:  # noqa: BLE001
                names = [n for n in dir(obj) if not n.startswith("_")] if inspect.isclass(obj) else []
                close = difflib.get_close_matches(p, names, n=5, cutoff=0.6)
                return {"ok": False, "error": f"{'.'.join(parts[:parts.index(p)])} has no attribute {p!r}",
                        "did_you_mean": close, "containing": []}
        obj = nxt
    kind = _kind(obj)
    out = {"ok": True, "name": ".".join(parts), "kind": kind}
    is_enum = kind == "class" and isinstance(obj, enum.EnumMeta)  # Align(*args, **kwds) says nothing
    sig = _signature(obj) if kind in ("class", "function", "property") and not is_enum else None
    if sig is not None:
        out["signature"] = cap(sig, SIG_CAP)
    if kind == "value":
        out["value"] = cap(_safe_repr(obj), 300)
        out["type"] = type(obj).__name__
    doc = _doc(obj) if kind != "value" or owner is None else ""
    out["doc"] = cap(doc, DOC_CAP)
    if kind == "class":
        out.update(_members(obj))
        members = _enum_members(obj)
        if members:
            out["enum_members"] = [cap(m, 100) for m in members[:MEMBERS_MAX]]
            out["enum_members_total"] = len(members)
        attrs, total = _attributes(obj, set(members))
        if attrs:
            out["attributes"] = [cap(a, 160) for a in attrs]
            out["attributes_total"] = total
    out["versions"] = versions()
    return out


def _safe_repr(obj) -> str:
    try:
        r = repr(obj)
        return r if isinstance(r, str) else "?"
    except Exception:  # noqa: BLE001
        return "?"


def search(query) -> dict:
    """Names ``from build123d import *`` binds that contain ``query`` (case-insensitive)."""
    if not isinstance(query, str):
        raise ValueError("query must be a string")
    q = query.strip().lower()
    if not q or len(q) > NAME_CAP:
        raise ValueError(f"query must be 1-{NAME_CAP} characters")
    exports = star_exports()
    hits = sorted((n for n in exports if q in n.lower()), key=lambda n: (not n.lower().startswith(q), n))
    out = []
    for n in hits[:SEARCH_MAX]:
        obj = exports[n]
        first = _doc(obj).strip().split("\n", 1)[0] if _kind(obj) in ("class", "function") else ""
        out.append({"name": n, "kind": _kind(obj), "summary": cap(first, 160)})
    seen: set = set()
    members = []  # methods/properties of the core classes: "Part.fillet", "Shape.edges"
    for cname in CORE_CLASSES:
        cls = exports.get(cname)
        if not inspect.isclass(cls):
            continue
        for klass in inspect.getmro(cls)[:-1]:
            for n, v in vars(klass).items():
                if isinstance(n, str) and not n.startswith("_") and q in n.lower() and n not in seen:
                    seen.add(n)
                    members.append({"name": f"{cname}.{n}", "kind": _kind(v)})
    return {"ok": True, "query": cap(query, NAME_CAP), "matches": out, "total": len(hits),
            "members": members[:SEARCH_MAX], "versions": versions()}


def op_api(msg: dict, ctx) -> tuple[dict, bytes]:
    """The jail op: ``{"name": ...}`` -> lookup, ``{"query": ...}`` -> search, neither -> versions."""
    name, query = msg.get("name"), msg.get("query")
    if name not in (None, ""):
        return lookup(name), b""
    if query not in (None, ""):
        return search(query), b""
    return {"ok": True, "versions": versions(), "exports": len(star_exports())}, b""

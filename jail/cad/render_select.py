"""Rendering, step 0: which parts to draw, one colour and one legend entry each.

A name may hold a shape, a builder (``BuildPart``/``BuildSketch``/``BuildLine``: drawn through its
part, sketch or line), or a list, tuple or dict of those (one part per element: ``parts[0]``,
``parts['lid']``). A ``Compound`` with several children (its assembly ``children``, else the
sub-shapes of its TopoDS compound; not for a ``Part``, ``Sketch`` or ``Curve``, which an operation
made whole) is split into one part per child, named by the child's
``label`` when it is a plain word, else ``assy[i]``. Without names, every top-level shape and
every list/dict of shapes is drawn (each distinct shape once), except sketches and lines of
builders nested in another builder (the sketch an extrude consumed); but when the code called
``ocp_vscode.show()``, what it displayed last is drawn instead (``select_shown``).

Blocks: more than ``RENDER_MAX_OBJECTS`` parts (a list over the cap is refused with a message
saying how to narrow it; a compound whose children do not fit is drawn in one colour). Does not
block: user code that patched build123d giving a wrong picture of its own model (the launcher
checks the names against its own pattern).
"""
from __future__ import annotations

import re
from typing import Any

from jail.cad.measure import _is_builder, _topods, is_empty_shape
from jail.cad.names import cap, type_name, user_names
from jail.cad.render_shade import PALETTE
from jail.cad.render_view import RenderError
from jail.wire.caps import NAME_CAP, RENDER_MAX_OBJECTS

__all__ = ["select_parts", "select_shown", "LABEL_RE", "MAX_ELEMENTS_SCANNED", "SHOWN_DEPTH"]

LABEL_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_ .\-]{0,47}$")  # a label or dict key shown as is
MAX_ELEMENTS_SCANNED = 10_000  # a default render looks at no more elements of one list than this
SHOWN_DEPTH = 3  # show([a, [b, [c]]]): nested lists are looked into this deep, no deeper


def _label(v: Any) -> str | None:
    try:
        if isinstance(v, str) and LABEL_RE.fullmatch(str.__str__(v)) and v.strip() == v:
            return str.__str__(v)
    except Exception:  # noqa: BLE001
        pass
    return None


def _children(value: Any, w) -> list[tuple[str | None, Any]]:
    """``[(label or None, TopoDS_Shape)]`` of a compound with two or more children, else []."""
    from OCP.TopAbs import TopAbs_COMPOUND
    from OCP.TopoDS import TopoDS_Iterator
    try:
        if w.ShapeType() != TopAbs_COMPOUND:
            return []
        kids = value.children if not _is_builder(value) else ()
        if isinstance(kids, (tuple, list)) and len(kids) >= 2:
            out = []
            for k in kids[:RENDER_MAX_OBJECTS + 1]:
                kw = _topods(k)
                if kw is None:
                    return []
                out.append((_label(getattr(k, "label", None)), kw))
            return out
        if _made_whole(value):
            return []
        out = []
        it = TopoDS_Iterator(w)
        while it.More() and len(out) <= RENDER_MAX_OBJECTS:
            out.append((None, it.Value()))
            it.Next()
        return out if len(out) >= 2 else []
    except Exception:  # noqa: BLE001 - hostile properties: drawn whole
        return []


def _made_whole(value: Any) -> bool:
    """A ``Part``, ``Sketch`` or ``Curve``: one object an operation made, whatever pieces its compound
    holds (a sketch's separate faces, a cut that left two solids), drawn in one colour; a plain
    ``Compound`` of shapes is an assembly, one colour per shape."""
    import build123d as b
    return isinstance(value, (b.Part, b.Sketch, b.Curve))


def _elements(value: Any) -> list[tuple[str, Any]] | None:
    """``[(suffix, element)]`` of a list, tuple or dict; None for anything else."""
    if isinstance(value, (list, tuple)):
        return [(f"[{i}]", v) for i, v in enumerate(value[:MAX_ELEMENTS_SCANNED])]
    if isinstance(value, dict):
        out = []
        for i, (k, v) in enumerate(list(value.items())[:MAX_ELEMENTS_SCANNED]):
            if isinstance(k, int) and not isinstance(k, bool):
                out.append((f"[{int.__repr__(k)}]", v))
            else:
                lab = _label(k)
                out.append((f"['{lab}']" if lab else f"[#{i}]", v))
        return out
    return None


class _Picker:
    """Collects ``(name, TopoDS_Shape)`` parts, each distinct shape once."""

    def __init__(self):
        self.parts: list[tuple[str, Any]] = []
        self.groups: list[list] = []  # indices of the parts of one compound, to merge if over the cap

    def add(self, name: str, value: Any, w) -> None:
        kids = _children(value, w)
        if not kids:
            self._put(name, w)
            return
        used = {n for n, _ in self.parts}
        start = len(self.parts)
        for i, (lab, kw) in enumerate(kids):
            nm = lab if lab and lab not in used else f"{name}[{i}]"
            used.add(nm)
            self._put(nm, kw)
        self.groups.append([name, w, start, len(self.parts)])

    def _put(self, name: str, w) -> None:
        if any(w2.IsSame(w) for _, w2 in self.parts):
            return
        self.parts.append((name, w))

    def fit(self) -> None:
        """Merge compounds back into one part each, largest first, until the parts fit the cap."""
        for g in sorted(self.groups, key=lambda g: g[2] - g[3]):
            if sum(p is not None for p in self.parts) <= RENDER_MAX_OBJECTS:
                break
            name, w, a, b = g
            self.parts[a:b] = [(name, w)] + [None] * (b - a - 1)
        self.parts = [p for p in self.parts if p is not None]


def _missing(namespace: dict, name: Any) -> RenderError:
    have = [n for n in user_names(namespace) if _topods(namespace.get(n)) is not None
            or _elements(namespace.get(n))]
    return RenderError(f"no object named {cap(str(name), NAME_CAP)!r}; shapes in the session: "
                       + (", ".join(have[:30]) if have else "none"))


def select_parts(namespace: dict, names: list[str] | None) -> list[tuple[str, Any]]:
    """``[(part name, TopoDS_Shape)]`` to draw, at most ``RENDER_MAX_OBJECTS``; RenderError with a
    message for the assistant when a name is missing, not drawable, or holds too many shapes.
    Without names: what ``show()`` displayed last (``select_shown``), if anything, else the default."""
    if not names:
        shown = select_shown(namespace)
        if shown is not None:
            return shown
    pk = _Picker()
    if names:
        for name in names:
            if not isinstance(name, str) or name not in namespace:
                raise _missing(namespace, name)
            value = namespace[name]
            w = _topods(value)
            if w is not None:
                pk.add(name, value, w)
                continue
            els = _elements(value)
            if els is None and is_empty_shape(value):  # Part()
                raise RenderError(f"{cap(name, NAME_CAP)!r} is an empty {type_name(value)} (no solids, faces or "
                                  "edges)")
            if els is None:
                raise RenderError(f"{cap(name, NAME_CAP)!r} is a {type_name(value)}, not a shape, a builder "
                                  "or a list/dict of shapes")
            if not els:
                raise RenderError(f"{cap(name, NAME_CAP)!r} is an empty {type_name(value)}")
            if len(els) > RENDER_MAX_OBJECTS:
                raise RenderError(f"{cap(name, NAME_CAP)!r} holds {len(els)} elements, over the cap of "
                                  f"{RENDER_MAX_OBJECTS} parts per render: bind a slice to a name "
                                  f"(e.g. first = {cap(name, 60)}[:{RENDER_MAX_OBJECTS}]) and render that")
            for suffix, v in els:
                ew = _topods(v)
                if ew is None:
                    raise RenderError(f"{cap(name, NAME_CAP)}{suffix} is a {type_name(v)}, not a shape "
                                      "(or an empty builder)")
                pk._put(name + suffix, ew)
    else:
        for n in user_names(namespace):
            value = namespace.get(n)
            if _is_builder(value) and _nested_sketch(value):
                continue
            w = _topods(value)
            if w is not None:
                dup = next((i for i, (_, w2) in enumerate(pk.parts) if w2.IsSame(w)), None)
                if dup is not None:  # a builder and its .part: drawn once, under the shape's name
                    if _is_builder(namespace.get(pk.parts[dup][0])) and not _is_builder(value):
                        pk.parts[dup] = (n, w)
                    continue
                pk.add(n, value, w)
                continue
            els = _elements(value)
            if not els:
                continue
            ws = [(s, _topods(v)) for s, v in els]
            if all(ew is not None for _, ew in ws):  # only lists made of shapes
                for s, ew in ws:
                    pk._put(n + s, ew)
        if not pk.parts:
            raise RenderError("the session has no shapes yet: run execute() to make one")
    pk.fit()
    if len(pk.parts) > RENDER_MAX_OBJECTS:
        raise RenderError(f"{len(pk.parts)} parts to draw, over the cap of {RENDER_MAX_OBJECTS} per render: "
                          "name the objects to draw (objects=[...])")
    return pk.parts


def _nested_sketch(value: Any) -> bool:
    """A BuildSketch/BuildLine used inside another builder (its sketch became part of that one)."""
    try:
        import build123d as b
        return isinstance(value, (b.BuildSketch, b.BuildLine)) and getattr(value, "builder_parent", None) is not None
    except Exception:  # noqa: BLE001
        return False


def select_shown(namespace: dict) -> list[tuple[str, Any]] | None:
    """What ``show()`` displayed last (``jail.cad.shims.record``) as ``[(part name, TopoDS_Shape)]``,
    or None when nothing was shown (or ``show_clear()`` was called). The record is untrusted (user
    code may have replaced it): exact list/tuple types are looked into (``SHOWN_DEPTH`` levels, at
    most ``MAX_ELEMENTS_SCANNED`` objects in all), anything else that is not a shape is skipped, and
    a record that cannot be read is a RenderError. Names: the one given to show(), else the session
    name bound to the object (or to the builder whose part, sketch or line it is), else ``shown[i]``; over ``RENDER_MAX_OBJECTS`` parts, the last ones
    are drawn as one part ``others``."""
    from jail.cad.shims import record
    items = record.last()
    if not items:
        return None
    try:
        bound = {}
        names = user_names(namespace)[:MAX_ELEMENTS_SCANNED]
        for n in names:
            bound.setdefault(id(namespace.get(n)), n)
        for n in names:  # show(body.part): named after the builder whose part it is
            out = _builder_output(namespace.get(n))
            if out is not None:
                bound.setdefault(id(out), n)
        pk = _Picker()
        budget = [MAX_ELEMENTS_SCANNED]
        colours: dict = {}  # part name -> the colour show() was given for it
        for i, (obj, given, colour) in enumerate(items):
            name = _label(given) or bound.get(id(obj)) or f"shown{i}"
            start = len(pk.parts)
            _shown_into(pk, name, obj, SHOWN_DEPTH, budget, bound)
            if colour is not None:
                for n in [name] + [n for n, _ in pk.parts[start:]]:
                    colours.setdefault(n, colour)
            if budget[0] <= 0:
                break
    except RenderError:
        raise
    except Exception as e:  # noqa: BLE001 - a record that lies: no picture, a clear reason
        raise RenderError(f"the objects passed to show() could not be read ({type_name(e)})") from None
    if not pk.parts:
        raise RenderError("show() was given nothing that can be drawn (no shape, builder or list of shapes)")
    pk.fit()
    if len(pk.parts) > RENDER_MAX_OBJECTS:
        pk.parts[RENDER_MAX_OBJECTS - 1:] = [("others", _compound([w for _, w in pk.parts[RENDER_MAX_OBJECTS - 1:]]))]
    out = ShownParts(pk.parts)
    out.palette = [colours.get(n) or PALETTE[i % len(PALETTE)] for i, (n, _) in enumerate(pk.parts)]
    return out


def _builder_output(value: Any) -> Any:
    """A builder's part, sketch or line (None for anything else, or when reading it raises)."""
    if not _is_builder(value):
        return None
    try:
        import build123d as b
        attr = "part" if isinstance(value, b.BuildPart) else "sketch" if isinstance(value, b.BuildSketch) else "line"
        return getattr(value, attr)
    except Exception:  # noqa: BLE001 - hostile properties: no name from it
        return None


class ShownParts(list):
    """``select_shown``'s parts, with ``palette``: one ``(r, g, b)`` per part (show()'s colour or the
    renderer's own)."""
    palette: list


def _shown_into(pk: _Picker, name: str, obj: Any, depth: int, budget: list, bound: dict) -> None:
    budget[0] -= 1
    if budget[0] < 0:
        return
    w = _topods(obj)
    if w is not None:
        if depth == SHOWN_DEPTH:
            pk.add(name, obj, w)  # an assembly: one part per child
        else:
            pk._put(name, w)
        return
    t = type(obj)  # not isinstance: that may ask the object's own __class__
    if depth <= 0 or not issubclass(t, (list, tuple)):
        return  # a Location, a Plane, a number: the viewer's helpers, not drawn here
    it = list.__iter__(obj) if issubclass(t, list) else tuple.__iter__(obj)  # no overridden __iter__
    for j, v in enumerate(it):
        if budget[0] <= 0:
            return
        sub = bound.get(id(v)) or (f"{name}[{j}]" if depth == SHOWN_DEPTH else name)
        _shown_into(pk, sub, v, depth - 1, budget, bound)


def _compound(shapes: list):
    from OCP.BRep import BRep_Builder
    from OCP.TopoDS import TopoDS_Compound
    c, b = TopoDS_Compound(), BRep_Builder()
    b.MakeCompound(c)
    for w in shapes:
        b.Add(c, w)
    return c

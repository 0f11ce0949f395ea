"""Layer 8, continued: the standard library's string evaluators, made safe for user code.

Reachable from the views, these evaluated strings with the *real* builtins in a namespace the caller
steers: ``typing.get_type_hints`` / ``ForwardRef._evaluate`` (string annotations; the globals of a
forged ``__module__``, of ``__wrapped__``, of ``ForwardRef(module=)``, or a ``{}``), ``functools.
singledispatch().register`` (through them), ``dataclass``/``make_dataclass`` (``exec`` of field
names: exact ``str`` identifiers only; re-exported by build123d), ``numpy.load``/``lib.format.read_array`` with ``allow_pickle``, ``numpy.info``/``lib.
add_newdoc`` (``__import__`` of a caller's string). :func:`install` replaces ``ForwardRef._evaluate``
in this process: the text must be a type expression (``type_expr``), compiled afresh; names resolve
in the built-in types only and, with user code on the stack, in the namespaces as user code sees
them (module dicts through views; stdlib/jail modules: nothing; ``__main__``: the user's). With no
user frame (a library's own annotations) module dicts are read as they are. :func:`substitutes` /
:func:`refused` give the views checked stand-ins or refusals. Does not block what the OS layers stop.
"""
from __future__ import annotations

import builtins as _builtins
import functools
import sys
import types
import typing
from collections import ChainMap
from collections.abc import Mapping

from jail.cad import type_expr

__all__ = ["AnnotationRefused", "install", "installed", "substitutes", "refused", "register_user_builtins",
           "user_builtins_ids"]

#: The builtins a type expression may name: classes only (no ``__import__``, ``open``, ``eval``).
TYPE_BUILTINS = {k: v for k, v in vars(_builtins).items() if isinstance(v, type)}
#: Modules whose namespaces a forward reference never reads (user code cannot import them either).
_CLOSED_ROOTS = frozenset(getattr(sys, "stdlib_module_names", ())) | {"jail", "launcher", "builtins", "__main__"}

_REAL_EVALUATE = typing.ForwardRef._evaluate
_STATE: dict = {"view": None, "allowed": frozenset(), "user_builtins": set()}


class AnnotationRefused(TypeError):
    """A string annotation (forward reference) that the Python layers do not evaluate."""


def register_user_builtins(d: dict) -> None:
    """Remember a filtered builtins dict (``safe_builtins.make_builtins``): a frame whose globals hold
    it runs user code, and its globals are the user's namespace."""
    _STATE["user_builtins"].add(id(d))


def user_builtins_ids() -> set[int]:
    """The live set of ids :func:`register_user_builtins` fills (shared, not a copy)."""
    return _STATE["user_builtins"]


def _user_globals() -> dict | None:
    """The globals of the innermost frame running user code, or None when no user code is on the stack."""
    f = sys._getframe(1)
    ids = _STATE["user_builtins"]
    while f is not None:
        g = f.f_globals
        if id(g.get("__builtins__")) in ids:
            return g
        f = f.f_back
    return None


def _root(name) -> str:
    return str(name).partition(".")[0]


class _ViewNamespace(Mapping):
    """A module's names as its view serves them (AttributeError -> KeyError)."""

    def __init__(self, v):
        self._v = v

    def __getitem__(self, name):
        if not isinstance(name, str):
            raise KeyError(name)
        try:
            return getattr(self._v, name)
        except AttributeError:
            raise KeyError(name) from None

    def __iter__(self):
        return iter(())

    def __len__(self):
        return 0


def _typing_construct(v) -> bool:
    return isinstance(v, (type, types.GenericAlias, types.UnionType, typing.TypeVar)) or \
        type(v).__module__ == "typing"


class _DependencyNamespace(_ViewNamespace):
    """A third-party module's names (a dependency of an allowed package, e.g. for its own dataclass
    annotations): only classes and typing constructs defined in that package or an allowed one,
    allowed modules through their views; nothing private."""

    def __init__(self, module):
        self._m = module

    def __getitem__(self, name):
        if not isinstance(name, str) or name.startswith("_"):
            raise KeyError(name)
        v = vars(self._m).get(name)
        view, allowed = _STATE["view"], _STATE["allowed"]
        if isinstance(v, types.ModuleType):
            if _root(vars(v).get("__name__")) in allowed:
                return view(v)
            raise KeyError(name)
        if _typing_construct(v):
            home = _root(getattr(v, "__module__", "") or "")
            if home in allowed or home in ("builtins", "typing", _root(self._m.__name__)):
                return v
        raise KeyError(name)


def _module_of(d):
    for m in list(sys.modules.values()):
        if isinstance(m, types.ModuleType) and vars(m) is d:
            return m
    return None


def _safe_namespace(ns, user: dict | None):
    """What a forward reference may read of the namespace ``ns`` (a dict, a module's dict, None);
    ``user``: the user's namespace when user code is on the stack, else None (then library code
    evaluates its own annotations: module dicts are read as they are)."""
    if ns is None:
        return {}
    if not isinstance(ns, Mapping):
        raise AnnotationRefused(f"a namespace must be a dict, not {type(ns).__name__}")
    m = _module_of(ns)
    if m is None or user is None:
        return ns  # the user's own dict, a class's attributes: what user code holds anyway
    name = str(vars(m).get("__name__", ""))
    if m is sys.modules.get("__main__") or name == "__main__":
        return user  # user classes say __module__ == "__main__": the user's namespace
    if _root(name) in _STATE["allowed"]:
        return _ViewNamespace(_STATE["view"](m))
    if _root(name) in _CLOSED_ROOTS:
        return {}
    return _DependencyNamespace(m)


def _evaluate(self, globalns, localns, *args, **kwargs):
    """``typing.ForwardRef._evaluate``, for a process that runs user code (see the module doc)."""
    text = self.__forward_arg__
    why = type_expr.refusal(text)
    if why:
        shown = text if isinstance(text, str) and len(text) <= 200 else f"{str(text)[:197]}..."
        raise AnnotationRefused(f"the string annotation {shown!r} is not evaluated: {why}. Only type "
                                "expressions are (names, dotted names, subscripts, constants and |)")
    mod = self.__forward_module__
    if mod is not None:
        m = sys.modules.get(mod) if isinstance(mod, str) else None
        globalns = vars(m) if isinstance(m, types.ModuleType) else globalns
    user = _user_globals()
    lookup = ChainMap(_safe_namespace(localns if localns is not None else globalns, user),
                      _safe_namespace(globalns if globalns is not None else localns, user))
    shadow = typing.ForwardRef(text, is_argument=self.__forward_is_argument__,
                               is_class=self.__forward_is_class__)  # compiled afresh from the checked text
    return _REAL_EVALUATE(shadow, {"__builtins__": TYPE_BUILTINS}, lookup, *args, **kwargs)


def install(view, allowed_imports) -> None:
    """Route every forward-reference evaluation in this process through :func:`_evaluate`
    (idempotent). ``view`` is ``safe_builtins.make_module_views(...)``."""
    _STATE["view"] = view
    _STATE["allowed"] = frozenset(allowed_imports)
    typing.ForwardRef._evaluate = _evaluate


def installed() -> bool:
    return typing.ForwardRef.__dict__.get("_evaluate") is _evaluate


def uninstall() -> None:
    """Tests only: the real evaluator back."""
    typing.ForwardRef._evaluate = _REAL_EVALUATE


# ------------------------------------------------------------------ the views' stand-ins
def refused() -> set[int]:
    """ids of objects the views refuse outright, under any name: ``numpy.info`` and
    ``numpy.lib.add_newdoc`` ``__import__`` a module named by the caller; ``NpzFile(...,
    allow_pickle=True)`` unpickles (imports and calls anything by name)."""
    if "numpy" not in sys.modules:
        return set()
    import numpy as np
    import numpy.lib.npyio as npyio
    return {id(np.info), id(np.lib.add_newdoc), id(npyio.NpzFile)}


def _no_pickle(real, what: str, pos: int):
    @functools.wraps(real)
    def wrapper(*args, **kwargs):
        if kwargs.get("allow_pickle") or (len(args) > pos and args[pos]):
            raise ValueError(f"{what}: allow_pickle=True is not available (unpickling imports and calls "
                             "anything by name)")
        if len(args) <= pos:
            kwargs["allow_pickle"] = False
        return real(*args, **kwargs)
    wrapper.__wrapped__ = None  # no way back to the real function
    return wrapper


def _checked_dataclass(real):
    def check(cls):
        ann = cls.__dict__.get("__annotations__", {}) if isinstance(cls, type) else {}
        for name in list(ann) if isinstance(ann, Mapping) else ():
            _check_field_name(name)
        return cls

    @functools.wraps(real)
    def dataclass(cls=None, /, **kwargs):
        if cls is None:
            return lambda c: real(check(c), **kwargs)
        return real(check(cls), **kwargs)
    dataclass.__wrapped__ = None
    return dataclass


_KEYWORDS = frozenset(__import__("keyword").kwlist)


def _check_field_name(name) -> None:
    """A name the dataclass machinery may write into generated code: an exact ``str`` (a subclass can
    lie in ``isidentifier`` and print as anything) that is an identifier and not a keyword."""
    if type(name) is not str or not str.isidentifier(name) or name in _KEYWORDS:
        shown = str.__str__(name)[:80] if isinstance(name, str) else type(name).__name__
        raise TypeError(f"dataclass field name {shown!r} is not an identifier (an exact str; the dataclass "
                        "decorator writes field names into generated code)")


def _checked_make_dataclass(real):
    @functools.wraps(real)
    def make_dataclass(cls_name, fields, *args, **kwargs):
        fields = list(fields)
        for item in fields:
            _check_field_name(item if isinstance(item, str) else (item[0] if isinstance(item, (tuple, list))
                                                                     and item else None))
        return real(cls_name, fields, *args, **kwargs)
    make_dataclass.__wrapped__ = None
    return make_dataclass


_SUBSTITUTES: dict[int, object] = {}
_COVERED: set[str] = set()   # the packages _SUBSTITUTES was made with


def substitutes() -> dict[int, object]:
    """``{id(real object): stand-in}`` for the views: what user code gets instead of the real one
    (made once per process)."""
    out = _SUBSTITUTES
    if out and ("numpy" in _COVERED or "numpy" not in sys.modules):
        return out
    import dataclasses
    out[id(dataclasses.dataclass)] = _checked_dataclass(dataclasses.dataclass)
    out[id(dataclasses.make_dataclass)] = _checked_make_dataclass(dataclasses.make_dataclass)
    if "numpy" in sys.modules:  # numpy is loaded by build123d; its format module is part of it
        import numpy as np
        import numpy.lib.format as fmt
        out[id(np.load)] = _no_pickle(np.load, "numpy.load", 2)
        out[id(fmt.read_array)] = _no_pickle(fmt.read_array, "numpy.lib.format.read_array", 1)
        _COVERED.add("numpy")
    return out

"""Layer 8, continued: checked ``getattr``/``setattr``/``delattr``/``hasattr``/``locals``/``globals``/
``vars``/``dir`` for profiles that do not block them (default; strict blocks them, as the seed did).

Blocks: reading an attribute by a run-time name that starts with ``_`` (except the read-only data
dunders ``DATA_DUNDERS``) or reaches frames, code or the MRO (``INTROSPECTION``); writing or deleting
one that starts with ``_``; a ``str`` subclass lying about its text (names are copied to exact
``str`` first); ``locals()``/``globals()``/``vars()``/``dir()`` called from anything but user code
(a library function handed ``globals`` as a callback would otherwise copy *its* module's dict, with
``sys`` in it). Namespaces come back as copies without dunder names: mutating them changes nothing.
Does not block: what the names lead to (the values are what user code could reach by writing
``x.name``; the AST policy and the module views judge those), ``hasattr`` of any name (a bool only).
"""
from __future__ import annotations

import builtins as _builtins
import sys

__all__ = ["DATA_DUNDERS", "INTROSPECTION", "attribute_refusal", "make", "REPLACED"]

#: Dunders user code may read (AST policy: ``x.__name__``; here: ``getattr(x, "__name__")``).
DATA_DUNDERS = frozenset({"__name__", "__qualname__", "__doc__", "__members__", "__module__"})

#: Attributes with no dunder that reach frames / code objects / globals / the MRO (policy's list).
INTROSPECTION = frozenset({
    "gi_frame", "gi_code", "gi_yieldfrom", "cr_frame", "cr_code", "cr_await", "ag_frame", "ag_code",
    "ag_await", "f_globals", "f_locals", "f_builtins", "f_back", "f_code", "f_trace", "tb_frame",
    "tb_next", "tb_lasti", "co_code", "co_consts", "co_names", "func_globals", "mro"})

#: The real builtins this module replaces: the module views never serve them under another name.
REPLACED = ("getattr", "setattr", "delattr", "hasattr", "locals", "globals", "vars", "dir")

_getattr, _setattr, _delattr, _hasattr = _builtins.getattr, _builtins.setattr, _builtins.delattr, _builtins.hasattr
_vars, _dir = _builtins.vars, _builtins.dir
_str = str.__str__  # an exact str copy of a str subclass (its own __str__ is not asked)


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def attribute_refusal(name: str, *, write: bool = False) -> str | None:
    """Why user code may not reach attribute ``name`` by a run-time string (None: it may)."""
    if name[:1] == "_":
        if not write and name in DATA_DUNDERS:
            return None
        return "names that start with '_' are not available to user code" + \
            ("" if write else f" (readable dunders: {', '.join(sorted(DATA_DUNDERS))})")
    if name in INTROSPECTION:
        return "it reaches frames, code objects or the MRO"
    return None


def _name(name, fn: str) -> str:
    if not isinstance(name, str):
        raise TypeError(f"{fn}(): attribute name must be string, not {type(name).__name__!r}")
    return _str(name)


def _refuse(name: str, fn: str, why: str):
    shown = name if len(name) <= 80 else name[:77] + "..."
    return AttributeError(f"{fn}(): attribute {shown!r} is not available: {why}")


def _without_dunders(d) -> dict:
    return {k: v for k, v in dict(d).items() if not (isinstance(k, str) and _is_dunder(k))}


def make(user_builtins_ids: set[int]) -> dict:
    """The checked functions, by builtin name; ``user_builtins_ids`` holds ``id()`` of the filtered
    builtins dicts of user namespaces (a frame whose globals hold one runs user code)."""

    def caller(fn: str):
        f = sys._getframe(2)
        if f is None or id(f.f_globals.get("__builtins__")) not in user_builtins_ids:
            raise RuntimeError(f"{fn}() without an argument may only be called from user code")
        return f

    def getattr(obj, name, *default):  # noqa: A001
        name = _name(name, "getattr")
        why = attribute_refusal(name)
        if why:
            raise _refuse(name, "getattr", why)
        return _getattr(obj, name, *default)

    def setattr(obj, name, value):  # noqa: A001
        name = _name(name, "setattr")
        why = attribute_refusal(name, write=True)
        if why:
            raise _refuse(name, "setattr", why)
        return _setattr(obj, name, value)

    def delattr(obj, name):  # noqa: A001
        name = _name(name, "delattr")
        why = attribute_refusal(name, write=True)
        if why:
            raise _refuse(name, "delattr", why)
        return _delattr(obj, name)

    def hasattr(obj, name):  # noqa: A001
        return _hasattr(obj, _name(name, "hasattr"))

    def locals():  # noqa: A001
        """A copy of the caller's local names, without dunder names."""
        return _without_dunders(caller("locals").f_locals)

    def globals():  # noqa: A001
        """A copy of the caller's global names, without dunder names."""
        return _without_dunders(caller("globals").f_globals)

    def vars(*obj):  # noqa: A001
        """``vars()``: as ``locals()``; ``vars(x)``: a copy of x's attributes, without those that start
        with '_'."""
        if not obj:
            return _without_dunders(caller("vars").f_locals)
        d = _vars(*obj)
        return {k: v for k, v in dict(d).items() if not (isinstance(k, str) and k[:1] == "_")}

    def dir(*obj):  # noqa: A001
        """``dir()``: the caller's names without dunders; ``dir(x)``: as Python's (names only)."""
        if not obj:
            return sorted(k for k in caller("dir").f_locals if not (isinstance(k, str) and _is_dunder(k)))
        return _dir(*obj)

    out = {"getattr": getattr, "setattr": setattr, "delattr": delattr, "hasattr": hasattr,
           "locals": locals, "globals": globals, "vars": vars, "dir": dir}
    for k, f in out.items():
        f.__qualname__ = k
        f.__module__ = "builtins"
    return out

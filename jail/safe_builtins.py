"""Layer 8: the builtins user code sees, and an allowlisted ``__import__``.

Like the AST policy (layer 7) this is a **usability filter, not a security
boundary**: it turns ``open(...)`` or ``import os`` into a clear ``NameError``
/ ``ImportError`` even when the code got past the static check (names built at
run time, aliasing). Anything reachable from an allowed module (numpy's file
I/O, build123d's importers, C extensions) is untouched here; the OS layers
(Landlock, seccomp, namespaces) are what stop it, and they hold alone.

What ``make_builtins`` returns: a *copy* of the builtins dict (user code can
mutate its copy, never the interpreter's) with

* every name in ``blocked_calls`` removed, except ``__import__`` which is
  replaced by a wrapper (the ``import`` statement needs the key);
* also removed (``EXTRA_REMOVED``): ``globals``/``locals`` (namespace dicts),
  ``setattr``/``delattr`` (write any attribute by a run-time string, the
  counterpart of the blocked ``getattr``), ``__loader__`` (the
  ``BuiltinImporter``: ``__loader__.load_module("posix")``), ``__spec__``,
  and the interactive helpers ``help``, ``exit``, ``quit``, ``copyright``,
  ``credits``, ``license`` (``help`` imports ``pydoc``, ``exit`` closes stdin);
* kept on purpose: ``__build_class__`` (every ``class`` statement needs it),
  ``super``, ``type``, ``object``, ``print``, ``memoryview``, ``__name__``,
  ``__debug__``.

The ``__import__`` wrapper imports only when the root package is in
``allowed_imports``, refuses relative imports, and refuses ``from m import _x``
(private and dunder names). Modules imported *by* allowed modules use their
own (real) builtins, so numpy/build123d import their dependencies normally.
The runner's own ``from build123d import *`` goes through the wrapper too.
"""

from __future__ import annotations

import sys

import builtins as _builtins
from typing import Sequence

__all__ = ["make_builtins", "make_import", "EXTRA_REMOVED"]

EXTRA_REMOVED = frozenset(
    {
        "globals", "locals", "setattr", "delattr",
        "__loader__", "__spec__",
        "help", "exit", "quit", "copyright", "credits", "license",
    }
)

_KEEP = frozenset({"__build_class__", "__import__"})


def make_import(allowed_imports: Sequence[str]):
    """An ``__import__`` that only imports allowlisted root packages."""
    allowed = frozenset(allowed_imports)
    allowed_txt = ", ".join(allowed_imports) if allowed_imports else "nothing"
    real_import = _builtins.__import__

    def __import__(name, globals=None, locals=None, fromlist=(), level=0):  # noqa: A002
        if not isinstance(name, str):
            raise TypeError(f"module name must be str, not {type(name).__name__}")
        if level:
            raise ImportError(
                f"import of {'.' * int(level) + name!r} is not allowed "
                f"(relative imports are never allowed; allowed: {allowed_txt})",
                name=name,
            )
        root = name.partition(".")[0]
        if root not in allowed:
            raise ImportError(f"import of {name!r} is not allowed (allowed: {allowed_txt})", name=name)
        # C extensions import their own private modules through this same hook when called
        # from a user frame (numpy's ndarray.__str__, fromfile, ...): private modules of an
        # allowed package that are *already loaded* are therefore allowed; new ones are not.
        loaded = sys.modules
        for part in name.split(".")[1:]:
            if part.startswith("_") and name not in loaded:
                raise ImportError(f"import of private module {name!r} is not allowed", name=name)
        for item in fromlist or ():
            if not isinstance(item, str):
                raise TypeError("fromlist items must be str")
            if item != "*" and item.startswith("_") and (item.startswith("__")
                                                          or f"{name}.{item}" not in loaded):
                raise ImportError(f"import of private name {name + '.' + item!r} is not allowed", name=name)
        return real_import(name, globals, locals, fromlist, 0)

    __import__.__qualname__ = "__import__"
    __import__.__module__ = "builtins"
    return __import__


def make_builtins(allowed_imports: Sequence[str], blocked_calls: Sequence[str]) -> dict:
    """A fresh filtered copy of the builtins dict for an exec namespace."""
    remove = (frozenset(blocked_calls) | EXTRA_REMOVED) - _KEEP
    out = {k: v for k, v in vars(_builtins).items() if k not in remove}
    out["__import__"] = make_import(allowed_imports)
    return out

"""Layer 8: the builtins user code sees, and an allowlisted ``__import__``. A usability filter.

It turns ``open(...)`` or ``import os`` into a clear ``NameError`` / ``ImportError`` even when
the code got past the static check (layer 7: names built at run time, aliasing). ``make_builtins``
gives each namespace its own copy of the builtins dict, less ``blocked_calls`` and
``EXTRA_REMOVED``; its ``__import__`` imports allowlisted root packages only and hands user code
read-only module *views* (``make_module_views``) that expose no foreign module, no dunder but
``__name__``/``__doc__``/``__all__`` and no private name, whatever name they are bound to.

The stdlib's string evaluators reachable from the views (string annotations, dataclass code
generation, numpy's pickles and ``__import__`` of a caller's string) are made safe or refused by
``evaluators`` (installed by ``make_builtins``), and those of the other allowed stdlib modules by
``stdlib_views``; tooling sub-packages (``TOOLING``: tests, f2py, distutils) cannot be imported.
Profiles that do not block ``getattr``/``vars``/... get checked versions (``introspect``,
``COMPAT_GATES``); ``open``/``os``/``pathlib`` are the jail's own (``JAIL_SERVED``). Does not block: anything else reachable from an allowed module
(numpy's file I/O, build123d's importers, C extensions) or from objects other than modules. The OS layers (Landlock, seccomp,
namespaces) stop those, and hold alone. Modules imported *by* allowed modules use the real
builtins, so numpy/build123d import their dependencies normally.
"""

from __future__ import annotations

import sys
import types

import builtins as _builtins
from typing import Sequence

from jail.cad import evaluators, fsviews, introspect, stdlib_views

__all__ = ["make_builtins", "make_import", "EXTRA_REMOVED", "TOOLING", "COMPAT_GATES", "JAIL_SERVED", "serve"]

#: Sub-packages of allowed packages that are tooling, not modelling (test suites, Fortran/C build
#: tools that run compilers and exec generated code, ctypes library loading): refused at import
#: and in the views.
TOOLING = frozenset({"tests", "testing", "conftest", "f2py", "distutils", "mypy_plugin", "testutils",
                     "print_coercion_tables", "ctypeslib"})


def _tooling(modname: str) -> bool:
    return any(p in TOOLING for p in modname.split(".")[1:])

#: Removed besides ``blocked_calls``: ``globals``/``locals`` (namespace dicts), ``setattr``/
#: ``delattr`` (write any attribute by a run-time string, the counterpart of the blocked
#: ``getattr``), ``__loader__`` (the ``BuiltinImporter``: ``__loader__.load_module("posix")``),
#: ``__spec__``, and the interactive helpers (``help`` imports ``pydoc``, ``exit`` closes stdin).
#: A profile that does not block ``getattr``/``vars`` gets checked ``setattr``/``delattr``/
#: ``locals``/``globals`` back (``COMPAT_GATES``, ``jail.cad.introspect``).
#: Kept on purpose: ``__build_class__`` (every ``class`` statement), ``super``, ``type``,
#: ``object``, ``print``, ``memoryview``, ``__name__``, ``__debug__``.
EXTRA_REMOVED = frozenset(
    {
        "globals", "locals", "setattr", "delattr",
        "__loader__", "__spec__",
        "help", "exit", "quit", "copyright", "credits", "license",
    }
)

# never removed: every class statement needs __build_class__; __import__ is replaced by the
# allowlisted wrapper (the import statement needs the key)
_KEEP = frozenset({"__build_class__", "__import__"})


_VIEW_DUNDERS = frozenset({"__name__", "__doc__", "__all__", "__getattr__"})

#: Checked builtin -> the names that must all be unblocked for the profile to serve it (strict blocks
#: getattr/vars/dir/hasattr, as the seed did: none of these is served there).
COMPAT_GATES = {"getattr": ("getattr",), "setattr": ("getattr", "setattr"), "delattr": ("getattr", "delattr"),
                "hasattr": ("hasattr",), "vars": ("vars",), "locals": ("vars", "locals"),
                "globals": ("vars", "globals"), "dir": ("dir",)}

#: Names the jail serves with its own objects, never the real ones: the builtin ``open`` and the modules
#: ``os``/``os.path``/``pathlib`` (jail/cad/fsviews.py, registered below). A name with no factory is
#: refused (fail closed), even when the profile allows it. (``ocp_vscode`` is the jail's stand-in module,
#: jail/cad/shims/, put in ``sys.modules`` before any user code and viewed like any allowed module.)
JAIL_SERVED = frozenset({"open", "os", "os.path", "posixpath", "pathlib"})
_SERVED: dict = {}


def serve(name: str, factory) -> None:
    """Register ``factory()`` as what user code gets for ``name`` (one of ``JAIL_SERVED``)."""
    if name not in JAIL_SERVED:
        raise ValueError(f"{name!r} is not a jail-served name")
    _SERVED[name] = factory


# the jail's own os, os.path, pathlib and open: over the call's scratch directory (jail/cad/fsviews.py)
for _name, _module in fsviews.MODULES.items():
    serve(_name, lambda m=_module: m)
serve("open", lambda: fsviews.open_)


def _served(name: str):
    """The jail's object for ``name`` (a JAIL_SERVED name), or None when nothing serves it."""
    f = _SERVED.get(name)
    return f() if f is not None else None


def _loader_types() -> tuple:
    import importlib.machinery as m
    out = [m.ModuleSpec, m.BuiltinImporter, m.FrozenImporter, m.PathFinder, m.FileFinder,
           m.SourceFileLoader, m.SourcelessFileLoader, m.ExtensionFileLoader]
    try:
        import zipimport
        out.append(zipimport.zipimporter)
    except ImportError:  # pragma: no cover
        pass
    return tuple(out)


def _closed_getattr(v, modname: str, why: str):
    def __getattr__(name):
        raise AttributeError(f"module {modname!r} is not available to user code: {why}", name=name, obj=v)
    return __getattr__


def make_module_views(allowed_imports: Sequence[str], blocked_calls: Sequence[str] = ()):
    """``view(module)``: the read-only module object user code gets from ``import`` instead of the
    real module, so the rule "an allowlisted module exposes no foreign module" follows the *value*,
    whatever name it is bound to (``t = typing; t.sys``, ``x = np; x.ctypeslib.ctypes``).

    A view is a ``types.ModuleType`` (``isinstance(np, types.ModuleType)`` holds) whose own
    ``__dict__`` is a filtered copy of the module's, made once per module and process: attribute
    reads are plain module-dict lookups (no Python code on the hot path). Left out, and refused
    with ``AttributeError`` when asked for: dunders other than ``__name__``/``__doc__``/``__all__``
    (so no ``__builtins__``, ``__loader__``, ``__spec__``, ``__file__``, ``__path__``), private
    ``_x`` names, names in ``blocked_calls``, modules outside ``allowed_imports``, the builtins
    module and dict, the interpreter's blocked builtins under another name, and module specs and
    loaders. Sub-modules of allowed packages are viewed too, on first access (recursively);
    ``__all__`` lists only the names the view serves, so ``from m import *`` gets those. Names
    missing from the copy (attributes set after the view was made, lazy module ``__getattr__``)
    are fetched from the module and filtered the same way. Views cannot be assigned to.

    What it does not cover: objects other than modules (a function's ``__globals__``, a class's
    ``__dict__``: dunders, refused by the AST layer), code that reaches ``sys.modules`` through
    C extensions, attributes rebound on a real module after its view was made.
    """
    allowed = frozenset(allowed_imports)
    blocked = frozenset(blocked_calls)
    allowed_txt = ", ".join(allowed_imports) if allowed_imports else "nothing"
    forbidden_ids = {id(_builtins), id(vars(_builtins))}
    forbidden_ids |= {id(getattr(_builtins, n)) for n in blocked | set(EXTRA_REMOVED) | set(introspect.REPLACED)
                      | JAIL_SERVED if hasattr(_builtins, n)}
    loader_types = _loader_types()
    compat = "getattr" not in blocked  # default: re.compile is served, the real compile never is
    views: dict[int, tuple] = {}                 # id(module) -> (module, view)
    stand_ins = {**evaluators.substitutes(), **stdlib_views.substitutes()}  # id(real) -> safe stand-in
    if "open" not in blocked:  # strict blocks open: no scratch directory there, exporters as the seed had them
        stand_ins.update(fsviews.stand_ins())     # id(build123d file function) -> scratch-directory one
    forbidden_ids |= evaluators.refused()        # evaluators with no safe stand-in
    forbidden_why = stdlib_views.refused()       # stdlib objects with no safe stand-in, and why

    def refusal(modname: str, name: str, value) -> str | None:
        """Why ``modname.name`` (= value) is not served, or None (then ``admit`` serves it)."""
        if name.startswith("__") and name.endswith("__") and len(name) > 4:
            if name not in _VIEW_DUNDERS:
                return "dunder attributes of modules are not available"
        elif name.startswith("_"):
            return "private module attributes are not available"
        if name in blocked and (not compat or value is None):  # compat: by identity (forbidden_ids)
            return f"{name!r} is blocked"
        if isinstance(value, types.ModuleType):
            try:
                target = str(vars(value).get("__name__", "?"))
            except Exception:  # noqa: BLE001
                return "it is a module that cannot be identified"
            if target.partition(".")[0] not in allowed:
                return f"it is the module {target!r}, which is not an allowed import (allowed: {allowed_txt})"
            if _tooling(target):
                return f"it is the module {target!r}, which is tooling (tests, build tools), not modelling"
            if target in stdlib_views.REFUSED_MODULES:
                return f"it is the module {target!r}, which reaches files, sockets or imports by name"
            if target in JAIL_SERVED and target not in _SERVED:
                return f"the jail serves its own {target!r}, and this build has none"
            return None
        if id(value) in forbidden_why:
            return forbidden_why[id(value)]
        if id(value) in forbidden_ids or isinstance(value, loader_types) or any(value is t for t in loader_types):
            return "it is part of the import machinery, the interpreter's builtins or a string evaluator"
        return None

    def admit(value):
        if isinstance(value, types.ModuleType):
            target = vars(value).get("__name__")
            if target in JAIL_SERVED:
                return _served(target)
            return view(value)
        return stand_ins.get(id(value), value)

    def make_getattr(mod, v):
        """The view's module-level ``__getattr__`` (PEP 562): called only for names missing from its
        dict, so served names cost a plain dict lookup."""
        def __getattr__(name):
            own = vars(v)
            modname = str(own.get("__name__", "?"))
            if not isinstance(name, str):
                raise AttributeError(f"module {modname!r} has no attribute {name!r}")
            if name.startswith("_"):  # never asks the module: no lazy import of a private name
                why = refusal(modname, name, None)
                if why:
                    raise AttributeError(f"module {modname!r} attribute {name!r} is not available to user code: "
                                         f"{why}", name=name, obj=v)
            d = vars(mod)
            try:
                value = d[name] if name in d else getattr(mod, name)
            except AttributeError:
                value = sys.modules.get(f"{d.get('__name__', '')}.{name}")
                if value is None:
                    raise AttributeError(f"module {modname!r} has no attribute {name!r}", name=name,
                                         obj=v) from None
            why = refusal(modname, name, value)
            if why:
                raise AttributeError(f"module {modname!r} attribute {name!r} is not available to user code: {why}",
                                     name=name, obj=v)
            value = admit(value)
            own[name] = value
            return value
        return __getattr__

    class Module(types.ModuleType):
        """A read-only, filtered view of an allowed module (see make_module_views)."""

        def __setattr__(self, name, value):
            raise AttributeError(f"module {vars(self).get('__name__', '?')!r} is read-only here")

        def __delattr__(self, name):
            raise AttributeError(f"module {vars(self).get('__name__', '?')!r} is read-only here")

        def __repr__(self):
            return f"<module {vars(self).get('__name__', '?')!r}>"

    def view(mod):
        """The view of ``mod`` (made on first use); anything that is not a module is returned as is."""
        if not isinstance(mod, types.ModuleType) or type(mod) is Module:
            return mod
        d = vars(mod)
        modname = str(d.get("__name__", "?"))
        if modname in JAIL_SERVED and modname in _SERVED:
            return _served(modname)
        got = views.get(id(mod))
        if got is not None and got[0] is mod:
            return got[1]
        v = Module(modname)
        own = vars(v)
        own.clear()
        own["__name__"] = modname
        why = refusal(modname, "module", mod)
        if why:  # a module reached by its name (a class's __module__, a forward reference's module=)
            own["__doc__"], own["__all__"] = None, []
            own["__getattr__"] = _closed_getattr(v, modname, why)
            views[id(mod)] = (mod, v)
            return v
        own["__doc__"] = d.get("__doc__") if isinstance(d.get("__doc__"), str) else None
        for k, val in list(d.items()):
            if not isinstance(k, str) or k in _VIEW_DUNDERS or isinstance(val, types.ModuleType):
                continue  # modules are viewed on first access (see __getattr__)
            if refusal(modname, k, val) is None:
                own[k] = admit(val)
        names = d.get("__all__")
        if isinstance(names, (list, tuple)):
            keep = []
            for n in names:
                if not isinstance(n, str):
                    continue
                if n in own:
                    keep.append(n)
                elif n in d and isinstance(d[n], types.ModuleType) and refusal(modname, n, d[n]) is None:
                    keep.append(n)
            own["__all__"] = keep
        own["__getattr__"] = make_getattr(mod, v)
        views[id(mod)] = (mod, v)
        return v

    view.Module = Module
    return view


def _import_served(name: str, fromlist):
    """``import os.path`` / ``from pathlib import Path`` of a JAIL_SERVED module: the jail's object."""
    root = name.partition(".")[0]
    obj = _served(root)
    if obj is None:
        raise ImportError(f"import of {name!r} is not available: the jail serves its own {root!r}, "
                          "and this build has none", name=name)
    top = obj
    parts = name.split(".")
    for i in range(1, len(parts)):
        sub = _served(".".join(parts[:i + 1]))
        obj = sub if sub is not None else getattr(obj, parts[i])
    return obj if fromlist else top


def make_import(allowed_imports: Sequence[str], blocked_calls: Sequence[str] = (), *, view=None):
    """An ``__import__`` that only imports allowlisted root packages, and hands user code
    read-only views of them (:func:`make_module_views`). It refuses relative imports, new private
    modules and ``from m import _x`` (private and dunder names). The runner's own
    ``from build123d import *`` goes through it too."""
    allowed = frozenset(allowed_imports)
    allowed_txt = ", ".join(allowed_imports) if allowed_imports else "nothing"
    real_import = _builtins.__import__
    view = view or make_module_views(allowed_imports, blocked_calls)

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
        if _tooling(name) or any(_tooling(f"{name}.{item}") for item in fromlist or () if isinstance(item, str)):
            raise ImportError(f"import of {name!r} is not allowed: test suites and build tools (f2py, "
                              "distutils, ctypeslib) are not modelling code", name=name)
        for full in (name, *(f"{name}.{i}" for i in fromlist or () if isinstance(i, str))):
            if full in stdlib_views.REFUSED_MODULES:
                raise ImportError(f"import of {full!r} is not allowed: logging.config, logging.handlers and "
                                  "json.tool reach files, sockets or import by name", name=full)
        if root in JAIL_SERVED:
            return _import_served(name, fromlist)
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
        mod = real_import(name, globals, locals, fromlist, 0)
        if fromlist and isinstance(mod, types.ModuleType):
            v = view(mod)
            for item in fromlist:  # refuse here what the view refuses: ``from typing import sys``
                if item != "*" and not (isinstance(item, str) and item in vars(v)):
                    try:
                        getattr(v, item)
                    except AttributeError as e:
                        if "not available" in str(e):
                            raise ImportError(f"cannot import name {item!r} from {name!r}: "
                                              f"{str(e).split(': ', 1)[-1]}", name=name) from None
            return v
        return view(mod)

    __import__.__qualname__ = "__import__"
    __import__.__module__ = "builtins"
    for root in allowed:  # views of the loaded allowlisted packages made now (in the zygote: once)
        if isinstance(sys.modules.get(root), types.ModuleType):
            view(sys.modules[root])
    return __import__


def make_builtins(allowed_imports: Sequence[str], blocked_calls: Sequence[str]) -> dict:
    """A fresh filtered copy of the builtins dict for an exec namespace."""
    blocked = frozenset(blocked_calls)
    remove = (blocked | EXTRA_REMOVED | frozenset(introspect.REPLACED) | JAIL_SERVED) - _KEEP
    out = {k: v for k, v in vars(_builtins).items() if k not in remove}
    view = make_module_views(allowed_imports, blocked_calls)
    out["__import__"] = make_import(allowed_imports, blocked_calls, view=view)
    evaluators.install(view, allowed_imports)  # this process evaluates strings for user code
    evaluators.register_user_builtins(out)
    checked = introspect.make(evaluators.user_builtins_ids())
    for name, gate in COMPAT_GATES.items():  # strict blocks every gate: none of these there
        if not blocked.intersection(gate):
            out[name] = checked[name]
    for name in JAIL_SERVED:  # builtins the jail serves itself (open): only when a factory exists
        if name not in blocked and name in vars(_builtins) and name in _SERVED:
            out[name] = _served(name)
    return out

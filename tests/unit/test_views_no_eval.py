"""No callable the module views serve reaches a string evaluator with the real builtins (issue 20).

The views (jail/cad/safe_builtins.py) hand user code the allowed modules. Some stdlib functions
evaluate strings with the *real* builtins and a namespace the caller steers (``get_type_hints``
returned the real ``os``). This test walks, as the jail builds them (``runner.new_namespace`` with
the default profile's lists), every view of every importable sub-module of the allowed packages,
every callable they serve and the methods of every class, and follows statically what their code
references (globals, builtins, module attributes, closures; ``DEPTH`` levels), flagging any that
reaches an evaluator (``EVALUATORS`` by identity, ``EVALUATOR_ATTRS`` by attribute name) that is
not closed (``jail.cad.evaluators``) or reviewed (``REVIEWED``, with the reason). A new entry
point - a view that gains ``importlib.import_module``, a guard removed - fails it.

The behavioural half: the payloads that got the real ``os`` on main, through a real jailed session
under the default profile (tests/profiles/faults.toml: default + short limits), are refused.
"""
from __future__ import annotations

import builtins
import dis
import functools
import importlib
import pkgutil
import sys
import tomllib
import types
import typing

import pytest

from jail.cad import runner
from tests.helpers import zygotes
from tests.helpers.cli import REPO

try:
    from jail.cad import evaluators
except ImportError:  # main before issue 20: nothing is closed, and the walk must say so
    evaluators = None

_REAL_EVALUATE = evaluators._REAL_EVALUATE if evaluators else typing.ForwardRef._evaluate

DEFAULT = tomllib.loads((REPO / "profiles" / "default.toml").read_text())["python"]
ALLOWED, BLOCKED = DEFAULT["allowed_imports"], DEFAULT["blocked_calls"]
DEPTH = 6
JAIL_DIR = str(REPO / "jail")


def _evaluators() -> dict[int, str]:
    import marshal
    import pickle
    import pydoc
    import runpy
    import inspect
    import _pickle
    out = {id(getattr(builtins, n)): n for n in ("eval", "exec", "compile", "__import__")}
    for mod, names in ((importlib, ("import_module", "__import__")), (pickle, ("load", "loads", "Unpickler")),
                       (_pickle, ("load", "loads", "Unpickler")), (marshal, ("load", "loads")),
                       (pydoc, ("locate",)), (runpy, ("run_path", "run_module")),
                       (inspect, ("get_annotations",))):
        for n in names:
            out[id(getattr(mod, n))] = f"{mod.__name__}.{n}"
    out[id(_REAL_EVALUATE)] = "typing.ForwardRef._evaluate (real)"
    # not evaluators, but as bad for the views (issue 21): the stdlib's attribute-by-string primitives
    # with no '_' rule (attrgetter("__globals__")). (sys._getframe is not here: libraries use frames
    # without handing them out; the one that does, logging.currentframe, is refused - test below.)
    import operator
    import _operator
    for mod in (operator, _operator):
        for n in ("attrgetter", "methodcaller"):
            out[id(getattr(mod, n))] = f"operator.{n}"
    return out


#: attribute names that are evaluators whatever the receiver (the walk cannot resolve receivers)
EVALUATOR_ATTRS = {"_evaluate": "ForwardRef._evaluate", "import_module": "importlib.import_module",
                   "find_class": "Unpickler.find_class", "get_annotations": "inspect.get_annotations",
                   "run_path": "runpy.run_path", "__import__": "__import__"}

#: (path fragment, evaluator) -> why that use is safe. A fragment is " > "-joined functions
#: (module.qualname) in the path from the entry point to the evaluator. Keep it short; every reason
#: must be checkable by reading that function.
REVIEWED = {
    ("collections.namedtuple", "eval"): "evaluates 'lambda _cls, a, b: ...' built from names it checked are "
                                        "identifiers, with __builtins__ = {}",
    ("typing.ForwardRef.__init__", "compile"): "compiles (parses) the text; evaluation is ForwardRef._evaluate, "
                                               "replaced in the jail by jail.cad.evaluators",
    ("ast.parse", "compile"): "PyCF_ONLY_AST: parses, runs nothing (ast.literal_eval, numpy.matrix('1 2'))",
    ("inspect._signature_fromstr", "eval"): "evaluates dotted names only (RewriteSymbolics) and keeps "
                                            "str/int/float/bytes/bool/None values (literal_eval)",
    ("inspect._signature_from_function", "inspect.get_annotations"): "eval_str as signature() was called "
                                                                     "(False: no view serves inspect.signature)",
    ("fontTools.ttLib.ttFont.getTableModule", "__import__"): "'fontTools.ttLib.tables.' + tagToIdentifier(tag)",
    ("fontTools.ttLib.ttFont.getCustomTableClass", "importlib.import_module"): "names registered by "
                                            "registerCustomTableClass, which no view serves",
    ("PIL.Image._import_plugin_for_extension", "__import__"): "'PIL.' + a plugin from PIL's own table",
    ("PIL.Image.init", "__import__"): "'PIL.' + a plugin from PIL's own list",
    ("PIL.Image.preinit", "__import__"): "fixed plugin names",
    ("build123d.pack_utils._pack2d > dataclasses.dataclass", "exec"): "decorates its own class (fixed fields)",
    ("sysconfig._init_posix", "__import__"): "the platform's _sysconfigdata module name",
}


def _resolve_builtin(name: str, g: dict):
    b = g.get("__builtins__", builtins)
    b = vars(b) if isinstance(b, types.ModuleType) else b
    return b.get(name) if isinstance(b, dict) else None


def _codes(fn):
    c = getattr(fn, "__code__", None)
    stack = [c] if isinstance(c, types.CodeType) else []
    while stack:
        c = stack.pop()
        yield c
        stack += [k for k in c.co_consts if isinstance(k, types.CodeType)]


def _targets(obj):
    """What calling ``obj`` runs first: functions, classes' methods, wrapped implementations."""
    if isinstance(obj, types.FunctionType):
        yield obj
    elif isinstance(obj, types.MethodType):
        yield obj.__func__
    elif isinstance(obj, functools.partial):
        yield obj.func
    elif isinstance(obj, type):
        for v in list(vars(obj).values()):
            if isinstance(v, (staticmethod, classmethod)):
                v = v.__func__
            if isinstance(v, property):
                yield from (f for f in (v.fget, v.fset, v.fdel) if f is not None)
            elif isinstance(v, (types.FunctionType, functools.partial)):
                yield v
    impl = getattr(type(obj), "_implementation", None) is not None and getattr(obj, "_implementation", None)
    if isinstance(impl, types.FunctionType):  # numpy's array-function dispatchers
        yield impl


def _guarded() -> bool:
    return evaluators is not None and evaluators.installed()


def _label(fn) -> str:
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', '?')}"


def _reviewed(path: list[str], what: str) -> bool:
    for frag, ev in REVIEWED:
        parts = frag.split(" > ")
        if ev == what and any(path[i:i + len(parts)] == parts for i in range(len(path))):
            return True
    return False


_LOADS = ("LOAD_GLOBAL", "LOAD_NAME", "LOAD_FAST", "LOAD_DEREF", "LOAD_CLOSURE")
_STORES = ("STORE_FAST", "STORE_NAME", "STORE_DEREF", "STORE_GLOBAL")


def _names(code: types.CodeType, g: dict):
    """(globals read, {(module, attribute)} read, attribute names read) by one code object, from its
    bytecode: ``m.x`` is paired only when the load of ``m`` directly precedes ``.x``; modules bound by
    an ``import`` inside the function are followed under their local name."""
    globs, pairs, attrs = set(), set(), set()
    local_mods: dict[str, types.ModuleType] = {}
    prev_mod = None      # the module the previous instruction loaded
    importing = None     # the module of an IMPORT_NAME until its statement ends
    for ins in dis.get_instructions(code):
        op, arg = ins.opname, ins.argval
        mod = None
        if op in ("LOAD_GLOBAL", "LOAD_NAME"):
            globs.add(arg)
            t = g.get(arg)
            mod = t if isinstance(t, types.ModuleType) else local_mods.get(arg)
        elif op in _LOADS:
            mod = local_mods.get(arg)
        elif op in ("LOAD_ATTR", "LOAD_METHOD", "IMPORT_FROM"):
            attrs.add(arg)
            base = importing if op == "IMPORT_FROM" else prev_mod
            if base is not None:
                pairs.add((base, arg))
                t = vars(base).get(arg)
                mod = t if isinstance(t, types.ModuleType) else None
        elif op == "IMPORT_NAME":
            importing = sys.modules.get(arg) if isinstance(sys.modules.get(arg), types.ModuleType) else None
            mod = importing
        elif op in _STORES and prev_mod is not None:
            local_mods[arg] = prev_mod
        elif op == "POP_TOP":
            importing = None
        prev_mod = mod
    return globs, pairs, attrs


class Walk:
    def __init__(self):
        self.evaluators = _evaluators()
        self.seen: dict[int, int] = {}
        self.hits: dict[tuple[str, str], str] = {}

    def flag(self, entry: str, what: str, path: list[str]) -> None:
        if not _reviewed(path, what):
            self.hits.setdefault((entry, what), " > ".join(path))

    def obj(self, o, entry: str, path: list[str], depth: int) -> None:
        if id(o) in self.evaluators:
            self.flag(entry, self.evaluators[id(o)], path)
            return
        for f in _targets(o):
            self.function(f, entry, path, depth)

    def follow(self, t, entry: str, path: list[str], depth: int) -> None:
        if id(t) in self.evaluators:
            self.flag(entry, self.evaluators[id(t)], path)
        elif depth > 0 and not isinstance(t, types.ModuleType) and not (
                isinstance(t, type) and t.__module__ == "builtins"):
            self.obj(t, entry, path, depth - 1)

    def function(self, fn, entry: str, path: list[str], depth: int) -> None:
        if isinstance(fn, functools.partial):
            return self.obj(fn.func, entry, path, depth)
        if not isinstance(fn, types.FunctionType):
            return self.obj(fn, entry, path, depth)
        if fn.__code__.co_filename.startswith(JAIL_DIR):
            return  # the Python layers' own stand-ins: they check before they call the real one
        if self.seen.get(id(fn), -1) >= depth:
            return
        self.seen[id(fn)] = depth
        g = fn.__globals__
        here = path + [_label(fn)]
        for c in _codes(fn):
            globs, pairs, attrs = _names(c, g)
            for n in globs:
                t = g[n] if n in g else _resolve_builtin(n, g)
                if t is not None and not isinstance(t, types.ModuleType):
                    self.follow(t, entry, here, depth)
            for m, n in pairs:  # m.n: an attribute of a module this code uses
                t = vars(m).get(n)
                if t is not None and not isinstance(t, types.ModuleType):
                    self.follow(t, entry, here, depth)
            for n in attrs:  # obj.n on anything: evaluators known by name
                attr = EVALUATOR_ATTRS.get(n)
                if attr and not (n == "_evaluate" and _guarded()):
                    self.flag(entry, attr, here)
        for cell in fn.__closure__ or ():
            try:
                v = cell.cell_contents
            except ValueError:
                continue
            self.follow(v, entry, here, depth)


def user_import():
    """The ``__import__`` the jail gives user code (default profile, Python layers on)."""
    import build123d  # noqa: F401 - loaded before the namespace, as in the zygote
    ns = runner.new_namespace(ALLOWED, BLOCKED, True)
    return ns["__builtins__"]["__import__"]


def module_views(imp) -> dict[str, types.ModuleType]:
    """Every module user code can import (allowed roots, their non-private sub-modules), as views."""
    out: dict[str, types.ModuleType] = {}
    todo = list(ALLOWED)
    while todo:
        name = todo.pop()
        if name in out or any(p.startswith("_") or p == "conftest" for p in name.split(".")[1:]):
            continue  # (importing a conftest inside pytest registers hooks; the jail refuses it)
        try:
            v = imp(name, None, None, ("*",), 0)
        except ImportError:
            continue  # refused by the Python layers (or not importable): not an entry point
        except (Exception, pytest.fail.Exception, pytest.skip.Exception):  # noqa: BLE001
            continue  # a sub-module that fails to import is not reachable either
        out[name] = v
        real = sys.modules.get(name)
        for info in pkgutil.iter_modules(getattr(real, "__path__", None) or []):
            todo.append(f"{name}.{info.name}")
    return out


def entry_points(views: dict) -> dict[str, object]:
    out = {}
    for name, v in views.items():
        real = sys.modules[name]
        for k in sorted(set(dir(real)) | set(vars(v))):
            if k.startswith("_"):
                continue
            try:
                val = getattr(v, k)
            except AttributeError:
                continue  # the view refuses it
            except Exception:  # noqa: BLE001 - lazy attributes that fail to load
                continue
            if not isinstance(val, types.ModuleType):
                out.setdefault(f"{name}.{k}", val)
    return out


def unreviewed(hits: dict) -> dict:
    return {k: p for k, p in hits.items()
            if not any(k[0].startswith(pre) and k[1] == what for pre, what in REVIEWED)}


@pytest.fixture(scope="module")
def entries():
    return entry_points(module_views(user_import()))


def test_no_view_reaches_an_evaluator(entries):
    w = Walk()
    for name, o in entries.items():
        w.obj(o, name, [], DEPTH)
    bad = unreviewed(w.hits)
    lines = [f"{e} reaches {what}: {path}" for (e, what), path in sorted(bad.items())]
    assert not bad, f"{len(bad)} entry points reach a string evaluator:\n" + "\n".join(lines[:60])


def test_the_walk_finds_a_new_entry_point():
    """The detector itself: views that (wrongly) serve evaluators are flagged - a re-exported
    import_module, pickle.loads, a function that calls eval, typing's real evaluator."""
    import pickle
    fake = types.ModuleType("fakeview")

    def evaluates(s):
        return eval(s)  # noqa: S307 - the thing the walk must find

    import operator

    fake.import_module = importlib.import_module
    fake.loads = pickle.loads
    fake.evaluates = evaluates
    fake.by_name = operator.attrgetter
    w = Walk()
    for k in ("import_module", "loads", "evaluates", "by_name"):
        w.obj(getattr(fake, k), f"fakeview.{k}", [], DEPTH)
    got = {what for _e, what in w.hits}
    assert {"importlib.import_module", "_pickle.loads", "eval", "operator.attrgetter"} <= got, w.hits
    if evaluators is None:
        return
    evaluators.uninstall()
    try:
        w = Walk()
        w.obj(typing.get_type_hints, "typing.get_type_hints", [], DEPTH)
        assert ("typing.get_type_hints", "ForwardRef._evaluate") in w.hits, w.hits
    finally:
        user_import()  # installs the guard again, as the jail has it
    assert _guarded()


def test_the_entry_points_cover_what_matters(entries):
    """The walk sees the views' evaluator-adjacent names (else it would pass by seeing nothing)."""
    for name in ("typing.get_type_hints", "typing.ForwardRef", "functools.singledispatch", "numpy.load",
                 "collections.namedtuple", "build123d.pack_utils.dataclass",
                 # issue 21: the stdlib modules of the compatible default profile
                 "operator.attrgetter", "string.Formatter", "logging.basicConfig", "logging.Logger",
                 "enum.Enum", "dataclasses.make_dataclass", "json.loads", "timeit.Timer", "warnings.warn_explicit",
                 "typing_extensions.get_type_hints", "contextlib.contextmanager", "decimal.Decimal", "pprint.pformat",
                 "re.compile", "random.Random", "datetime.datetime", "statistics.mean", "textwrap.dedent"):
        assert name in entries, name
    assert "numpy.info" not in entries and not any(k.startswith("numpy.f2py") for k in entries)
    refused = ("logging.FileHandler", "logging.currentframe", "enum.global_enum", "contextlib.chdir", "timeit.main",
               "typing_extensions.get_annotations", "typing_extensions.evaluate_forward_ref")
    assert not [k for k in refused if k in entries]
    assert not any(k.startswith(("logging.config.", "logging.handlers.", "json.tool.")) for k in entries)
    # the stand-ins, not the real objects (which take run-time strings to attributes or code)
    import operator
    import string
    import timeit
    for name, real in (("operator.attrgetter", operator.attrgetter), ("operator.methodcaller", operator.methodcaller),
                       ("string.Formatter", string.Formatter), ("timeit.Timer", timeit.Timer),
                       ("timeit.timeit", timeit.timeit)):
        assert entries[name] is not real and entries[name].__module__ in ("jail.cad.stdlib_views", "timeit", "string"), name


# ------------------------------------------------------------------ behaviour, in a real jail
#: What got the real ``os`` (or ran code with the real builtins) on main 4d346b6 under the default
#: profile. Each prints LEAK and a real os function's result if it works.
PAYLOADS = {
    "annotation_literal": '''
import typing
class C:
    x: "__import__('os')"
os_ = typing.get_type_hints(C)["x"]
print("LEAK", os_.getpid())
''',
    "annotation_built_at_run_time": '''
import typing
C = type("C", (), {"__annotations__": {"x": "__imp" + "ort__('os')"}})
os_ = typing.get_type_hints(C)["x"]
print("LEAK", os_.getpid())
''',
    "forward_ref_empty_globals": '''
import typing
r = typing.get_args(typing.List["__imp" + "ort__('os')"])[0]
print("LEAK", r._evaluate({}, {}, frozenset()).getpid())
''',
    "module_steered_to_os": '''
import typing
C = type("C", (), {"__module__": "os", "__annotations__": {"x": "getpid"}})
print("LEAK", typing.get_type_hints(C)["x"]())
''',
    "forward_ref_module": '''
import typing
print("LEAK", typing.ForwardRef("getpid", module="os")._evaluate(None, None, frozenset())())
''',
    "singledispatch_register": '''
import functools
F = type("F", (), {"__annotations__": {"x": "[print('LEAK', __imp" + "ort__('os').getpid()), int][1]"}})
functools.singledispatch(lambda a: a).register(F())
''',
    # no leak found for this one in the time box (the generated __init__ must still compile);
    # the walk shows dataclass reaches exec; this checks the stand-in's refusal
    "dataclass_field_name": '''
from build123d.pack_utils import dataclass
C = type("C", (), {"__annotations__": {"a=print('LEAK', __imp" + "ort__('os').getpid()),b": int}})
dataclass(C)
''',
    "numpy_load_pickle": '''
import numpy as np
class F:  # a file-like object holding an .npy of dtype object whose pickle calls posix.getpid()
    def __init__(s):
        s.d = (b"\\x93NUMPY\\x01\\x00v\\x00{'descr': '|O', 'fortran_order': False, 'shape': (1,), }" + b" " * 61
               + b"\\ncposix\\ngetpid\\n(tR.")
        s.p = 0
    def read(s, n=-1):
        n = len(s.d) - s.p if n is None or n < 0 else n
        o = s.d[s.p:s.p + n]
        s.p += len(o)
        return o
    def readline(s, n=-1):
        i = s.d.find(b"\\n", s.p)
        i = len(s.d) if i < 0 else i + 1
        o = s.d[s.p:i]
        s.p = i
        return o
    def seek(s, p, w=0):
        s.p = p if w == 0 else s.p + p if w == 1 else len(s.d) + p
        return s.p
    def tell(s):
        return s.p
print("LEAK", np.load(F(), allow_pickle=True))
''',
    "numpy_info_imports_by_name": '''
import numpy as np
np.info("getpid", toplevel="os")
print("LEAK", 1)
''',
}


@pytest.fixture(scope="module")
def launcher(tmp_path_factory):
    with zygotes.on_shared_zygote(str(REPO / "profiles" / "default.toml"), output_dir=tmp_path_factory.mktemp("out")) as L:
        yield L


@pytest.fixture(scope="module")
def ts(launcher):
    from launcher.tools.toolset import ToolSet
    t = ToolSet(launcher)
    yield t
    t.close()


@pytest.mark.parametrize("name", list(PAYLOADS))
def test_string_evaluation_payload_is_refused_clearly(ts, name):
    r = ts.call("execute", {"code": PAYLOADS[name]})
    assert "LEAK" not in r.get("stdout", ""), (name, r.get("stdout"))
    assert r["ok"] is False, r
    e = r["error"]
    shown = f"{e['type']}: {e['message']}"
    expected = {"annotation_literal": "string annotation is not a type expression (a call)",
                "annotation_built_at_run_time": "is not evaluated: a call",
                "forward_ref_empty_globals": "is not evaluated: a call",
                "module_steered_to_os": "name 'getpid' is not defined",
                "forward_ref_module": "name 'getpid' is not defined",
                "singledispatch_register": "is not evaluated: a call",
                "dataclass_field_name": "is not an identifier",
                "numpy_load_pickle": "allow_pickle=True is not available",
                "numpy_info_imports_by_name": "attribute 'info' is not available to user code"}[name]
    assert expected in shown, shown


def test_annotations_users_write_keep_working(ts):
    r = ts.call("execute", {"code": '''
import typing, functools
from build123d import Box, Part
from build123d.pack_utils import dataclass
class P:
    a: "Box"
    b: "list[Part] | None"
    c: typing.List["Box"]
    d: typing.Literal["a b", -1]
def f(x: "Box", n: "typing.Optional[int]" = None) -> "Part": pass
h = typing.get_type_hints(P)
print(h["a"] is Box, h["c"] == typing.List[Box], typing.get_type_hints(f)["return"] is Part)
@functools.singledispatch
def g(a): return "any"
@g.register
def _(a: "Box"): return "box"
@dataclass
class D:
    x: int = 1
    y: "Box" = None
print(g(Box(1, 1, 1)), g(3), D(2), typing.get_type_hints(D)["y"] is Box)
'''})
    assert r["ok"], r
    assert r["stdout"] == "True True True\nbox any D(x=2, y=None) True\n", r["stdout"]


class LibraryClass:  # string annotations in a module's own namespace, as a library writes them
    a: "typing.Optional[int]"
    b: "list[LibraryClass]"


def test_library_code_still_evaluates_its_own_annotations():
    """No user frame on the stack (a library evaluating its own annotations, e.g. during an export):
    module dicts are read as they are, but still no call and no real builtins."""
    user_import()
    assert _guarded()
    assert typing.get_type_hints(LibraryClass) == {"a": typing.Optional[int], "b": list[LibraryClass]}
    with pytest.raises(TypeError, match="is not evaluated: a call"):
        typing.ForwardRef("print(1)")._evaluate({}, {}, frozenset())
    with pytest.raises(NameError, match="'open'"):
        typing.ForwardRef("open")._evaluate({}, {}, frozenset())  # the built-in types only

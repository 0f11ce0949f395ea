"""Hostile code against the compatible Python layers of the default profile (issue 21): checked
getattr/setattr/locals/globals, and the stdlib modules it allows (operator, string, logging, enum,
dataclasses, json, timeit, typing_extensions, contextlib). Through real jailed sessions:

* profile ``faults`` (default's Python rules, short limits): every attempt to reach a foreign module,
  the real builtins, a frame, a module's globals or a host file through a new surface is refused
  with a clear error, and the legitimate use of the same surface works;
* profile ``faults_os_only`` (Python layers off): what the refused surfaces would do (a log file on
  the host, the real ``os.chdir``) is stopped by the OS layers alone.

Each payload prints ``LEAK`` only when it got what it was after.
"""
from __future__ import annotations

import os
import uuid

import pytest

from launcher.tools.toolset import ToolSet
from tests.helpers import zygotes
from tests.helpers.faults import profile_path

D = '"_" * 2'  # a dunder built at run time: no literal dunder for the AST policy
GLOBALS = f'{D} + "globals" + {D}'

#: name -> (code, a substring of "Type: message" the refusal must hold)
REFUSED = {
    "attrgetter_dunder": (f'''
import operator
g = operator.attrgetter({GLOBALS})(import_step)
print("LEAK", g["os"].getpid())''', "attrgetter: attribute '__globals__' is not available"),
    "attrgetter_dotted": (f'''
import operator
print("LEAK", operator.attrgetter("wrapped." + {D} + "class" + {D})(Box(1, 1, 1)))''',
                          "attribute '__class__' is not available"),
    "attrgetter_type_of_instance": (f'''
import operator
real = type(operator.attrgetter("volume"))      # the stand-in's own class, not the C type
print("LEAK", real({GLOBALS})(import_step)["os"].getpid())''', "attrgetter: attribute '__globals__'"),
    "methodcaller_dunder": (f'''
import operator
print("LEAK", operator.methodcaller({D} + "reduce_ex" + {D}, 2)(import_step))''',
                            "methodcaller: attribute '__reduce_ex__' is not available"),
    "getattr_runtime_dunder": (f'''
print("LEAK", getattr(import_step, {GLOBALS})["os"].getpid())''',
                               "getattr(): attribute '__globals__' is not available"),
    "getattr_private": ('''
print("LEAK", getattr(Box(1, 1, 1), "_" + "dim"))''', "getattr(): attribute '_dim' is not available"),
    "getattr_default_does_not_hide": (f'''
print("LEAK", getattr(import_step, {GLOBALS}, None))''', "attribute '__globals__' is not available"),
    "getattr_lying_str_subclass": ('''
class S(str):
    def startswith(self, *a): return False
    def __getitem__(self, i): return "x"
    def __eq__(self, o): return False
    def __hash__(self): return 0
print("LEAK", getattr(import_step, S("_" * 2 + "globals" + "_" * 2))["os"].getpid())''',
                                   "attribute '__globals__' is not available"),
    "getattr_frame": ('''
g = (i for i in [1])
print("LEAK", getattr(getattr(g, "gi_" + "frame"), "f_" + "globals"))''',
                      "attribute 'gi_frame' is not available: it reaches frames"),
    "getattr_foreign_module_of_view": ('''
import typing
print("LEAK", getattr(typing, "s" + "ys").modules["os"].getpid())''',
                                       "attribute 'sys' is not available to user code"),
    "setattr_view": ('''
import json
setattr(json, "loads", print)
print("LEAK")''', "module 'json' is read-only here"),
    "setattr_dunder": (f'''
class C: pass
setattr(C, {D} + "getattribute" + {D}, lambda s, n: 1)
print("LEAK")''', "setattr(): attribute '__getattribute__' is not available"),
    "delattr_private": ('''
import typing
delattr(typing.ForwardRef, "_" + "evaluate")
print("LEAK")''', "delattr(): attribute '_evaluate' is not available"),
    "globals_from_library_callback": ('''
import contextlib
g = contextlib.contextmanager(globals)()
print("LEAK", sorted(g)[:3])''', "globals() without an argument may only be called from user code"),
    "globals_as_default_factory": ('''
import dataclasses
@dataclasses.dataclass
class C:
    g: dict = dataclasses.field(default_factory=globals)
print("LEAK", "sys" in C().g)''', "may only be called from user code"),
    "formatter_get_field": (f'''
import string
o, _ = string.Formatter().get_field("0." + {GLOBALS} + "[os]", (import_step,), {{}})
print("LEAK", o.getpid())''', "Formatter.get_field: attribute '__globals__' is not available"),
    "formatter_vformat": (f'''
import string
print("LEAK", string.Formatter().format("{{0." + {GLOBALS} + "}}", import_step)[:40])''',
                          "attribute '__globals__' is not available"),
    "formatter_super": (f'''
import string
f = string.Formatter()
print("LEAK", super(string.Formatter, f).get_field("0." + {GLOBALS}, (import_step,), {{}}))''',
                        "'super' object has no attribute 'get_field'"),
    "timeit_string": ('''
import timeit
print("LEAK", timeit.timeit("__imp" + "ort__('os').getpid()", number=1))''', "stmt must be a callable here"),
    "timeit_type_of_timer": ('''
import timeit
t = timeit.Timer(lambda: 1)
print("LEAK", type(t)("__imp" + "ort__('os').getpid()").timeit(1))''', "stmt must be a callable here"),
    "timeit_main": ('''
import timeit
timeit.main(["-s", "import os", "os.getpid()"])
print("LEAK")''', "attribute 'main' is not available to user code"),
    "logging_file_handler": ('''
import logging
logging.FileHandler("x.log")
print("LEAK")''', "attribute 'FileHandler' is not available to user code: it writes host files"),
    "logging_handlers_module": ('''
import logging.handlers
print("LEAK")''', "import of 'logging.handlers' is not allowed"),
    "logging_config_attribute": ('''
import logging
logging.config.dictConfig({"version": 1, "root": {"handlers": ["f"]}, "handlers": {"f": {"()": "os.getpid"}}})
print("LEAK")''', "attribute 'config' is not available to user code"),
    "logging_handler_subclass_by_getattr": ('''
import logging
print("LEAK", getattr(logging, "File" + "Handler"))''', "attribute 'FileHandler' is not available"),
    "logging_currentframe": ('''
import logging
f = logging.currentframe()
print("LEAK", f)''', "attribute 'currentframe' is not available to user code: it returns a frame"),
    "enum_global_enum_into_a_module": ('''
import enum
E = enum.Enum("E", {"check": 1}, module="jail.cad.policy")
enum.global_enum(E)
print("LEAK")''', "attribute 'global_enum' is not available to user code"),
    "dataclass_module_steered": ('''
import dataclasses, typing
C = dataclasses.make_dataclass("C", [("a", "getpid")], namespace={"__module__": "os"})
print("LEAK", typing.get_type_hints(C)["a"]())''', "name 'getpid' is not defined"),
    "annotation_module_refused_submodule": ('''
import typing
C = type("C", (), {"__module__": "logging.config", "__annotations__": {"a": "dictConfig"}})
print("LEAK", typing.get_type_hints(C)["a"])''', "name 'dictConfig' is not defined"),
    "annotation_module_os": ('''
import typing
C = type("C", (), {"__module__": "os", "__annotations__": {"a": "getpid"}})
print("LEAK", typing.get_type_hints(C)["a"]())''', "name 'getpid' is not defined"),
    "dataclass_lying_field_name": ('''
import dataclasses
class S(str):
    def isidentifier(self): return True
dataclasses.make_dataclass("C", [S("a=print('LEAK'),b")])''', "is not an identifier (an exact str"),
    "dataclass_decorator_lying_field_name": ('''
import dataclasses
class S(str):
    def isidentifier(self): return True
dataclasses.dataclass(type("C", (), {"__annotations__": {S("a=print('LEAK'),b"): int}}))''',
                                             "is not an identifier (an exact str"),
    "typing_extensions_get_annotations": ('''
import typing_extensions
C = type("C", (), {"__module__": "os", "__annotations__": {"x": "getpid"}})
print("LEAK", typing_extensions.get_annotations(C, eval_str=True)["x"]())''',
                                          "attribute 'get_annotations' is not available to user code"),
    "contextlib_chdir": ('''
import contextlib
with contextlib.chdir("/"):
    print("LEAK")''', "attribute 'chdir' is not available to user code"),
    "json_hook_globals": ('''
import json
print("LEAK", json.loads('{"a": 1}', object_hook=lambda d: contextlib_like(d)))
''', "name 'contextlib_like' is not defined"),
}

#: legitimate uses of the same surfaces: code -> expected stdout
WORKS = {
    "logging_to_a_scratch_file": ('''
import logging, os
logging.basicConfig(filename="run.log", level=logging.INFO)
logging.info("hello")
logging.getLogger().handlers[0].flush()
print(open("run.log").read().strip(), os.path.exists("/scratch/run.log"))''', "INFO:root:hello True\n"),
    "locals_guard": ('''
if "show_object" in locals():
    show_object(1)
x = 1
print("x" in locals(), "x" in globals(), sorted(k for k in globals() if k.startswith("__")))''',
                     "True True []\n"),
    "namespace_copies": ('''
x = 1
globals()["x"] = 2
locals()["y"] = 3
vars()["z"] = 4
print(x, "y" in dir(), "z" in dir())''', "1 False False\n"),
    "getattr_public": ('''
b = Box(1, 2, 3)
print(round(getattr(b, "volume")), hasattr(b, "volume"), hasattr(b, "__len__"), getattr(b, "nope", 7))
setattr(b, "label", "part")
print(b.label, type(b).__name__, Box.__qualname__, getattr(Box, "__name__"))''',
                       "6 True True 7\npart Box Box Box\n"),
    "modules": ('''
from __future__ import annotations
import random, datetime, time, logging, operator, string, re, json, dataclasses, enum, statistics
import fractions, decimal, heapq, bisect, warnings, textwrap, abc, numbers, cmath, array, pprint
import contextlib, timeit, typing_extensions
class Color(enum.Enum):
    RED = 1
@dataclasses.dataclass
class P:
    a: int = 1
logging.basicConfig(level=logging.INFO)
logging.getLogger("demo").info("logged")
print(list(Color.__members__), P(), operator.attrgetter("a")(P(3)), json.dumps({"a": [1]}),
      string.Formatter().format("{0.a:03d}", P(5)), statistics.mean([1, 2]), fractions.Fraction(1, 3),
      timeit.timeit(lambda: 1, number=1) >= 0, operator.methodcaller("upper")("x"), re.compile("a+").findall("aab"))''',
                "['RED'] P(a=1) 3 {\"a\": [1]} 005 1.5 1/3 True X ['aa']\n"),
}


@pytest.fixture(scope="module")
def ts(tmp_path_factory):
    with zygotes.on_shared_zygote(profile_path("faults"), output_dir=tmp_path_factory.mktemp("out")) as L:
        t = ToolSet(L)
        yield t
        t.close()


def _shown(r) -> str:
    e = r.get("error") or {}
    return f"{e.get('type')}: {e.get('message')}"


@pytest.mark.parametrize("name", list(REFUSED))
def test_compat_surface_refuses(ts, name):
    code, expected = REFUSED[name]
    r = ts.call("execute", {"code": code})
    assert "LEAK" not in r.get("stdout", "") + r.get("stderr", ""), (name, r)
    assert r["ok"] is False, (name, r)
    assert expected in _shown(r), (name, _shown(r))


@pytest.mark.parametrize("name", list(WORKS))
def test_compat_surface_works(ts, name):
    code, expected = WORKS[name]
    r = ts.call("execute", {"code": code})
    assert r["ok"], (name, r)
    assert r["stdout"] == expected, (name, r["stdout"])


# ------------------------------------------------------------------ the OS layers alone
@pytest.fixture(scope="module")
def ts_os_only(tmp_path_factory):
    with zygotes.on_shared_zygote(profile_path("faults_os_only"), output_dir=tmp_path_factory.mktemp("out")) as L:
        t = ToolSet(L)
        yield t
        t.close()


def test_os_only_log_file_never_reaches_the_host(ts_os_only, tmp_path):
    """logging.FileHandler / basicConfig(filename=) with the Python layers off: the OS layers refuse
    the host file (nothing appears in /tmp or in the launcher's temporary directory)."""
    mark = uuid.uuid4().hex
    targets = [f"/tmp/{mark}-a.log", str(tmp_path / f"{mark}-b.log")]
    for t in targets:
        r = ts_os_only.call("execute", {"code": f'''
import logging
h = logging.FileHandler({t!r})
h.emit(logging.makeLogRecord({{"msg": "written"}}))
print("LEAK")'''})
        assert "LEAK" not in r.get("stdout", ""), r
        assert r["ok"] is False and "Error" in _shown(r), r
        assert not os.path.exists(t)
    r = ts_os_only.call("execute", {"code": f'''
import logging
logging.basicConfig(filename={targets[0]!r}, force=True)
logging.getLogger().error("written")
print("LEAK")'''})
    assert "LEAK" not in r.get("stdout", "") and r["ok"] is False, r
    assert not os.path.exists(targets[0])


def test_os_only_chdir_sees_no_host(ts_os_only, tmp_path):
    """contextlib.chdir (the real os.chdir) with the Python layers off: the host's directories are
    not in the jail's view, so chdir into one fails."""
    (tmp_path / "host-dir").mkdir()
    r = ts_os_only.call("execute", {"code": f'''
import contextlib, os
with contextlib.chdir({str(tmp_path / "host-dir")!r}):
    print("LEAK", os.listdir("."))'''})
    assert "LEAK" not in r.get("stdout", "") and r["ok"] is False, r

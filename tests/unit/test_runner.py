"""Layer 8 + the runner (jail/cad/safe_builtins.py, runner.py, capture.py, summary.py), in process."""

from __future__ import annotations

import sys

import builtins
import json
import tracemalloc

import pytest

from jail.cad import runner, summary
from jail.cad.capture import BoundedOutput
from jail.cad.safe_builtins import EXTRA_REMOVED, make_builtins

ALLOWED = ["build123d", "math", "numpy", "typing", "collections", "itertools", "functools", "copy"]
BLOCKED = ["eval", "exec", "compile", "open", "__import__", "breakpoint", "input", "getattr",
           "vars", "dir", "hasattr"]


@pytest.fixture(scope="module")
def base_ns():
    return runner.new_namespace(ALLOWED, BLOCKED, True)


@pytest.fixture
def ns(base_ns):
    # new_namespace is cheap after the first build123d import, but copying is cheaper
    return dict(base_ns)


def run(code, ns, *, python_layers=True, max_output_bytes=65536):
    r = runner.run(code, ns, python_layers=python_layers, allowed_imports=ALLOWED,
                   blocked_calls=BLOCKED, max_output_bytes=max_output_bytes)
    json.dumps(r, allow_nan=False)  # always strict-JSON serialisable
    assert set(r) - {"note"} == {"ok", "stdout", "stderr", "truncated", "error", "objects", "deleted", "value",
                                 "call", "shown", "duration_ms"}
    assert isinstance(r["duration_ms"], float)
    return r


def by_name(r):
    return {o["name"]: o for o in r["objects"]}


# ------------------------------------------------------------ safe builtins

def test_make_builtins_removes_blocked_and_extras():
    b = make_builtins(ALLOWED, BLOCKED)
    for name in set(BLOCKED) - {"__import__"}:
        assert name not in b
    for name in EXTRA_REMOVED:
        assert name not in b
    for name in ("__build_class__", "print", "super", "len", "range", "isinstance", "type"):
        assert b[name] is getattr(builtins, name)
    assert b["__import__"] is not builtins.__import__
    assert builtins.open and builtins.eval  # the interpreter's own builtins untouched


def _views(view, module) -> bool:
    """``view`` is the filtered view of ``module``: same name, same public non-module values."""
    import types
    from jail.cad.evaluators import substitutes  # string evaluators: served as checked stand-ins
    own = vars(view)
    return (type(view) is not types.ModuleType and isinstance(view, types.ModuleType)
            and own["__name__"] == module.__name__
            and all(own[k] is substitutes().get(id(vars(module)[k]), vars(module)[k]) for k in own
                    if not k.startswith("_") and not isinstance(own[k], types.ModuleType)))


def test_import_wrapper():
    imp = make_builtins(ALLOWED, BLOCKED)["__import__"]
    import math
    import numpy.linalg

    # user code gets read-only views of the modules (safe_builtins.make_module_views)
    assert _views(imp("math"), math)
    assert _views(imp("numpy.linalg", fromlist=["norm"]), numpy.linalg)
    with pytest.raises(ImportError, match=r"^import of 'os' is not allowed \(allowed: build123d, math"):
        imp("os")
    with pytest.raises(ImportError, match="relative imports"):
        imp("x", {}, {}, (), 1)
    # private modules of an allowed package: only when already loaded (numpy's C code
    # imports its own private modules through this hook from user frames)
    assert _views(imp("numpy._core"), numpy) and _views(imp("numpy._core", fromlist=["x"]), sys.modules["numpy._core"])
    with pytest.raises(ImportError, match="private"):  # by value: a view serves no private name
        imp("numpy", fromlist=["_core"])
    with pytest.raises(ImportError, match="private"):
        imp("numpy._not_loaded_private")
    with pytest.raises(ImportError, match="private"):
        imp("numpy", fromlist=["_not_loaded_private"])
    with pytest.raises(ImportError, match="private"):
        imp("numpy", fromlist=["__builtins__"])


def test_namespace_contents(base_ns):
    assert base_ns["__name__"] == "__main__"
    assert "Box" in base_ns and "BuildPart" in base_ns
    assert isinstance(base_ns["__builtins__"], dict)
    assert "open" not in base_ns["__builtins__"]
    raw = runner.new_namespace(ALLOWED, BLOCKED, False)
    assert raw["__builtins__"] is vars(builtins)


def test_filtered_builtins_hold_when_policy_is_bypassed(ns):
    # Names built at run time get past the AST check; layer 8 still answers.
    r = run("b = globals", ns)
    assert not r["ok"] and r["error"]["type"] == "NameError"
    r = run("import math\nm = [x for x in ['open']][0]\nopen_ = {}.get(m)\nassert open_ is None\n", ns)
    assert r["ok"], r["error"]


def test_layers_off_gives_real_builtins():
    ns = runner.new_namespace(ALLOWED, BLOCKED, False)
    r = run("import os\nx = os.getpid()\nf = getattr", ns, python_layers=False)
    assert r["ok"], r["error"]
    assert by_name(r)["x"]["kind"] == "number"


# -------------------------------------------------------------- success

PLATE = """\
with BuildPart() as plate:
    Box(80, 60, 10)
    with Locations((20, 15), (-20, 15), (20, -15), (-20, -15)):
        Hole(5)
part = plate.part
with BuildSketch() as sk:
    Rectangle(10, 4)
with BuildLine() as ln:
    Line((0, 0), (3, 4))
"""


def test_plate_with_holes(ns):
    import math

    r = run(PLATE, ns)
    assert r["ok"], r["error"]
    assert r["error"] is None and r["stdout"] == "" and r["truncated"] is False
    objs = by_name(r)
    expected = 80 * 60 * 10 - 4 * math.pi * 5 ** 2 * 10
    for name in ("plate", "part"):
        o = objs[name]
        assert o["volume"] == pytest.approx(expected, rel=1e-6)
        assert o["bbox"]["size"] == pytest.approx([80, 60, 10])
        assert o["bbox"]["min"] == pytest.approx([-40, -30, -5])
        assert o["bbox"]["max"] == pytest.approx([40, 30, 5])
        assert o["valid"] is True
        assert o["counts"] == {"solids": 1, "faces": 10, "edges": 24}
    assert objs["plate"]["type"] == "BuildPart" and objs["plate"]["kind"] == "builder"
    assert objs["part"]["type"] == "Part" and objs["part"]["kind"] == "shape"
    assert objs["sk"]["area"] == pytest.approx(40) and "volume" not in objs["sk"]
    assert objs["ln"]["length"] == pytest.approx(5)
    from launcher.tools.text import describe  # the launcher renders summaries; the jail only makes them
    text = describe(objs["plate"])
    assert "80x60x10" in text and "valid" in text


def test_namespace_persists_between_runs(ns):
    assert run("a = 2", ns)["ok"]
    r = run("b = a * 21\nprint(b)", ns)
    assert r["ok"] and r["stdout"] == "42\n"
    assert by_name(r)["b"]["repr"] == "42"


def test_summarize_kinds_and_skips(ns):
    r = run("""
import math
import numpy as np
from math import pi
n = 3
f = 1.5
s = 'x' * 1000
lst = list(range(1000))
d = {'a': 1}
arr = np.zeros((2, 3))
npf = np.float64(2.5)
def fn(): pass
class K: pass
k = K()
_ = 5
Box = 'rebound'
len = len
p = print
e = BuildPart()
""", ns)
    assert r["ok"], r["error"]
    objs = by_name(r)
    assert "math" not in objs and "np" not in objs   # modules
    assert "Cylinder" not in objs                    # untouched star import
    assert objs["Box"]["repr"] == "'rebound'"        # rebound star name
    assert "len" not in objs and "_" not in objs     # the very builtin, throwaway
    assert objs["p"]["kind"] == "function"
    assert objs["pi"]["kind"] == "number"
    assert objs["n"] == {"name": "n", "type": "int", "kind": "number", "repr": "3", "change": "added"}
    assert len(objs["s"]["repr"]) <= 200
    assert objs["lst"]["length"] == 1000 and len(objs["lst"]["repr"]) <= 200
    assert objs["d"]["kind"] == "mapping" and objs["d"]["length"] == 1
    assert objs["arr"]["kind"] == "array" and objs["arr"]["shape"] == [2, 3]
    assert objs["npf"]["repr"] == "2.5"
    assert objs["fn"]["kind"] == "function" and objs["K"]["kind"] == "class"
    assert objs["k"]["type"] == "K"
    assert objs["e"]["kind"] == "builder" and objs["e"]["empty"] is True
    from launcher.tools.text import describe
    assert all(isinstance(describe(o), str) for o in r["objects"])


def test_summary_error_for_hostile_values(ns):
    r = run("""
class L(list):
    def __len__(self):
        raise ValueError('no len')
class R:
    def __repr__(self):
        raise RuntimeError('no repr')
bad = L()
r = R()
""", ns)
    assert r["ok"], r["error"]
    objs = by_name(r)
    assert objs["bad"]["summary_error"] == "ValueError: no len"
    assert "repr" in objs["r"] or "summary_error" in objs["r"]
    from launcher.tools.text import describe
    assert "could not summarise" in describe(objs["bad"])


def test_summarize_caps_items():
    ns = {"__builtins__": {}}
    for i in range(250):
        ns[f"v{i}"] = i
    objs = summary.summarize(ns, max_items=200)
    assert len(objs) == 201
    assert objs[-1] == {"name": "...", "type": "", "kind": "omitted", "count": 50}
    from launcher.tools.text import describe
    assert "and 50 more names not shown" in describe(objs[-1])


# --------------------------------------------------------------- errors

def test_exception_line_points_at_user_code(ns):
    code = "x = 1\n\ndef g(v):\n    return v / 0\n\ny = g(x)\n"
    r = run(code, ns)
    assert not r["ok"] and r["objects"] == []
    e = r["error"]
    assert {k: e[k] for k in ("type", "message", "line", "source_line")} == {
        "type": "ZeroDivisionError", "message": "division by zero", "line": 4, "source_line": "return v / 0"}
    assert "origin" not in e  # the innermost frame is in this call's own code
    assert e["context"] == ["  2 | ", "  3 | def g(v):", "> 4 |     return v / 0", "  5 | ", "  6 | y = g(x)"]


def test_exception_inside_build123d_reports_user_line(ns):
    r = run("a = 1\nb = Box(1, 1, 1)\nc = b.fillet(radius=100, edge_list=b.edges())\n", ns)
    assert not r["ok"]
    assert r["error"]["line"] == 3
    assert r["error"]["source_line"].startswith("c = b.fillet(")
    assert "site-packages" not in json.dumps(r["error"])


@pytest.mark.parametrize("code,etype", [
    ("raise SystemExit(3)", "SystemExit"),
    ("raise KeyboardInterrupt", "KeyboardInterrupt"),
    ("class E(BaseException): pass\nraise E('x')", "E"),
    ("import math\nmath.sqrt(-1)", "ValueError"),
    ("def r(n): return r(n + 1)\nr(0)", "RecursionError"),
])
def test_base_exceptions_are_errors_not_exits(ns, code, etype):
    r = run(code, ns)
    assert not r["ok"] and r["error"]["type"] == etype
    assert r["error"]["line"] == code.count("\n") + 1 or etype == "RecursionError"


def test_hostile_exception_message(ns):
    r = run("class E(Exception):\n    def __str__(self):\n        raise ValueError\nraise E()\n", ns)
    assert r["error"]["type"] == "E" and r["error"]["message"] == "<unprintable E>"
    r = run("raise ValueError('x' * 100000)", ns)
    assert len(r["error"]["message"]) <= 2000


def test_syntax_error_reported_with_line(ns):
    for layers in (True, False):
        r = run("a = 1\nb = (2 +\n", ns, python_layers=layers)
        assert not r["ok"]
        assert r["error"]["type"] == "SyntaxError" and r["error"]["line"] == 2
        assert r["error"]["source_line"] == "b = (2 +"
        assert "rule" not in r["error"]


def test_compile_time_syntax_error(ns):
    r = run("x = 1\nreturn x\n", ns)
    assert r["error"]["type"] == "SyntaxError" and r["error"]["line"] == 2


def test_policy_error_via_run(ns):
    r = run("a = 1\nimport os\n", ns)
    assert not r["ok"] and r["objects"] == [] and r["stdout"] == ""
    e = r["error"]
    assert e["type"] == "PolicyError" and e["rule"] == "import"
    assert (e["line"], e["col"], e["source_line"], e["text"]) == (2, 0, "import os", "import os")
    assert e["message"].startswith("line 2, col 0: import of 'os' is not allowed (allowed: ")
    r = run("x = ().__class__", ns)
    assert r["error"]["rule"] == "dunder-attribute"
    # the same code with the Python layers off is not checked
    assert run("x = ().__class__", dict(ns), python_layers=False)["ok"]


# --------------------------------------------------------------- output

def test_stdout_captured_and_restored(ns):
    import sys

    before = sys.stdout, sys.stderr
    r = run("print('out')\nprint('more', end='', file=None)\n", ns)
    assert r["stdout"] == "out\nmore" and r["stderr"] == ""
    assert (sys.stdout, sys.stderr) == before
    run("raise ValueError", ns)
    assert (sys.stdout, sys.stderr) == before


def test_output_truncated_with_notice(ns):
    r = run("for i in range(1000):\n    print('0123456789')\n", ns, max_output_bytes=105)
    assert r["ok"] and r["truncated"] is True
    # head (40 bytes) + what was cut, in place + tail (39 bytes, whole lines)
    assert r["stdout"] == ("0123456789\n" * 3 + "0123456\n[... 10927 bytes, 994 lines not shown ...]\n"
                           + "0123456789\n" * 3)


def test_output_budget_is_shared_and_utf8_safe(ns):
    r = run("print('é' * 10)\nprint('x' * 50)\n", ns, max_output_bytes=15)
    assert r["truncated"]
    assert r["stdout"] == "ééé\n[... 60 bytes, 1 line not shown ...]\nxxxxx\n"  # no half characters
    r = run("print('a' * 8)\nraise ValueError('boom')\n", ns, max_output_bytes=10)
    assert r["stdout"] == "aaaa\n[... 1 bytes not shown ...]\naaa\n" and not r["ok"]


def test_output_memory_is_bounded(ns):
    tracemalloc.start()
    try:
        r = run("line = 'x' * 1000\nfor i in range(50000):\n    print(line)\n", ns,
                max_output_bytes=65536)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert r["ok"] and r["truncated"]
    assert r["stdout"].startswith("x" * 1000 + "\n") and r["stdout"].endswith("x" * 1000 + "\n")
    assert "lines not shown ...]" in r["stdout"] and len(r["stdout"]) <= 65536
    assert peak < 8 * 1024 * 1024  # 50 MB printed, well under 8 MB ever held


def test_bounded_stream_api():
    out = BoundedOutput(4)
    s = out.stream("stdout")
    assert s.write("abcdef") == 6 and s.writable() and not s.isatty()
    with pytest.raises(TypeError):
        s.write(b"x")
    s.flush()
    assert s.getvalue() == "ab\n[... 3 bytes not shown ...]\nf"   # limit 4: head 2, tail 1
    out = BoundedOutput(8)
    s = out.stream("stdout")
    s.write("abcdef")
    assert s.getvalue() == "abcdef"


def test_stdout_and_stderr_share_one_budget():
    out = BoundedOutput(8)  # head 3 + tail 3 bytes, both streams together, in write order
    so, se = out.stream("stdout"), out.stream("stderr")
    so.write("abcd")
    se.write("efgh")
    so.write("ij")
    assert so.getvalue() == "abc\n[... 1 bytes not shown ...]\nij"
    assert se.getvalue() == "[... 3 bytes not shown ...]\nh"
    assert out.truncated


def test_warm_runs_no_user_code_and_changes_nothing(ns):
    """runner.warm runs in every idle next before its command: it must not call anything the
    user defined (repr, properties, __class__, __eq__, __hash__, __del__) nor change the state."""
    r = runner.run(
        "calls = []\n"
        "class Evil:\n"
        "    def __repr__(self): calls.append('repr'); return 'evil'\n"
        "    def __eq__(self, other): calls.append('eq'); return False\n"
        "    def __hash__(self): calls.append('hash'); return 1\n"
        "    def __del__(self): calls.append('del')\n"
        "    @property\n"
        "    def __class__(self): calls.append('class'); return int\n"
        "    def __getattr__(self, name): calls.append('getattr ' + name); raise AttributeError(name)\n"
        "e = Evil()\n"
        "d = {Evil(): 1}\n",
        ns, python_layers=False, allowed_imports=ALLOWED, blocked_calls=BLOCKED, max_output_bytes=10_000)
    assert r["ok"], r["error"]
    ns["calls"].clear()
    before = list(ns.items())
    for warm in (runner.warm, runner.warm_idle):
        warm(ns, python_layers=True, allowed_imports=ALLOWED, blocked_calls=BLOCKED, max_output_bytes=10_000)
        assert ns["calls"] == []
        after = list(ns.items())
        assert len(after) == len(before) and all(a[0] is b[0] and a[1] is b[1] for a, b in zip(after, before))


def test_idle_warm_builds_nothing_in_a_session_without_shapes(ns, monkeypatch):
    """A session whose names hold no shape or builder (a fresh one, plain Python) is not warmed."""
    from jail.cad import warmup
    ran = []
    monkeypatch.setattr(warmup, "_bounded", lambda *a: ran.append(a) or 0)
    r = runner.run("x = [1, 2]\n", ns, python_layers=True, allowed_imports=ALLOWED, blocked_calls=BLOCKED,
                   max_output_bytes=10_000)
    assert r["ok"], r["error"]
    for cad in (True, False):
        runner.warm_idle(ns, python_layers=True, allowed_imports=ALLOWED, blocked_calls=BLOCKED,
                         max_output_bytes=10_000, cad=cad)
    assert ran == []
    ns["part"] = ns["Box"](1, 1, 1)
    runner.warm_idle(ns, python_layers=True, allowed_imports=ALLOWED, blocked_calls=BLOCKED,
                     max_output_bytes=10_000)
    assert len(ran) == 1


def test_idle_warm_adds_nothing_to_an_open_builder(ns):
    """An idle next's (and spare's) warm-up makes shapes through build123d, in an empty context: a
    builder the session left open must not take them."""
    r = runner.run("bp = BuildPart()\nbp.__enter__()\nBox(1, 1, 1)\n", ns, python_layers=False,
                   allowed_imports=ALLOWED, blocked_calls=BLOCKED, max_output_bytes=10_000)
    try:
        assert r["ok"], r["error"]
        volume = ns["bp"].part.volume
        for cad in (True, False):  # the next's warm-up (a part) and the spare's (a render)
            runner.warm_idle(ns, python_layers=True, allowed_imports=ALLOWED, blocked_calls=BLOCKED,
                             max_output_bytes=10_000, cad=cad)
        assert ns["bp"].part.volume == volume
        assert len(ns["bp"].part.solids()) == 1
    finally:
        ns["bp"].__exit__(None, None, None)


def test_summary_of_big_bytes_and_ints_builds_no_big_string():
    """reprlib builds the whole repr of a bytearray before cutting it (a 200 MB bytearray became an
    ~800 MB string and hit the session's memory bound); a 100,000-digit int cannot even be repr'd."""
    big = bytearray(50_000_000)
    huge = 10 ** 100_000
    tracemalloc.start()
    try:
        b = summary.summarize_value(big, None, {})
        i = summary.summarize_value(huge, None, {})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1_000_000, peak
    assert b["kind"] == "bytes" and b["length"] == 50_000_000 and "50000000 bytes" in b["repr"]
    assert i["kind"] == "number" and "bits" in i["repr"]

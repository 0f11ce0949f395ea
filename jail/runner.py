"""Run one ``execute()`` call inside an already-jailed process, and describe the result.

This module does no confinement of its own: by the time ``run`` is called the
process has all OS layers applied (see ``jail/``). What it adds:

* layers 7-8 when ``python_layers`` is true: ``policy.check`` before compiling,
  and the namespace's ``__builtins__`` from ``safe_builtins.make_builtins``;
* bounded stdout/stderr capture: at most ``max_output_bytes`` (UTF-8) are kept
  for both streams together, the rest is counted, not stored, and reported as
  ``[output truncated: N more bytes not shown]``. Output written straight to
  file descriptors 1/2 by C code (OCP) is *not* captured here; the supervisor
  owns those descriptors;
* errors reported in terms of the user's code only: exception type, message
  (capped), and the line of the innermost ``<execute>`` frame with its source
  text. No launcher/jail frames, paths or tracebacks are returned;
* ``summarize``: a JSON-safe description of the top-level names (volume, area,
  bbox, validity, topology counts for build123d shapes and builders).

Transactional semantics belong to the caller: after an error the process that
ran the code is discarded, so ``run`` never rolls back the namespace.
Everything returned is built from plain ``str``/``int``/``float``/``bool``/
``None``/``list``/``dict`` so that ``json.dumps`` of it cannot run user code.
"""

from __future__ import annotations

import builtins as _builtins
import io
import json
import math
import reprlib
import sys
import time
import types
from typing import Any, Sequence

from . import policy
from .safe_builtins import make_builtins

__all__ = ["new_namespace", "run", "summarize", "state_text", "BoundedOutput", "FILENAME"]

FILENAME = "<execute>"
MESSAGE_CAP = 2000
REPR_CAP = 200
SOURCE_LINE_CAP = 500


# ---------------------------------------------------------------- namespace


def new_namespace(allowed_imports: Sequence[str], blocked_calls: Sequence[str],
                  python_layers: bool) -> dict:
    """Globals for user code: ``from build123d import *`` already done."""
    if python_layers:
        bt: dict = make_builtins(allowed_imports, blocked_calls)
    else:
        bt = vars(_builtins)  # the real builtins module dict
    ns: dict = {"__builtins__": bt, "__name__": "__main__", "__doc__": None}
    exec(compile("from build123d import *", "<namespace>", "exec"), ns)
    _star_exports()  # computed once here, inherited by every forked child
    return ns


_STAR_CACHE: dict | None = None


def _star_exports() -> dict:
    """name -> object for what ``from build123d import *`` binds."""
    global _STAR_CACHE
    if _STAR_CACHE is None:
        import build123d

        names = getattr(build123d, "__all__", None)
        if names is None:
            names = [n for n in vars(build123d) if not n.startswith("_")]
        _STAR_CACHE = {n: vars(build123d)[n] for n in names if n in vars(build123d)}
    return _STAR_CACHE


# ------------------------------------------------------------------ output


class BoundedOutput:
    """Shared byte budget for stdout+stderr; keeps the first ``limit`` bytes."""

    def __init__(self, limit: int):
        self.limit = max(int(limit), 0)
        self.used = 0
        self.streams: dict[str, _BoundedStream] = {}

    def stream(self, name: str) -> "_BoundedStream":
        s = _BoundedStream(self, name)
        self.streams[name] = s
        return s

    @property
    def truncated(self) -> bool:
        return any(s.dropped for s in self.streams.values())


def _utf8_len(s: str) -> int:
    if s.isascii():  # O(1) in CPython
        return len(s)
    return len(s.encode("utf-8", "surrogatepass"))


class _BoundedStream(io.TextIOBase):
    def __init__(self, owner: BoundedOutput, name: str):
        super().__init__()
        self._owner = owner
        self._name = name
        self._parts: list[str] = []
        self.dropped = 0  # bytes not kept

    # text file API used by print() and friends
    @property
    def encoding(self):  # type: ignore[override]
        return "utf-8"

    @property
    def errors(self):  # type: ignore[override]
        return "replace"

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        raise io.UnsupportedOperation("captured output has no file descriptor")

    def flush(self) -> None:
        pass

    def close(self) -> None:  # user code closing sys.stdout must not break capture
        pass

    @property
    def closed(self) -> bool:  # type: ignore[override]
        return False

    def write(self, s) -> int:
        if not isinstance(s, str):
            raise TypeError(f"write() argument must be str, not {type(s).__name__}")
        s = str.__str__(s)  # an exact str: no user methods later
        n = len(s)
        if not n:
            return 0
        o = self._owner
        room = o.limit - o.used
        if room <= 0:
            self.dropped += _utf8_len(s)
            return n
        size = _utf8_len(s)
        if size <= room:
            self._parts.append(s)
            o.used += size
            return n
        if s.isascii():
            head = s[:room]
        else:
            head = s.encode("utf-8", "surrogatepass")[:room].decode("utf-8", "ignore")
        kept = _utf8_len(head)
        self._parts.append(head)
        o.used += kept
        self.dropped += size - kept
        return n

    def writelines(self, lines) -> None:
        for line in lines:
            self.write(line)

    def getvalue(self) -> str:
        text = "".join(self._parts)
        if self.dropped:
            if text and not text.endswith("\n"):
                text += "\n"
            text += f"[output truncated: {self.dropped} more bytes not shown]\n"
        # lone surrogates cannot go into JSON as UTF-8
        return text.encode("utf-8", "replace").decode("utf-8") if not text.isascii() else text


# ------------------------------------------------------------------ errors


def _cap(s: str, cap: int) -> str:
    return s if len(s) <= cap else s[: cap - 3] + "..."


def _safe_str(obj: Any, cap: int = MESSAGE_CAP) -> str:
    """str(obj) that never raises and always returns an exact, capped str."""
    try:
        s = str(obj)
        if not isinstance(s, str):
            raise TypeError
        s = str.__str__(s)
    except BaseException:  # noqa: BLE001 - user __str__ may raise anything
        try:
            s = f"<unprintable {type(obj).__name__}>"
            s = str.__str__(s)
        except BaseException:  # noqa: BLE001
            s = "<unprintable>"
    return _cap(s, cap)


def _type_name(obj: Any) -> str:
    try:
        n = type.__dict__["__name__"].__get__(type(obj))  # not a metaclass override
        return _cap(str.__str__(n), 200)
    except BaseException:  # noqa: BLE001
        return "object"


def _source_line(code_lines: list[str], line: int | None) -> str | None:
    if line is None or not (1 <= line <= len(code_lines)):
        return None
    return _cap(code_lines[line - 1].strip(), SOURCE_LINE_CAP)


def _user_line(exc: BaseException) -> int | None:
    """Line of the innermost traceback frame that runs user code."""
    line = None
    try:
        tb = exc.__traceback__
        n = 0
        while tb is not None and n < 10000:
            if tb.tb_frame.f_code.co_filename == FILENAME:
                line = tb.tb_lineno
            tb = tb.tb_next
            n += 1
    except BaseException:  # noqa: BLE001
        pass
    return line if isinstance(line, int) else None


def _error(type_: str, message: str, line: int | None, code_lines: list[str], **extra) -> dict:
    err = {"type": type_, "message": _cap(message, MESSAGE_CAP), "line": line,
           "source_line": _source_line(code_lines, line)}
    err.update(extra)
    return err


# --------------------------------------------------------------------- warm


def warm(namespace: dict, *, python_layers: bool, allowed_imports: Sequence[str],
         blocked_calls: Sequence[str], max_output_bytes: int) -> None:
    """Pay, in a freshly forked next that waits for its command, the copy-on-write page faults
    that the call would pay anyway: CPython writes the reference count of every object it
    touches, and each first write to a page shared with the head copies it (~330 faults,
    ~0.8 ms for a trivial call). Touches what ``run`` touches: every namespace value's header
    (``summarize`` walks them all), the policy checker, the compiler, the output buffers and
    the JSON encoder.

    Runs no user code: no exec, no repr, no property or ``__class__`` lookup — only ``type()``
    of each value, which reads the object's type pointer.
    """
    for _name, value in list(namespace.items()):
        type(value)
    if python_layers:
        try:
            policy.check("x = 1\n", allowed_imports, blocked_calls)
        except policy.PolicyError:
            pass
    compile("x = 1\n", FILENAME, "exec", dont_inherit=True)
    out = BoundedOutput(max_output_bytes)
    out.stream("stdout").write("")
    json.dumps({"ok": True, "stdout": "", "objects": [{"name": "x", "kind": "number", "repr": "1"}]})


# --------------------------------------------------------------------- run


def run(code: str, namespace: dict, *, python_layers: bool, allowed_imports: Sequence[str],
        blocked_calls: Sequence[str], max_output_bytes: int) -> dict:
    """Check (optionally), compile and exec ``code`` in ``namespace``.

    ``python_layers`` switches the AST policy (layer 7) only; the builtins
    (layer 8) are whatever ``new_namespace`` put in the namespace.

    Returns ``{"ok", "stdout", "stderr", "truncated", "error", "objects",
    "duration_ms"}``; ``error`` is None or ``{"type", "message", "line",
    "source_line"}`` plus ``"col"`` for syntax/policy errors and ``"rule"`` for
    policy errors. ``objects`` is ``summarize(namespace)`` on success, ``[]``
    on error (the caller discards this process and keeps the old state).
    """
    t0 = time.perf_counter()
    code_lines = code.splitlines() if isinstance(code, str) else []
    out = BoundedOutput(max_output_bytes)
    stdout, stderr = out.stream("stdout"), out.stream("stderr")
    error: dict | None = None
    objects: list = []

    def result() -> dict:
        return {
            "ok": error is None,
            "stdout": stdout.getvalue(),
            "stderr": stderr.getvalue(),
            "truncated": out.truncated,
            "error": error,
            "objects": objects,
            "duration_ms": round((time.perf_counter() - t0) * 1000.0, 3),
        }

    if not isinstance(code, str):
        error = _error("TypeError", "code must be a string", None, code_lines)
        return result()

    if python_layers:
        try:
            policy.check(code, allowed_imports, blocked_calls)
        except policy.PolicyError as e:
            if e.rule == "syntax":
                error = _error("SyntaxError", e.reason.removeprefix("syntax error: "), e.line,
                               code_lines, col=e.col)
            else:
                error = _error("PolicyError", str(e), e.line, code_lines, col=e.col, rule=e.rule,
                               text=e.text)
            return result()

    try:
        code_obj = compile(code, FILENAME, "exec", dont_inherit=True)
    except SyntaxError as e:
        line = e.lineno if isinstance(e.lineno, int) else None
        col = max((e.offset or 1) - 1, 0) if isinstance(e.offset, int) else None
        error = _error(_type_name(e), _safe_str(e.msg or "invalid syntax"), line, code_lines, col=col)
        return result()
    except (ValueError, RecursionError, MemoryError) as e:
        error = _error(_type_name(e), _safe_str(e) or "code could not be compiled", None, code_lines)
        return result()

    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = stdout, stderr
    try:
        try:
            exec(code_obj, namespace)
        except BaseException as e:  # noqa: BLE001 - SystemExit/KeyboardInterrupt included
            line = _user_line(e)
            error = _error(_type_name(e), _safe_str(e), line, code_lines)
            e = None  # noqa: F841 - drop the traceback's frames
        if error is None:
            try:
                objects = summarize(namespace)
            except BaseException as e:  # noqa: BLE001
                objects = [{"name": "(summary)", "type": "error", "kind": "error",
                            "summary_error": _safe_str(e, REPR_CAP)}]
    finally:
        sys.stdout, sys.stderr = saved
    return result()


# --------------------------------------------------------------- summarize

_repr = reprlib.Repr()
_repr.maxstring = REPR_CAP
_repr.maxother = REPR_CAP
_repr.maxlist = _repr.maxtuple = _repr.maxdict = _repr.maxset = _repr.maxfrozenset = 8
_repr.maxlevel = 3


def _num(x: Any) -> float | None:
    try:
        f = float(x)
    except BaseException:  # noqa: BLE001
        return None
    return f if math.isfinite(f) else None


def _vec(v: Any) -> list:
    return [_num(v.X), _num(v.Y), _num(v.Z)]


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


def _shape_summary(shape: Any) -> dict:
    key = _shape_key(shape)
    if key is not None and key in _SHAPE_CACHE:
        _shape_cache_next[key] = _SHAPE_CACHE[key]
        return dict(_SHAPE_CACHE[key][1])
    d = _measure_shape(shape)
    if key is not None:
        _shape_cache_next[key] = (shape, d)
    return dict(d)


def _measure_shape(shape: Any) -> dict:
    d: dict = {}
    solids = len(shape.solids())
    faces = len(shape.faces())
    edges = shape.edges()
    d["counts"] = {"solids": solids, "faces": faces, "edges": len(edges)}
    if solids:
        d["volume"] = _num(shape.volume)
    elif faces:
        d["area"] = _num(shape.area)
    elif edges:
        d["length"] = _num(sum(e.length for e in edges))
    bb = shape.bounding_box()
    d["bbox"] = {"min": _vec(bb.min), "max": _vec(bb.max), "size": _vec(bb.size)}
    valid = shape.is_valid
    if callable(valid):  # a method in older build123d
        valid = valid()
    d["valid"] = bool(valid)
    return d


def _summarize_value(value: Any, shape_cls, builders: dict) -> dict:
    tp = type(value)
    if value is None or tp in (bool, int, float, complex, str, bytes):
        kind = {type(None): "none", bool: "bool", int: "number", float: "number",
                complex: "number", str: "str", bytes: "bytes"}[tp]
        return {"kind": kind, "repr": _cap(_repr.repr(value), REPR_CAP)}
    if shape_cls is not None and isinstance(value, shape_cls):
        return {"kind": "shape", **_shape_summary(value)}
    for bcls, attr in builders.items():
        if isinstance(value, bcls):
            obj = getattr(value, attr)
            d: dict = {"kind": "builder", "of": attr}
            if obj is None:
                d["empty"] = True
            else:
                d.update(_shape_summary(obj))
            return d
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, types.MethodType,
                          types.LambdaType)):
        return {"kind": "function"}
    if isinstance(value, type):
        return {"kind": "class"}
    if isinstance(value, (list, tuple, dict, set, frozenset)):
        kind = "mapping" if isinstance(value, dict) else "set" if isinstance(value, (set, frozenset)) \
            else "sequence"
        return {"kind": kind, "length": len(value), "repr": _cap(_safe_str(_repr.repr(value)), REPR_CAP)}
    np = sys.modules.get("numpy")
    if np is not None:
        if isinstance(value, np.ndarray):
            return {"kind": "array", "shape": [int(n) for n in value.shape],
                    "dtype": _safe_str(value.dtype, 50),
                    "repr": _cap(_safe_str(_repr.repr(value)), REPR_CAP)}
        if isinstance(value, np.generic):
            return {"kind": "number", "repr": _cap(_safe_str(repr(value.item())), REPR_CAP)}
    return {"kind": "object", "repr": _cap(_safe_str(_repr.repr(value)), REPR_CAP)}


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def summarize(namespace: dict, *, max_items: int = 200) -> list[dict]:
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
    were left out.
    """
    star = _star_exports()
    real_builtins = vars(_builtins)
    try:
        shape_cls, builders = _b3d_types()
    except Exception:  # noqa: BLE001
        shape_cls, builders = None, {}
    items: list[dict] = []
    omitted = 0
    cache: dict[int, dict] = {}
    for name in list(namespace.keys()):
        if not isinstance(name, str) or _is_dunder(name) or name == "_":
            continue
        try:
            value = namespace[name]
        except BaseException:  # noqa: BLE001
            continue
        if isinstance(value, types.ModuleType):
            continue
        if name in star and star[name] is value:
            continue
        if name in real_builtins and real_builtins[name] is value:
            continue
        if len(items) >= max_items:
            omitted += 1
            continue
        item: dict = {"name": _cap(str.__str__(name), REPR_CAP), "type": _type_name(value)}
        try:
            key = id(value)
            if key not in cache:
                cache[key] = _summarize_value(value, shape_cls, builders)
            item.update(cache[key])
        except BaseException as e:  # noqa: BLE001 - user properties may raise anything
            item["summary_error"] = f"{_type_name(e)}: {_safe_str(e, REPR_CAP)}"
        items.append(item)
    if omitted:
        items.append({"name": "...", "type": "", "kind": "omitted", "count": omitted})
    global _SHAPE_CACHE, _shape_cache_next
    _SHAPE_CACHE, _shape_cache_next = _shape_cache_next, {}
    return items


# -------------------------------------------------------------- state_text


def _g(x: Any) -> str:
    return "?" if x is None else f"{x:.6g}"


def _plural(n: Any, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def counts_text(c: dict) -> str:
    """``2 solids, 14 faces, 24 edges``: a model that fell into pieces shows at once."""
    return ", ".join(_plural(c.get(k, 0), k[:-1]) for k in ("solids", "faces", "edges"))


def _describe(o: dict) -> str:
    if "summary_error" in o:
        return f"(could not summarise: {o['summary_error']})"
    kind = o.get("kind")
    if kind in ("shape", "builder"):
        if o.get("empty"):
            return f"empty builder (no {o.get('of', 'object')} yet)"
        parts = []
        for key, label in (("volume", "volume"), ("area", "area"), ("length", "length")):
            if key in o:
                parts.append(f"{label} {_g(o[key])}")
        bb = o.get("bbox")
        if bb:
            size = "x".join(_g(v) for v in bb["size"])
            mn = ",".join(_g(v) for v in bb["min"])
            mx = ",".join(_g(v) for v in bb["max"])
            parts.append(f"bbox {size} [{mn} .. {mx}]")
        parts.append(counts_text(o.get("counts") or {}))
        parts.append("valid" if o.get("valid") else "INVALID")
        return "  ".join(parts)
    if kind in ("sequence", "mapping", "set"):
        return f"len {o.get('length')}  {o.get('repr', '')}"
    if kind == "array":
        return f"shape {tuple(o.get('shape', []))} {o.get('dtype', '')}"
    if kind in ("function", "class"):
        return kind
    return o.get("repr", "")


def state_text(objects: list[dict]) -> str:
    """A compact table of ``summarize`` output, for the MCP tool's text reply."""
    if not objects:
        return "No objects defined."
    rows = []
    extra = ""
    for o in objects:
        if o.get("kind") == "omitted":
            extra = f"... and {o.get('count')} more not shown"
            continue
        rows.append((str(o.get("name", "?")), str(o.get("type", "")), _describe(o)))
    wn = min(max((len(r[0]) for r in rows), default=4), 30)
    wt = min(max((len(r[1]) for r in rows), default=4), 20)
    lines = [f"{'name':<{wn}}  {'type':<{wt}}  summary"]
    lines += [f"{n:<{wn}}  {t:<{wt}}  {d}" for n, t, d in rows]
    if extra:
        lines.append(extra)
    return "\n".join(lines)

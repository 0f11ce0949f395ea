"""Layer 7: a static (AST) check of user code before it runs. A usability filter, not a boundary.

It gives an assistant that writes ``import os`` or ``x.__class__.__mro__`` an early, precise error
(rule, line, column, the offending text) instead of a confusing failure deep inside the jail.
Python cannot be sandboxed from inside Python: the OS layers must hold alone, and the escape
matrix runs with this layer off.

Blocks (one ``PolicyError.rule`` each, see ``RULES``): imports outside the allowlist, names in
``blocked_calls``, dunder names and attributes, attributes that reach frames, code or the MRO,
private attributes of imported modules, foreign modules reached through an allowed one, and
``str.format`` fields that traverse any of those. Does not block: strings assembled at run time,
aliasing (``t = typing; t.sys``: layer 8's module views refuse it at run time), numpy/build123d
file I/O, C-level crashes, resource exhaustion. ``check`` raises only ``PolicyError``; every
violation found is in ``.violations``, sorted by position, the first one raised.
"""

from __future__ import annotations

import ast
import builtins as _builtins_module
import string
import sys
import types
from typing import Sequence

from jail.cad import fsviews, type_expr
from jail.cad.introspect import DATA_DUNDERS, attribute_refusal

try:  # the parser str.format itself uses for "{0.attr[key]}"
    from _string import formatter_field_name_split as _field_name_split
except ImportError:  # pragma: no cover - CPython always has it
    _field_name_split = None

#: Every ``PolicyError.rule`` this module can raise, and what it rejects.
RULES = (
    "syntax",          # code that does not parse (line/col of the SyntaxError)
    "too-large",       # code longer than max_bytes (when the caller passes it)
    "too-complex",     # code nested so deeply that parsing it exhausts the stack
    "import",          # import X / from X import ... whose root package is not allowlisted; every
                       # relative import (from . import x)
    "blocked-call",    # any reference to a name in blocked_calls (a call eval(...), but also
                       # f = getattr or getattr = 1), and <module>.<blocked> / builtins.<blocked>
                       # (when getattr is not blocked: only if it is that builtin, so re.compile is fine)
    "dunder-name",     # any Name that is a dunder (__builtins__, __loader__, __spec__, __import__),
                       # except reading __name__ (the if __name__ == "__main__": guard) and, when
                       # os or pathlib is allowed, __file__ (a name in the scratch directory);
                       # binding a dunder with import ... as __x__
    "dunder-attribute",  # any attribute x.__y__ (load, store, del), from m import __y__, case
                       # C(__y__=...) patterns; except calling SUPER_DUNDER_METHODS on super()
                       # (super().__init__(...), how custom build123d objects are written) and,
                       # when getattr is not blocked, reading DATA_DUNDERS (type(x).__name__,
                       # Enum.__members__); also a string literal naming such an attribute for
                       # getattr/setattr/delattr/attrgetter/methodcaller (getattr(x, "__class__"))
    "introspection-attribute",  # attributes with no dunder that reach frames, code objects or the
                       # MRO (INTROSPECTION_ATTRIBUTES): a generator's gi_frame.f_globals or a
                       # traceback's tb_frame.f_back walks to other frames' globals and f_builtins
    "private-attribute",  # a string literal naming an attribute that starts with "_" for
                       # getattr/setattr/delattr/attrgetter/methodcaller (getattr(x, "_cache"))
    "private-module-attribute",  # m._x where m is bound by an import (collections._sys,
                       # numpy._core), import numpy._core, from numpy import _core; obj._x on
                       # other names is fine
    "module-attribute",  # m.x where m is bound by an import and m.x is already (in sys.modules,
                       # read from the module's __dict__ only) a module outside the allowlist:
                       # build123d.os, typing.sys, from typing import sys
    "annotation",      # a string written in an annotation (x: "...", def f(a: "...") -> "...",
                       # List["..."] inside one) that parses but is not a type expression
                       # (jail/cad/type_expr.py): calls, dunder or private attributes, lambdas...
                       # Python evaluates such strings with eval (typing.get_type_hints)
    "format-string",   # a string literal whose str.format fields traverse a dunder or
                       # introspection attribute or index ("{0.__class__}", "{0[__globals__]}"):
                       # every literal, not only the receiver of .format, so s = "{0.__class__}";
                       # s.format(x) is caught too; strings built at run time are not
)

__all__ = [
    "PolicyError",
    "RULES",
    "check",
    "INTROSPECTION_ATTRIBUTES",
    "SUPER_DUNDER_METHODS",
    "DATA_DUNDERS",
]

#: Attributes that reach frames / code objects / globals without a dunder.
INTROSPECTION_ATTRIBUTES = frozenset(
    {
        # generators, coroutines, async generators -> their frame / code
        "gi_frame", "gi_code", "gi_yieldfrom",
        "cr_frame", "cr_code", "cr_await",
        "ag_frame", "ag_code", "ag_await",
        # frames -> globals, builtins, callers, code, tracer
        "f_globals", "f_locals", "f_builtins", "f_back", "f_code", "f_trace",
        # tracebacks -> frames
        "tb_frame", "tb_next", "tb_lasti",
        # code objects -> constants (nested code), names
        "co_code", "co_consts", "co_names",
        # Python 2 spelling of __globals__, still seen in payloads
        "func_globals",
        # type.mro() -> object -> object.__subclasses__ chains
        "mro",
        # sys._getframe and friends
        "_getframe",
    }
)

#: Dunder methods that may be *called* on ``super()`` (``super().__init__(...)``).
#: A call on super() returns what the parent method returns; reaching anything
#: interesting from there needs another dunder, which stays rejected.
SUPER_DUNDER_METHODS = frozenset(
    {"__init__", "__new__", "__init_subclass__", "__post_init__",
     "__enter__", "__exit__", "__repr__", "__str__"}
)

_ALLOWED_DUNDER_NAMES_LOAD = frozenset({"__name__"})
#: Calls whose string argument (position 1, or every positional one) names an attribute.
_NAME_ARG_CALLS = {"getattr": (1,), "setattr": (1,), "delattr": (1,)}
_NAME_ARG_METHODS = {"attrgetter": None, "methodcaller": (0,)}   # None: every positional argument
_TEXT_CAP = 200


class PolicyError(Exception):
    """User code broke a policy rule.

    ``rule`` short id, ``line`` 1-based, ``col`` 0-based (characters),
    ``text`` the offending source (capped), ``reason`` the message without the
    position prefix; ``str(e)`` is ``"line L, col C: <reason>"``.
    ``violations`` lists every violation found (this one first).
    """

    def __init__(self, rule: str, line: int, col: int, text: str, reason: str):
        super().__init__(f"line {line}, col {col}: {reason}")
        self.rule = rule
        self.line = line
        self.col = col
        self.text = text
        self.reason = reason
        self.violations: list[PolicyError] = [self]

    def as_dict(self) -> dict:
        return {"rule": self.rule, "line": self.line, "col": self.col,
                "text": self.text, "message": str(self)}


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _root(modname: str) -> str:
    return modname.split(".", 1)[0]


def _column(lines: list[str], node: ast.AST) -> int:
    """ast col_offset is in UTF-8 bytes; report characters."""
    line = getattr(node, "lineno", 1) or 1
    col = getattr(node, "col_offset", 0) or 0
    if 1 <= line <= len(lines):
        text = lines[line - 1]
        if not text.isascii():
            return len(text.encode("utf-8", "surrogatepass")[:col].decode("utf-8", "ignore"))
    return col


def _source_text(code: str, lines: list[str], node: ast.AST) -> str:
    """The offending source of ``node``, on one line, capped."""
    try:
        seg = ast.get_source_segment(code, node)
    except Exception:
        seg = None
    if seg is None:
        line = getattr(node, "lineno", 0) or 0
        seg = lines[line - 1].strip() if 1 <= line <= len(lines) else ""
    seg = " ".join(seg.split()) if "\n" in seg else seg
    return seg if len(seg) <= _TEXT_CAP else seg[: _TEXT_CAP - 3] + "..."


class _Checker:
    def __init__(self, code: str, tree: ast.AST, allowed: Sequence[str], blocked: Sequence[str]):
        self.code = code
        self.lines = code.splitlines()
        self.tree = tree
        self.allowed = tuple(allowed)
        self.allowed_set = frozenset(allowed)
        self.blocked = tuple(blocked)
        self.blocked_set = frozenset(blocked)
        self.allowed_txt = ", ".join(self.allowed) if self.allowed else "nothing"
        self.blocked_txt = ", ".join(self.blocked)
        self.found: list[tuple[int, int, int, str, ast.AST, str]] = []
        self.module_names: dict[str, object] = {}  # import-bound name -> module (if loaded) or None
        self.call_funcs: set[int] = set()  # id() of nodes that are the func of a Call
        self.super_dunder_ok: set[int] = set()
        # compatible profiles (default): what the seed's lists (strict) keep refusing
        self.data_dunders = DATA_DUNDERS if "getattr" not in self.blocked_set else frozenset()
        self.dunder_names_load = _ALLOWED_DUNDER_NAMES_LOAD | (
            {"__file__"} if self.allowed_set & {"os", "pathlib"} else set())

    # -- helpers ---------------------------------------------------------
    def _col(self, node: ast.AST) -> int:
        return _column(self.lines, node)

    def _text(self, node: ast.AST) -> str:
        return _source_text(self.code, self.lines, node)

    def add(self, rule: str, node: ast.AST, reason: str) -> None:
        # Text and character columns are computed later, for the first few only.
        self.found.append((getattr(node, "lineno", 1) or 1, getattr(node, "col_offset", 0) or 0,
                           len(self.found), rule, node, reason))

    def errors(self, limit: int = 20) -> list[PolicyError]:
        out = []
        for line, _c, _n, rule, node, reason in sorted(self.found, key=lambda t: t[:3])[:limit]:
            out.append(PolicyError(rule, line, self._col(node), self._text(node), reason))
        return out

    def _resolve_import(self, modname: str):
        """The module already loaded under ``modname`` (no import happens), as the views serve it
        (``os``, ``os.path``, ``pathlib``: the scratch-directory views of ``fsviews``)."""
        return fsviews.MODULES.get(modname) or sys.modules.get(modname)

    # -- passes ----------------------------------------------------------
    def prepare(self) -> None:
        for node in self.nodes:
            if isinstance(node, ast.Call):
                self.call_funcs.add(id(node.func))
                f = node.func
                if (isinstance(f, ast.Attribute) and f.attr in SUPER_DUNDER_METHODS
                        and isinstance(f.value, ast.Call)
                        and isinstance(f.value.func, ast.Name) and f.value.func.id == "super"):
                    self.super_dunder_ok.add(id(f))
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if a.asname:
                        self.module_names[a.asname] = self._resolve_import(a.name)
                    else:
                        r = _root(a.name)
                        self.module_names[r] = self._resolve_import(r)
            elif isinstance(node, ast.ImportFrom):
                parent = self._resolve_import(node.module) if node.module and not node.level else None
                for a in node.names:
                    if a.name == "*":
                        continue
                    val = None
                    if isinstance(parent, types.ModuleType):
                        val = vars(parent).get(a.name)
                        if val is None and node.module:
                            val = sys.modules.get(f"{node.module}.{a.name}")
                    self.module_names[a.asname or a.name] = val

    def run(self) -> None:
        self.nodes = list(ast.walk(self.tree))
        self.prepare()
        for node in self.nodes:
            if isinstance(node, ast.Import):
                self.check_import(node)
            elif isinstance(node, ast.ImportFrom):
                self.check_import_from(node)
            elif isinstance(node, ast.Name):
                self.check_name(node)
            elif isinstance(node, ast.Attribute):
                self.check_attribute(node)
            elif isinstance(node, ast.MatchClass):
                for attr in node.kwd_attrs:
                    if attr in self.data_dunders:
                        continue
                    if _is_dunder(attr):
                        self.add("dunder-attribute", node,
                                 f"access to dunder attribute {attr!r} is not allowed")
                    elif attr in INTROSPECTION_ATTRIBUTES:
                        self.add("introspection-attribute", node,
                                 f"access to introspection attribute {attr!r} is not allowed")
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                self.check_format_string(node)
            elif isinstance(node, ast.Call):
                self.check_attribute_name_args(node)
            if isinstance(node, ast.AnnAssign):
                self.check_annotation(node.annotation)
            elif isinstance(node, ast.arg) and node.annotation is not None:
                self.check_annotation(node.annotation)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None:
                self.check_annotation(node.returns)

    def check_import(self, node: ast.Import) -> None:
        for a in node.names:
            if _root(a.name) not in self.allowed_set:
                self.add("import", node,
                         f"import of {a.name!r} is not allowed (allowed: {self.allowed_txt})")
                continue
            self._check_dotted(node, a.name)
            if a.asname and _is_dunder(a.asname):
                self.add("dunder-name", node, f"binding the dunder name {a.asname!r} is not allowed")

    def _check_dotted(self, node: ast.AST, dotted: str) -> None:
        parts = dotted.split(".")
        for p in parts[1:]:
            if _is_dunder(p):
                self.add("dunder-attribute", node, f"import of dunder module {dotted!r} is not allowed")
                return
            if p.startswith("_"):
                self.add("private-module-attribute", node,
                         f"import of private module {dotted!r} is not allowed")
                return

    def check_import_from(self, node: ast.ImportFrom) -> None:
        if node.level:
            name = "." * node.level + (node.module or "")
            self.add("import", node,
                     f"import of {name!r} is not allowed (relative imports are never allowed; "
                     f"allowed: {self.allowed_txt})")
            return
        mod = node.module or ""
        if _root(mod) not in self.allowed_set:
            self.add("import", node, f"import of {mod!r} is not allowed (allowed: {self.allowed_txt})")
            return
        self._check_dotted(node, mod)
        for a in node.names:
            if a.name == "*":
                continue
            full = f"{mod}.{a.name}"
            if _is_dunder(a.name):
                self.add("dunder-attribute", node, f"import of dunder attribute {full!r} is not allowed")
            elif a.name.startswith("_"):
                self.add("private-module-attribute", node,
                         f"import of private module attribute {full!r} is not allowed")
            elif a.name in self.blocked_set and self._is_blocked_value(
                    a.name, self.module_names.get(a.asname or a.name), node.module == "builtins"):
                self.add("blocked-call", node,
                         f"import of {full!r} is not allowed: {a.name!r} is blocked "
                         f"(blocked: {self.blocked_txt})")
            else:
                val = self.module_names.get(a.asname or a.name)
                if isinstance(val, types.ModuleType) and _root(val.__name__) not in self.allowed_set:
                    self.add("module-attribute", node,
                             f"{full!r} is the module {val.__name__!r}, which is not an allowed import "
                             f"(allowed: {self.allowed_txt})")
            if a.asname and _is_dunder(a.asname):
                self.add("dunder-name", node, f"binding the dunder name {a.asname!r} is not allowed")

    def check_name(self, node: ast.Name) -> None:
        name = node.id
        if name in self.blocked_set:
            if id(node) in self.call_funcs:
                self.add("blocked-call", node,
                         f"call to {name!r} is not allowed (blocked: {self.blocked_txt})")
            else:
                self.add("blocked-call", node,
                         f"reference to {name!r} is not allowed (blocked: {self.blocked_txt})")
        elif _is_dunder(name):
            if name in self.dunder_names_load and isinstance(node.ctx, ast.Load):
                return
            self.add("dunder-name", node, f"use of the dunder name {name!r} is not allowed")

    def _module_chain(self, node: ast.expr):
        """For ``a.b.c`` rooted at an import-bound Name: (root name, [b, c]) else None."""
        attrs: list[str] = []
        while isinstance(node, ast.Attribute):
            attrs.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name) and (node.id in self.module_names or node.id in ("builtins",)):
            return node.id, attrs[::-1]
        return None

    def check_attribute(self, node: ast.Attribute) -> None:
        attr = node.attr
        if _is_dunder(attr):
            if id(node) in self.super_dunder_ok:
                return
            if attr in self.data_dunders and isinstance(node.ctx, ast.Load):
                return
            self.add("dunder-attribute", node, f"access to dunder attribute {attr!r} is not allowed")
            return
        if attr in INTROSPECTION_ATTRIBUTES:
            self.add("introspection-attribute", node,
                     f"access to introspection attribute {attr!r} is not allowed")
            return
        chain = self._module_chain(node.value)
        if chain is None:
            return
        root, attrs = chain
        dotted = ".".join([root, *attrs, attr])
        if attr in self.blocked_set and self._is_blocked_value(attr, self._static_value(root, [*attrs, attr]),
                                                              root == "builtins"):
            self.add("blocked-call", node,
                     f"use of {dotted!r} is not allowed: {attr!r} is blocked (blocked: {self.blocked_txt})")
            return
        if attr.startswith("_"):
            self.add("private-module-attribute", node,
                     f"access to private module attribute {dotted!r} is not allowed")
            return
        # Resolve statically through module __dict__s only (no import, no __getattr__).
        obj = self.module_names.get(root)
        for a in [*attrs, attr]:
            if not isinstance(obj, types.ModuleType):
                return
            try:
                obj = vars(obj).get(a)
            except Exception:
                return
        if isinstance(obj, types.ModuleType):
            try:
                target = str(obj.__name__)
            except Exception:
                return
            if _root(target) not in self.allowed_set:
                self.add("module-attribute", node,
                         f"{dotted!r} is the module {target!r}, which is not an allowed import "
                         f"(allowed: {self.allowed_txt})")

    def check_attribute_name_args(self, node: ast.Call) -> None:
        """``getattr(x, "__class__")``, ``operator.attrgetter("a.__globals__")``: a literal name the
        run-time check would refuse is refused here, with its position."""
        if "getattr" in self.blocked_set:
            return  # the seed's lists (strict): getattr is blocked, setattr/delattr fail at run time
        f = node.func
        if isinstance(f, ast.Name) and f.id in _NAME_ARG_CALLS:
            positions, write = _NAME_ARG_CALLS[f.id], f.id != "getattr"
        elif isinstance(f, ast.Attribute) and f.attr in _NAME_ARG_METHODS:
            positions, write = _NAME_ARG_METHODS[f.attr], False
        elif isinstance(f, ast.Name) and f.id in _NAME_ARG_METHODS:
            positions, write = _NAME_ARG_METHODS[f.id], False
        else:
            return
        args = [a for i, a in enumerate(node.args) if positions is None or i in positions]
        for a in args:
            if not (isinstance(a, ast.Constant) and isinstance(a.value, str)):
                continue
            for part in a.value.split(".") if positions is None else [a.value]:
                if attribute_refusal(part, write=write) is None:
                    continue
                kind = "dunder" if _is_dunder(part) else ("introspection" if part in INTROSPECTION_ATTRIBUTES
                                                          else "private")
                rule = {"dunder": "dunder-attribute", "introspection": "introspection-attribute",
                        "private": "private-attribute"}[kind]
                self.add(rule, a, f"the {kind} attribute {part!r} named here is not available to user code")
                break

    def _static_value(self, root: str, attrs: list[str]):
        """``root.a.b`` resolved through module ``__dict__``s only (None when it cannot be)."""
        obj = self.module_names.get(root)
        for a in attrs:
            if not isinstance(obj, types.ModuleType):
                return None
            obj = vars(obj).get(a)
        return obj

    def _is_blocked_value(self, name: str, value, from_builtins: bool) -> bool:
        """``m.<blocked name>``: the seed's lists (getattr blocked) refuse it by name; the compatible
        ones only when it is that builtin (``re.compile`` is a regex, not ``compile``)."""
        if "getattr" in self.blocked_set or from_builtins:
            return True
        return value is vars(_builtins_module).get(name)

    def check_annotation(self, ann: ast.expr) -> None:
        for n in ast.walk(ann):
            if isinstance(n, ast.Constant) and isinstance(n.value, str):
                why = type_expr.inner_refusal(n.value)
                if why:
                    self.add("annotation", n, f"the string annotation is not a type expression ({why}); "
                                              "annotations may name types only (names, dotted names, "
                                              "subscripts, constants and |)")

    def check_format_string(self, node: ast.Constant) -> None:
        s = node.value
        if "{" not in s or _field_name_split is None:
            return
        bad = _bad_format_field(s, depth=0, ok=self.data_dunders)
        if bad:
            kind = "dunder" if _is_dunder(bad) else "introspection"
            self.add("format-string", node,
                     f"format string traverses the {kind} attribute {bad!r}; this is not allowed")


def _bad_format_field(s: str, depth: int, ok: frozenset = frozenset()) -> str | None:
    if depth > 2:
        return None
    try:
        parsed = list(string.Formatter().parse(s))
    except (ValueError, TypeError):
        return None
    for _literal, field, spec, _conv in parsed:
        if field:
            try:
                _first, rest = _field_name_split(field)
                for _is_attr, key in rest:
                    if isinstance(key, str) and key not in ok and (
                            _is_dunder(key) or key in INTROSPECTION_ATTRIBUTES):
                        return key
            except (ValueError, TypeError):
                pass
        if spec and "{" in spec:
            inner = _bad_format_field(spec, depth + 1, ok)
            if inner:
                return inner
    return None


def check(
    code: str,
    allowed_imports: Sequence[str],
    blocked_calls: Sequence[str],
    *,
    max_bytes: int | None = None,
) -> None:
    """Raise ``PolicyError`` if ``code`` breaks a rule; return None otherwise.

    Never raises anything else (for any ``str``). ``max_bytes`` is optional:
    the caller normally enforces the size limit before the code reaches here.
    """
    if not isinstance(code, str):
        raise PolicyError("syntax", 1, 0, "", "code must be a string")
    if max_bytes is not None:
        size = len(code.encode("utf-8", "surrogatepass"))
        if size > max_bytes:
            raise PolicyError("too-large", 1, 0, "",
                              f"code is {size} bytes; the limit is {max_bytes} bytes")
    try:
        tree = ast.parse(code, filename="<execute>", mode="exec")
    except SyntaxError as e:
        line = e.lineno or 1
        col = max((e.offset or 1) - 1, 0)
        text = (e.text or "").rstrip("\r\n")
        if len(text) > _TEXT_CAP:
            text = text[: _TEXT_CAP - 3] + "..."
        msg = e.msg or "invalid syntax"
        raise PolicyError("syntax", line, col, text, f"syntax error: {msg}") from None
    except (ValueError, UnicodeError) as e:  # e.g. NUL bytes, lone surrogates (3.11)
        raise PolicyError("syntax", 1, 0, "", f"syntax error: {e}") from None
    except (RecursionError, MemoryError):
        raise PolicyError("too-complex", 1, 0, "", "code is nested too deeply to check") from None

    checker = _Checker(code, tree, allowed_imports, blocked_calls)
    try:
        checker.run()
    except PolicyError:
        raise
    except (RecursionError, MemoryError):
        raise PolicyError("too-complex", 1, 0, "", "code is nested too deeply to check") from None
    if checker.found:
        found = checker.errors()
        first = found[0]
        first.violations = found
        raise first

"""The grammar of a string annotation the Python layers agree to evaluate: a *type expression*.

Python evaluates string annotations (``x: "Box"``, ``List["Part"]``, ``typing.ForwardRef(s)``)
with ``eval``. A type expression needs no more than names, public dotted names, subscripts,
constants, lists/tuples, ``|`` and a unary minus on a number (``Literal[-1]``). Refused, with the
reason: calls, lambdas, comprehensions, operators other than ``|``, f-strings, slices, dunder
names (``__builtins__``), attributes that start with ``_`` or reach frames/code/the MRO. String
constants inside are checked the same way when they parse as expressions (they become forward
references in their turn); those that do not parse can never be evaluated.

Used by layer 7 (``policy``: annotations written in user code) and layer 8 (``evaluators``: every
forward reference evaluated in the jail). Blocks nothing on its own: it only says why.
"""
from __future__ import annotations

import ast

__all__ = ["refusal", "inner_refusal", "TEXT_CAP"]

TEXT_CAP = 2000    # longer annotation strings are refused outright
_MAX_NESTING = 4   # strings inside strings inside ...

# attributes with no dunder that reach frames, code objects or the MRO (policy's list, kept in step)
_INTROSPECTION = frozenset({
    "gi_frame", "gi_code", "gi_yieldfrom", "cr_frame", "cr_code", "cr_await", "ag_frame", "ag_code",
    "ag_await", "f_globals", "f_locals", "f_builtins", "f_back", "f_code", "f_trace", "tb_frame",
    "tb_next", "tb_lasti", "co_code", "co_consts", "co_names", "func_globals", "mro"})

_LEAVES = (ast.Load, ast.BitOr, ast.USub, ast.UAdd)


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def _node_refusal(node: ast.AST, depth: int) -> str | None:
    if isinstance(node, ast.Expression):
        return _node_refusal(node.body, depth)
    if isinstance(node, ast.Name):
        return f"the dunder name {node.id!r}" if _is_dunder(node.id) else None
    if isinstance(node, ast.Attribute):
        if node.attr.startswith("_"):
            return f"the attribute {node.attr!r} (private or dunder)"
        if node.attr in _INTROSPECTION:
            return f"the introspection attribute {node.attr!r}"
        return _node_refusal(node.value, depth)
    if isinstance(node, ast.Constant):
        if isinstance(node.value, str):
            return _string_refusal(node.value, depth + 1)
        return None
    if isinstance(node, ast.Subscript):
        return _node_refusal(node.value, depth) or _node_refusal(node.slice, depth)
    if isinstance(node, (ast.Tuple, ast.List)):
        for elt in node.elts:
            why = _node_refusal(elt, depth)
            if why:
                return why
        return None
    if isinstance(node, ast.Starred):  # tuple[*Ts]
        return _node_refusal(node.value, depth)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _node_refusal(node.left, depth) or _node_refusal(node.right, depth)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)) \
            and isinstance(node.operand, ast.Constant) and isinstance(node.operand.value, (int, float, complex)):
        return None
    if isinstance(node, _LEAVES):
        return None
    what = {ast.Call: "a call", ast.Lambda: "a lambda", ast.NamedExpr: "an assignment expression",
            ast.JoinedStr: "an f-string", ast.Slice: "a slice", ast.IfExp: "a conditional expression",
            ast.BoolOp: "a boolean operator", ast.Compare: "a comparison"}.get(type(node))
    if what is None:
        what = "an operator other than |" if isinstance(node, (ast.BinOp, ast.UnaryOp)) \
            else f"a {type(node).__name__} expression"
    return what


def _string_refusal(text: str, depth: int) -> str | None:
    """Why a string *inside* a type expression is refused (None: it is fine or can never be evaluated)."""
    if depth > _MAX_NESTING:
        return "strings nested too deeply"
    if len(text) > TEXT_CAP:
        return f"a string over {TEXT_CAP} characters"
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None  # typing compiles it before it evaluates it: it never runs
    return _node_refusal(tree, depth)


def inner_refusal(text: str) -> str | None:
    """Why a string written inside an annotation is refused; None when it is a type expression or
    does not parse at all (then it is never evaluated: ``Literal["a b"]``)."""
    try:
        return _string_refusal(text, 0)
    except RecursionError:
        return "it is nested too deeply"


def refusal(text) -> str | None:
    """Why the string annotation ``text`` is not a type expression we evaluate, or None when it is.

    A text that does not parse is refused too (there is nothing to evaluate)."""
    if not isinstance(text, str):
        return f"it is a {type(text).__name__}, not a string"
    if len(text) > TEXT_CAP:
        return f"it is longer than {TEXT_CAP} characters"
    body = text.strip()
    body = body[1:] if body.startswith("*") else body  # "*Ts": typing evaluates "(*Ts,)[0]"
    try:
        tree = ast.parse(body, mode="eval")
    except (SyntaxError, ValueError):
        return "it is not a Python expression"
    except (RecursionError, MemoryError):
        return "it is nested too deeply"
    try:
        return _node_refusal(tree, 0)
    except RecursionError:
        return "it is nested too deeply"

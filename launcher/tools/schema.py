"""Tool arguments checked against their JSON schema, and profile facts filled into descriptions.

:func:`check_args` validates a call's arguments completely, nested ``items`` and ``properties``
included, with the ``jsonschema`` Draft 2020-12 validator, and reports the first problem in one
sentence that names the parameter (``section.normal[2] must be a finite number``).

Blocks, before any handler runs: unknown or missing arguments, wrong types (a bool is not a
number, ``1.0`` is not an integer), non-finite numbers, values outside an enum, a length, a
range or a pattern, at any depth. ``null`` for an optional argument means "not given".
Does not block: what a valid value means (a path's components, a name bound in the session, a
section plane's normal being zero): the handler that gives it a meaning checks that.
"""
from __future__ import annotations

import math
import re

from jsonschema import Draft202012Validator, validators


class ArgumentError(ValueError):
    """Arguments that do not match the tool's schema; the message names the parameter."""


def _is_integer(_checker, v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_number(_checker, v) -> bool:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return False
    return not isinstance(v, float) or math.isfinite(v)


#: Draft 2020-12 with stricter numbers: integers are ints (not 1.0), numbers are finite.
Validator = validators.extend(
    Draft202012Validator,
    type_checker=Draft202012Validator.TYPE_CHECKER.redefine_many({"integer": _is_integer, "number": _is_number}))


def validator(schema: dict) -> Draft202012Validator:
    """A validator for a tool's input schema (the schema itself is checked first)."""
    Validator.check_schema(schema)
    return Validator(schema)


def check_args(tool_name: str, check: Draft202012Validator, required, args) -> dict:
    """``args`` with ``None`` dropped for optional names, or ArgumentError for the first problem."""
    if not isinstance(args, dict):
        raise ArgumentError("arguments must be an object")
    args = {k: v for k, v in args.items() if v is not None or k in required}  # null = not given
    errors = sorted(check.iter_errors(args), key=_rank(check.schema))
    if errors:
        raise ArgumentError(_message(tool_name, errors[0]))
    return args


_FIRST = {"type": 0, "enum": 1, "maxLength": 2, "minLength": 3, "pattern": 4}


def _rank(schema: dict):
    """Unknown arguments first, then missing ones, then by parameter in declaration order, the
    value itself before its items, and a wrong type, enum, length, pattern before the rest."""
    order = {name: i for i, name in enumerate(schema.get("properties", {}))}

    def key(e) -> tuple:
        path = list(e.absolute_path)
        if not path:
            return ({"additionalProperties": 0, "required": 1}.get(e.validator, 2), 0, 0, 0)
        return (3, order.get(path[0], len(order)), len(path), _FIRST.get(e.validator, len(_FIRST)))
    return key


def _where(path) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


def _names(keys) -> str:
    """Names the caller sent, for a message: each repr'd (no raw control character) and cut."""
    return ", ".join(repr(k)[:80] for k in keys)[:400]


def _message(tool_name: str, e) -> str:
    kw, val, v, where = e.validator, e.validator_value, e.instance, _where(e.absolute_path)
    if not where:  # the arguments object itself
        props = e.schema.get("properties", {})
        if kw == "additionalProperties":
            unknown = sorted(set(v) - set(props))
            return (f"unknown argument(s) {_names(unknown)}; "
                    f"{tool_name} takes {', '.join(props) or 'none'}")
        if kw == "required":
            return f"missing required argument(s): {', '.join(k for k in val if k not in v)}"
    if kw == "type":
        types = val if isinstance(val, list) else [val]
        if isinstance(v, float) and not math.isfinite(v) and {"number", "integer"} & set(types):
            return f"{where} must be a finite number"
        msg = f"{where} must be of type {' or '.join(types)}"
        desc = e.schema.get("description")
        if types == ["object"] and isinstance(desc, str) and desc:  # its shape: the description's first sentence
            msg += f": {desc.split('. ')[0][:200]}"
        return msg
    if kw == "enum":
        return f"{where} must be one of: {', '.join(map(repr, val))}"
    if kw == "maxLength":
        return f"{where} is {len(v)} characters long; the limit is {val}"
    if kw == "minLength":
        return f"{where} must not be empty" if val == 1 else f"{where} must have at least {val} characters"
    if kw == "pattern":
        return f"{where} {v[:80]!r} does not match {val}"
    bound = {"minimum": ">=", "maximum": "<=", "exclusiveMinimum": ">", "exclusiveMaximum": "<"}.get(kw)
    if bound:
        return f"{where} must be {bound} {val}"
    if kw in ("minItems", "maxItems"):
        return f"{where} must have {'at least' if kw == 'minItems' else 'at most'} {val} item(s)"
    if kw == "additionalProperties":
        unknown = sorted(set(v) - set(e.schema.get("properties", {})))
        return (f"{where}: unknown key(s) {_names(unknown)}; "
                f"it takes {', '.join(e.schema.get('properties', {}))}")
    if kw == "required":
        return f"{where} needs {', '.join(k for k in val if k not in v)}"
    return f"{where or 'arguments'}: {e.message[:200]}"


# ------------------------------------------------------------------ profile facts in descriptions
_PLACEHOLDER = re.compile(r"\{(allowed_imports|timeout_s|cpu_s|memory_mb|max_[a-z_]+)\}")
_GENERIC = {"allowed_imports": "build123d, math, numpy and a few stdlib modules (see the server instructions)",
            "timeout_s": "the profile's", "max_code_bytes": "the profile's", "max_snapshots": "the profile's",
            "max_export_bytes": "the profile's", "max_output_bytes": "the profile's"}


def fill(text: str, profile=None) -> str:
    """``text`` with the profile placeholders ({timeout_s}, {allowed_imports}, {max_...}) filled in; any
    other brace (a JSON example in a description) is left alone. Without a profile: generic words."""
    return _PLACEHOLDER.sub(lambda m: _fact(m.group(1), profile), text)


def _fact(key: str, profile) -> str:
    if profile is None:
        return _GENERIC.get(key, key)
    if key == "allowed_imports":
        return ", ".join(profile.allowed_imports)
    if hasattr(profile.limits, key):
        v = getattr(profile.limits, key)
        return f"{v:g}" if isinstance(v, float) else str(v)
    return _GENERIC.get(key, key)


def with_profile(schema: dict, profile=None) -> dict:
    """A copy of an input schema with profile facts filled into its parameters' descriptions."""
    out = dict(schema, properties={k: dict(p) for k, p in schema["properties"].items()})
    for p in out["properties"].values():
        if isinstance(p.get("description"), str):
            p["description"] = fill(p["description"], profile)
    return out

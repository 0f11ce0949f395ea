"""profiles/strict.toml keeps the seed's Python rules exactly (issue 21), and every compatible
behaviour of default is gated by those lists, so strict refuses each one as the seed did:
checked getattr/hasattr/setattr/locals/globals/vars/dir, open, the new imports (``__future__``,
logging, operator, os, pathlib, ...), data dunders (``type(x).__name__``) and ``__file__``.
The default profile, with the same code, serves them (the contrast that makes the pin mean something).
"""
from __future__ import annotations

import builtins

import build123d  # noqa: F401 - loaded, as in the jail
import pytest

from jail.cad import runner
from jail.cad.policy import PolicyError, check
from launcher.profile import load_profile

SEED_ALLOWED = ("build123d", "math", "numpy", "typing", "collections", "itertools", "functools", "copy")
SEED_BLOCKED = ("eval", "exec", "compile", "open", "__import__", "breakpoint", "input", "getattr", "vars",
                "dir", "hasattr")
STRICT = load_profile("strict")
DEFAULT = load_profile("default")

NEW_IMPORTS = ("__future__", "typing_extensions", "random", "datetime", "time", "logging", "operator", "string",
               "re", "json", "dataclasses", "enum", "statistics", "fractions", "decimal", "heapq", "bisect",
               "warnings", "textwrap", "abc", "numbers", "cmath", "array", "pprint", "contextlib", "timeit",
               "os", "pathlib", "ocp_vscode")
NEW_BUILTINS = ("getattr", "hasattr", "setattr", "delattr", "locals", "globals", "vars", "dir")

#: code the compatible rules accept at the AST layer and the seed's refuse: code -> strict's rule
AST_NEW = {
    "from __future__ import annotations\n": "import",
    "import logging\n": "import",
    "import os.path\n": "import",
    "from pathlib import Path\n": "import",
    "x = type(1).__name__\n": "dunder-attribute",
    "x = Box.__qualname__\n": "dunder-attribute",
    "x = Box.__doc__\n": "dunder-attribute",
    "x = Box.__module__\n": "dunder-attribute",
    "x = Align.__members__\n": "dunder-attribute",
    "x = '{0.__name__}'.format(Box)\n": "format-string",
    "p = __file__\n": "dunder-name",
    "x = getattr(Box, 'volume')\n": "blocked-call",
    "x = hasattr(Box, 'volume')\n": "blocked-call",
    "x = vars()\n": "blocked-call",
    "x = dir()\n": "blocked-call",
    "f = open('x.txt', 'w')\n": "blocked-call",
}


def test_strict_states_the_seed_rules_exactly():
    assert STRICT.allowed_imports == SEED_ALLOWED
    assert STRICT.blocked_calls == SEED_BLOCKED


def test_default_is_the_compatible_one():
    assert set(SEED_ALLOWED) < set(DEFAULT.allowed_imports)
    assert set(NEW_IMPORTS) <= set(DEFAULT.allowed_imports)
    assert not set(NEW_BUILTINS) & set(DEFAULT.blocked_calls)
    assert {"eval", "exec", "compile", "__import__", "breakpoint", "input"} <= set(DEFAULT.blocked_calls)


@pytest.mark.parametrize("code", list(AST_NEW))
def test_strict_ast_policy_refuses_what_default_accepts(code):
    check(code, DEFAULT.allowed_imports, DEFAULT.blocked_calls)
    with pytest.raises(PolicyError) as ei:
        check(code, STRICT.allowed_imports, STRICT.blocked_calls)
    assert ei.value.rule == AST_NEW[code], ei.value


def _builtins(profile) -> dict:
    return runner.new_namespace(profile.allowed_imports, profile.blocked_calls, True)["__builtins__"]


def test_strict_builtins_have_none_of_the_new_functions():
    strict, default = _builtins(STRICT), _builtins(DEFAULT)
    for name in NEW_BUILTINS:
        assert name not in strict, name
        assert name in default and default[name].__module__ == "builtins", name
        assert default[name] is not vars(builtins)[name]
    assert "open" not in strict
    assert {"eval", "exec", "compile", "breakpoint", "input"}.isdisjoint(strict) and \
        {"eval", "exec", "compile", "breakpoint", "input"}.isdisjoint(default)


@pytest.mark.parametrize("mod", NEW_IMPORTS)
def test_strict_import_refuses_every_new_module(mod):
    imp = _builtins(STRICT)["__import__"]
    with pytest.raises(ImportError, match="is not allowed"):
        imp(mod, None, None, (), 0)


def test_strict_views_serve_no_new_module():
    """``build123d.logging`` / ``typing.operator``: a view of an allowed module does not hand out a
    module strict does not allow, even though default serves it."""
    for profile, served in ((STRICT, False), (DEFAULT, True)):
        imp = _builtins(profile)["__import__"]
        typing_v, b = imp("typing", None, None, (), 0), imp("build123d", None, None, (), 0)
        if served:
            assert typing_v.operator.attrgetter.__module__ == "jail.cad.stdlib_views"
            assert b.logging.getLogger("x").name == "x"
        else:
            with pytest.raises(AttributeError, match="not an allowed import"):
                typing_v.operator  # noqa: B018
            with pytest.raises(AttributeError, match="not an allowed import"):
                b.logging  # noqa: B018

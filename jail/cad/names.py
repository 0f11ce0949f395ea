"""The user's top-level names, and text taken from user objects without trusting them.

``user_names`` / ``is_user_value`` say which names of a session namespace are the user's (not
dunders, ``_``, modules, builtins or what ``from build123d import *`` bound); the runner's
summaries, the measure/render selection and the ``api`` op share these rules.
``safe_str`` and ``type_name`` read a user object as an exact, capped ``str`` that never raises.

Blocks: nothing. Everything here runs in the jailed process, next to user code that may have
patched it; the launcher checks every reply built from it.
"""
from __future__ import annotations

import builtins as _builtins
import types
from typing import Any

from jail.wire.caps import MESSAGE_CAP, NAME_CAP

__all__ = ["cap", "safe_str", "type_name", "is_dunder", "star_exports", "is_user_value", "user_names"]


def cap(s: str, n: int) -> str:
    """``s`` cut to ``n`` characters, the last three of them ``...`` when cut."""
    return s if len(s) <= n else s[: n - 3] + "..."


def safe_str(obj: Any, n: int = MESSAGE_CAP) -> str:
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
    return cap(s, n)


def type_name(obj: Any) -> str:
    """The name of ``type(obj)``, read past any metaclass override, capped."""
    try:
        n = type.__dict__["__name__"].__get__(type(obj))  # not a metaclass override
        return cap(str.__str__(n), NAME_CAP)
    except BaseException:  # noqa: BLE001
        return "object"


def is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


_STAR_CACHE: dict | None = None


def star_exports() -> dict:
    """name -> object for what ``from build123d import *`` binds (computed once, then inherited
    by every forked child)."""
    global _STAR_CACHE
    if _STAR_CACHE is None:
        import build123d  # loaded long before (the zygote imports it); here so this module loads without it

        names = getattr(build123d, "__all__", None)
        if names is None:
            names = [n for n in vars(build123d) if not n.startswith("_")]
        _STAR_CACHE = {n: vars(build123d)[n] for n in names if n in vars(build123d)}
    return _STAR_CACHE


#: name -> what ``from build123d import *`` bound through the views instead of the real object
#: (a stand-in: ``jail.cad.fsexport``), recorded by :func:`note_served`.
_SERVED: dict = {}


def note_served(namespace: dict) -> None:
    """Record the stand-ins a fresh namespace's ``from build123d import *`` bound."""
    for n, real in star_exports().items():
        v = namespace.get(n, real)
        if v is not real:
            _SERVED[n] = v


def is_user_value(name: str, value: Any, star: dict, real_builtins: dict) -> bool:
    """False for a module, and for a name that still holds what ``from build123d import *`` or
    the builtins bound to it."""
    if isinstance(value, types.ModuleType):
        return False
    if name in star and (star[name] is value or _SERVED.get(name, star) is value):
        return False
    if name in real_builtins and real_builtins[name] is value:
        return False
    return True


def user_names(namespace: dict) -> list[str]:
    """The user's top-level names in ``namespace`` (exact ``str`` copies), in binding order."""
    star = star_exports()
    real = vars(_builtins)
    out = []
    for name in list(namespace.keys()):
        if not isinstance(name, str) or is_dunder(name) or name == "_":
            continue
        if not is_user_value(name, namespace.get(name), star, real):
            continue
        out.append(str.__str__(name))
    return out

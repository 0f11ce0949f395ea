"""Layer 8, continued: what the module views serve instead of, or refuse from, the standard-library
modules the default profile allows (issue 21; each module's review is in SECURITY.md).

Stand-ins (``substitutes``), none a subclass of the real class (``super(StandIn, x)`` would reach it):
``operator.attrgetter``/``methodcaller`` (a run-time string -> attributes: the names follow
``introspect.attribute_refusal``), ``string.Formatter`` (``get_field`` returned any attribute of an
argument, ``"0.__globals__[os]"``), ``logging.basicConfig`` (``filename`` is a file of the scratch
directory: handlers to streams only), ``timeit.Timer``/``timeit``/``repeat`` (callables only: a string is compiled and run with the
real builtins). Refused (``refused``): ``logging.FileHandler`` (host files), ``logging.currentframe``
(a frame), ``enum.global_enum`` (writes into ``sys.modules[cls.__module__]``, a module the class
names), ``contextlib.chdir`` (the real ``os.chdir``), ``timeit.main``, ``typing_extensions.get_annotations``/
``evaluate_forward_ref`` (``eval`` of annotation strings with a module's real globals). Refused sub-modules
(``REFUSED_MODULES``): ``logging.config`` (resolves strings to objects by import), ``logging.handlers``
(files, sockets, SMTP, HTTP, syslog), ``json.tool`` (a command line that opens files).
Does not block: what the OS layers stop (native file access); objects user code builds itself.
"""
from __future__ import annotations

import logging
import operator
import string
import sys
import timeit
from _string import formatter_field_name_split

from jail.cad import fsviews
from jail.cad.introspect import attribute_refusal

__all__ = ["substitutes", "refused", "REFUSED_MODULES"]

REFUSED_MODULES = frozenset({"logging.config", "logging.handlers", "json.tool"})

_real_getattr = getattr


def _check_dotted(dotted, fn: str) -> str:
    if not isinstance(dotted, str):
        raise TypeError(f"{fn}: attribute name must be a string")
    dotted = str.__str__(dotted)
    for part in dotted.split("."):
        why = attribute_refusal(part)
        if why:
            raise AttributeError(f"{fn}: attribute {part[:80]!r} is not available: {why}")
    return dotted


class attrgetter:  # noqa: N801 - the stdlib's name
    """``operator.attrgetter`` for user code: every dotted part follows the getattr rules."""

    __slots__ = ("_names",)

    def __init__(self, attr, *attrs):
        self._names = tuple(_check_dotted(a, "attrgetter") for a in (attr, *attrs))

    def __call__(self, obj):
        out = []
        for dotted in self._names:
            v = obj
            for part in dotted.split("."):
                v = _real_getattr(v, part)
            out.append(v)
        return out[0] if len(out) == 1 else tuple(out)

    def __repr__(self):
        return f"operator.attrgetter({', '.join(map(repr, self._names))})"


class methodcaller:  # noqa: N801 - the stdlib's name
    """``operator.methodcaller`` for user code: the method name follows the getattr rules."""

    __slots__ = ("_name", "_args", "_kwargs")

    def __init__(self, name, /, *args, **kwargs):
        if not isinstance(name, str) or "." in name:
            raise TypeError("methodcaller: method name must be a string without dots")
        self._name = _check_dotted(name, "methodcaller")
        self._args, self._kwargs = args, kwargs

    def __call__(self, obj):
        return _real_getattr(obj, self._name)(*self._args, **self._kwargs)

    def __repr__(self):
        return f"operator.methodcaller({self._name!r}, ...)"


def _formatter_class():
    real = string.Formatter
    members = {k: v for k, v in vars(real).items() if not k.startswith("__")}

    def get_field(self, field_name, args, kwargs):
        """As ``string.Formatter.get_field``; attributes and keys that start with '_' or reach frames
        are refused (``"0.__globals__"``)."""
        first, rest = formatter_field_name_split(field_name)
        obj = self.get_value(first, args, kwargs)
        for is_attr, i in rest:
            if is_attr:
                obj = _real_getattr(obj, _check_dotted(i, "Formatter.get_field"))
            else:
                obj = obj[i]
        return obj, first

    members["get_field"] = get_field
    members["__doc__"] = real.__doc__
    members["__module__"] = "string"
    return type("Formatter", (), members)


def _basic_config(real):
    def basicConfig(**kwargs):  # noqa: N802 - the stdlib's name
        """``logging.basicConfig`` to streams only (stderr by default, or ``stream=``/``handlers=``);
        ``filename=`` logs to that file in the call's scratch directory (``fsviews.open_``: never a
        host file; a log is listed, not delivered)."""
        filename, mode = kwargs.pop("filename", None), kwargs.pop("filemode", "a")
        if filename is not None:
            if "stream" in kwargs or "handlers" in kwargs:
                raise ValueError("'stream' or 'handlers' should not be specified together with 'filename'")
            kwargs["stream"] = fsviews.open_(filename, mode, encoding=kwargs.pop("encoding", None),
                                             errors=kwargs.pop("errors", "backslashreplace"))
        return real(**kwargs)
    basicConfig.__wrapped__ = None
    return basicConfig


def _timeit_module_stand_ins():
    real = timeit.Timer

    def callable_only(stmt, setup):
        for what, v in (("stmt", stmt), ("setup", setup)):
            if not callable(v) and v != "pass":
                raise ValueError(f"timeit: {what} must be a callable here (a string is compiled and run "
                                 "outside the Python layers)")

    class Timer:
        """``timeit.Timer`` with callables only (``Timer(lambda: f(x)).timeit(10)``)."""

        __slots__ = ("timeit", "repeat", "autorange")

        def __init__(self, stmt="pass", setup="pass", timer=timeit.default_timer, globals=None):  # noqa: A002
            callable_only(stmt, setup)
            t = real(stmt, setup, timer, None)  # held in closures only: type(t) compiles strings
            self.timeit = lambda number=timeit.default_number: t.timeit(number)
            self.repeat = lambda repeat=timeit.default_repeat, number=timeit.default_number: \
                t.repeat(repeat, number)
            self.autorange = lambda callback=None: t.autorange(callback)

    Timer.__module__ = "timeit"

    def timeit_(stmt="pass", setup="pass", timer=timeit.default_timer, number=timeit.default_number,
                globals=None):  # noqa: A002
        return Timer(stmt, setup, timer).timeit(number)

    def repeat(stmt="pass", setup="pass", timer=timeit.default_timer, repeat=timeit.default_repeat,
               number=timeit.default_number, globals=None):  # noqa: A002
        return Timer(stmt, setup, timer).repeat(repeat, number)

    timeit_.__name__ = timeit_.__qualname__ = "timeit"
    return {id(real): Timer, id(timeit.timeit): timeit_, id(timeit.repeat): repeat}


_SUBSTITUTES: dict[int, object] = {}


def substitutes() -> dict[int, object]:
    """``{id(real object): stand-in}`` (made once per process)."""
    if not _SUBSTITUTES:
        out = _SUBSTITUTES
        out[id(operator.attrgetter)] = attrgetter
        out[id(operator.methodcaller)] = methodcaller
        out[id(string.Formatter)] = _formatter_class()
        out[id(logging.basicConfig)] = _basic_config(logging.basicConfig)
        out.update(_timeit_module_stand_ins())
        for k in ("attrgetter", "methodcaller"):  # the C type is also _operator's, same object
            real = vars(sys.modules.get("_operator", operator)).get(k)
            if real is not None:
                out[id(real)] = out[id(getattr(operator, k))]
    return _SUBSTITUTES


def refused() -> dict[int, str]:
    """``{id(object): why}`` the views refuse under any name (see the module doc)."""
    import contextlib
    import enum
    out = {id(logging.FileHandler): "it writes host files (log to a stream: the default is stderr)",
           id(logging.currentframe): "it returns a frame",
           id(enum.global_enum): "it writes into the module a class names (sys.modules[cls.__module__])",
           id(timeit.main): "it is a command line (strings compiled outside the Python layers)"}
    try:
        import typing_extensions as te
    except ImportError:  # pragma: no cover - a dependency of build123d's stack
        te = None
    for n in ("get_annotations", "evaluate_forward_ref"):
        if te is not None and hasattr(te, n):
            out[id(getattr(te, n))] = "it evaluates string annotations with eval (typing.get_type_hints is checked)"
    if hasattr(contextlib, "chdir"):
        out[id(contextlib.chdir)] = "it changes the real working directory"
    return out

"""Names of delivered files: only names no tool runs or loads on its own.

A file the launcher writes lands next to the user's other files; some tools act on a file because
of its name alone (pytest collects ``test_*.py`` and imports ``conftest.py``, Python's ``site``
runs ``sitecustomize.py`` and ``*.pth``, ``python -m unittest`` discovers ``test*.py``, a
``Makefile``, ``.envrc`` or ``*.desktop`` is run by make, direnv, a desktop; a ``numpy.py`` next to
a script shadows numpy). So, on top of safepath.py's rules (plain relative name, no look-alike
characters), :func:`check_delivered_name` allows only:

* the extensions of the export formats (and aliases); ``.py`` only for format ``py`` (the
  launcher-built script), with a plain ASCII stem that is not a name tools load (:data:`PY_REFUSED`,
  anything with ``test`` in it, ``*_config``, a module's name);
* no component that starts with ``.`` (hidden files and directories: ``.git/``, ``.envrc``) or
  ``-`` (read as an option by ``rm *``), no ``__pycache__`` or ``*.dist-info``/``*.egg-info``
  directory.

Names are compared case-folded (macOS, Windows shares and vfat fold case). Does not block: a tool
configured to collect every file (``pytest --doctest-modules`` imports any ``.py``; the script's
own guard covers that).
"""
from __future__ import annotations

import functools
import re
import sys

#: extension -> format; a name's extension must be one of these and agree with the format.
EXTENSIONS = {".step": "step", ".stp": "step", ".stl": "stl", ".brep": "brep", ".brp": "brep",
              ".svg": "svg", ".dxf": "dxf", ".3mf": "3mf", ".py": "py"}

#: .py stems (case-folded) that a tool runs, imports or executes because of the name alone.
PY_REFUSED = {
    "conftest": "pytest imports it when it collects the directory",
    "sitecustomize": "Python's site module runs it at start-up", "usercustomize": "Python's site module runs it",
    "__init__": "it makes the directory a package that Python imports", "__main__": "`python DIR` runs it",
    "setup": "pip and setuptools run it", "noxfile": "nox runs it", "fabfile": "Fabric runs it",
    "dodo": "doit runs it", "tasks": "invoke runs it", "manage": "Django projects run it",
    "conf": "Sphinx runs it when it builds the docs", "pavement": "Paver runs it", "toxfile": "tox loads it",
    "hatch_build": "Hatch runs it when it builds", "locustfile": "Locust runs it", "build": "PyBuilder runs it",
    "celeryconfig": "Celery imports it", "wsgi": "WSGI servers import it", "asgi": "ASGI servers import it",
    "app": "Flask and other servers import it",
}
_PY_STEM = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
_BAD_DIRS = {"__pycache__": "Python keeps compiled modules there", "site-packages": "Python loads packages there"}
_BAD_DIR_SUFFIXES = (".dist-info", ".egg-info", ".egg")
ALLOWED = ", ".join(sorted(EXTENSIONS))


@functools.lru_cache(maxsize=1)
def module_names() -> frozenset[str]:
    """Top-level module names a ``.py`` must not take: the standard library's, the installed
    distributions' (this environment: where build123d runs), and a few common ones."""
    names = set(sys.stdlib_module_names) | {"build123d", "numpy", "ocp", "cadquery", "scipy", "matplotlib",
                                            "ocp_vscode", "pytest", "ezdxf", "trimesh", "lib3mf"}
    try:
        from importlib.metadata import packages_distributions
        names |= set(packages_distributions())
    except Exception:  # noqa: BLE001 - the fixed names still hold
        pass
    return frozenset(n.lower() for n in names)


def refusal(parts: list[str], fmt: str) -> str | None:
    """Why ``parts`` (safepath-checked components) may not be delivered as ``fmt``; None if it may."""
    return component_refusal(parts) or extension_refusal(parts, fmt)


def component_refusal(parts: list[str]) -> str | None:
    """Why a component of ``parts`` is refused whatever the file is (hidden, an option, a directory
    Python loads from); None if none is."""
    for i, p in enumerate(parts):
        kind = "directory" if i < len(parts) - 1 else "file"
        if p.startswith("."):
            return (f"{kind} name {p[:80]!r} starts with '.': hidden files and directories are never "
                    f"written (tools such as git, direnv and shells act on them)")
        if p.startswith("-"):
            return f"{kind} name {p[:80]!r} starts with '-' (commands such as `rm *` read it as an option)"
        low = p.casefold()
        if kind == "directory":
            if low in _BAD_DIRS or low.endswith(_BAD_DIR_SUFFIXES):
                why = _BAD_DIRS.get(low, "Python reads package metadata and entry points from it")
                return f"directory name {p[:80]!r} is refused: {why}"
    return None


def extension_refusal(parts: list[str], fmt: str) -> str | None:
    """Why the last of ``parts`` may not be written as ``fmt`` (its extension, a .py name); None if it may."""
    shown = "/".join(parts)[:120]
    name = parts[-1]
    stem, dot, ext = name.rpartition(".")
    ext = "." + ext.casefold() if dot else ""
    if not dot or not stem or ext not in EXTENSIONS:
        return (f"{shown!r}: only files with these extensions are written: {ALLOWED} "
                f"(.py only for format 'py', the session's script)")
    if EXTENSIONS[ext] == "py" and fmt != "py":
        return f"{shown!r}: a .py file is written only for format 'py' (the session's script)"
    if ext == ".py":
        return _py_refusal(stem.casefold(), shown)
    return None


def _py_refusal(stem: str, shown: str) -> str | None:
    hint = "; use a plain name such as 'design.py' or 'bracket_v2.py'"
    if stem in PY_REFUSED:
        return f"{shown!r} is refused: {PY_REFUSED[stem]}{hint}"
    if not _PY_STEM.match(stem):
        return f"{shown!r}: a script's name is ASCII letters, digits, '_' and '-' (up to 64, no other dots){hint}"
    if "test" in stem:
        return f"{shown!r} is refused: test runners (pytest, unittest) collect and run files named like tests{hint}"
    if stem.endswith(("_config", "config")):
        return f"{shown!r} is refused: tools (Jupyter, IPython, Celery) load *config.py files on their own{hint}"
    if stem in module_names():
        return f"{shown!r} is refused: it would shadow the module {stem!r} for scripts next to it{hint}"
    return None

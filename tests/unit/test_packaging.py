"""Every package of the tree ships in the wheel: a package missing from pyproject's list installs
nothing of it, and pip/pipx/uv users then fail at import (the editable checkout never shows it)."""
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_package_is_listed():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for top in ("jail", "launcher")
             for p in (ROOT / top).rglob("__init__.py")}
    assert found <= listed, sorted(found - listed)

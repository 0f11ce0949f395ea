"""Where the launcher's data files are: profiles, systemd unit templates, escape payloads.

In the repository they sit at the top (``profiles/``, ``systemd/``,
``tests/escape/payloads/``, ``tests/profiles/``); the wheel maps them into the
packages ``launcher.data.*`` (see pyproject.toml), read here with
:mod:`importlib.resources`. So a checkout, an editable install and a wheel
installed by pip/pipx/uv all find them, from any working directory.
"""
from __future__ import annotations

import importlib.resources
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
_IN_REPO = {
    "profiles": REPO / "profiles",
    "systemd": REPO / "systemd",
    "payloads": REPO / "tests" / "escape" / "payloads",
    "test_profiles": REPO / "tests" / "profiles",
}


def data_dir(kind: str) -> Path:
    """The directory holding ``kind`` (one of profiles, systemd, payloads, test_profiles)."""
    if kind not in _IN_REPO:
        raise KeyError(kind)
    try:  # launcher is a regular package, so this is a real directory in an installed wheel
        d = Path(str(importlib.resources.files("launcher") / "data" / kind))
        if d.is_dir() and any(d.iterdir()):
            return d
    except (TypeError, ValueError, OSError):
        pass
    return _IN_REPO[kind]

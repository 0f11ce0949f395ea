"""Stand-ins, served to user code in the jail, for modules build123d code imports that cannot work
there (a viewer talking to VS Code over a socket).

Importing this package puts each stand-in into ``sys.modules`` under the real module's name
(``ocp_vscode``), so ``import ocp_vscode`` in the jail gets the stand-in and never a real package,
whether the Python layers are on (the allowlisted ``__import__`` then hands user code a read-only
view of it, when the profile's ``allowed_imports`` lists the name) or off. Only jailed processes
import this package (the runner does); the launcher never does.
"""
from __future__ import annotations

import sys

from jail.cad.shims import ocp_vscode as _ocp_vscode

__all__ = ["SHIMS", "install"]

SHIMS = {"ocp_vscode": _ocp_vscode}


def install() -> None:
    """Serve every stand-in under its real name (replacing a real module of that name, if loaded)."""
    for name, mod in SHIMS.items():
        sys.modules[name] = mod


install()

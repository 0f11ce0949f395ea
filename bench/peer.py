"""The benches' shared set-up for build123d-mcp 0.3.91 (the peer) and for our MCP server.

:func:`ensure_peer` installs the peer from the package registry into its own venv under
``bench/out/peer-venv`` (gitignored); :func:`peer_params` and :func:`ours_params` give the
``mcp`` SDK's stdio parameters for each server, each with a fresh temporary HOME/output dir;
:func:`pct` is the percentile the benches print. Nothing here times or asserts anything.
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
OUT = HERE / "out"
PEER_VENV = OUT / "peer-venv"
PEER_SPEC = "build123d-mcp==0.3.91"

#: the benches' part: an 80x60x10 plate with four holes, ``part``
PLATE = """\
with BuildPart() as plate:
    Box(80, 60, 10)
    with GridLocations(60, 40, 2, 2):
        Hole(radius=4)
part = plate.part
"""


def pct(xs, q):
    xs = sorted(xs)
    if not xs:
        return float("nan")
    k = (len(xs) - 1) * q / 100
    lo, hi = int(k), min(int(k) + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def ensure_peer() -> tuple[Path | None, str]:
    """build123d-mcp 0.3.91 in its own venv under ``bench/out/peer-venv``, from the package registry
    (``pip install build123d-mcp==0.3.91``): its executable, or None and why."""
    exe = PEER_VENV / "bin" / "build123d-mcp"
    if exe.exists():
        return exe, "already installed"
    OUT.mkdir(parents=True, exist_ok=True)
    log = OUT / "peer-install.log"
    with open(log, "w") as f:
        r = subprocess.run([sys.executable, "-m", "venv", str(PEER_VENV)], stdout=f, stderr=subprocess.STDOUT,
                           check=False)
        if r.returncode == 0:
            r = subprocess.run([str(PEER_VENV / "bin" / "pip"), "install", "-q", PEER_SPEC], stdout=f,
                               stderr=subprocess.STDOUT, check=False)
    if r.returncode != 0 or not exe.exists():
        return None, f"pip install {PEER_SPEC} failed (see {log})"
    return exe, "installed now"


def peer_params(exe: Path):
    """The peer's server, with HOME and cwd in a fresh temporary directory."""
    from mcp import StdioServerParameters
    home = tempfile.mkdtemp(prefix="bench-peer-home-")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "LANG": "C.UTF-8"}
    return StdioServerParameters(command=str(exe), args=[], env=env, cwd=home)


def ours_params(profile: str = "default"):
    """Our server (``python -m launcher mcp --embedded``) with a fresh output dir."""
    from mcp import StdioServerParameters
    tmp = tempfile.mkdtemp(prefix="bench-ours-")
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "LC_ALL", "HOME")}
    return StdioServerParameters(command=sys.executable,
                                 args=["-m", "launcher", "mcp", "--embedded", "--profile", profile,
                                       "--output-dir", tmp], env=env, cwd=str(REPO))

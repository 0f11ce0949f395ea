"""The benches' shared set-up for build123d-mcp 0.3.91 (the peer) and for our MCP server.

:func:`ensure_peer` installs the peer from the package registry into its own venv under
``bench/out/peer-venv`` (gitignored); :func:`peer_params` and :func:`ours_params` give the
``mcp`` SDK's stdio parameters for each server, each with a fresh temporary HOME/output dir;
:func:`pct` is the percentile the benches print; :func:`mcp_session` and :func:`timed_call` are the
one timed client loop of the benches that go through the ``mcp`` SDK's stdio client. Nothing here
asserts anything.
"""
from __future__ import annotations

import base64
import contextlib
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.helpers.models import PLATE  # noqa: E402,F401 - the benches' part, the one the tests also build

OUT = HERE / "out"
PEER_VENV = OUT / "peer-venv"
PEER_SPEC = "build123d-mcp==0.3.91"

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


@contextlib.asynccontextmanager
async def mcp_session(params, errlog):
    """An initialized ``mcp`` client session on the stdio server of ``params``."""
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client
    async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as s:
        await s.initialize()
        yield s


async def timed_call(s, name: str, args: dict, notes: dict | None = None) -> float:
    """Seconds one ``tools/call`` took, request to reply; an error reply raises. With ``notes``, the
    size of a returned PNG is kept under ``notes["png"]``."""
    t = time.perf_counter()
    r = await s.call_tool(name, args)
    dt = time.perf_counter() - t
    if r.is_error:
        raise RuntimeError(f"{name} failed: {r.content[0].text[:300] if r.content else r}")
    imgs = [c for c in r.content if c.type == "image"]
    if imgs and notes is not None:
        notes["png"] = f"{len(base64.b64decode(imgs[0].data))} byte PNG"
    return dt

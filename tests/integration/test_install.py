"""Install like a user: a wheel in a fresh venv outside the checkout, used from another directory.

The wheel is built once per module from a copy of the working tree. Each install goes to a new
directory under /tmp (mode 0755: as root, the jail's uid must be able to read the venv), with a
clean environment (no PYTHONPATH, no test profile directory), and is run from a directory that is
not the checkout: so every file it uses comes from the installed package.

* pip: ``--version``, ``demo``, ``doctor``, ``audit`` (a few payloads) and a real MCP stdio session
  (execute, export) through the SDK client;
* pipx and uv (``uv tool install``, ``uvx --from``): installed from the package registry into a
  tools venv; skipped with a printed reason when that is not possible.

Slow (about a minute): it installs build123d and its dependencies into fresh venvs. The three
installs start together once the wheel is built (``installs``: mostly unpacking, on separate venvs
and caches), and each test waits for its own before checking what it installed. pip and pipx
install with ``--no-compile`` (uv never byte-compiles unless asked): byte-compiling the 1 GB of
dependencies (sympy, scipy, ...) cost ~30 of the module's ~190 CPU-seconds, and the launcher does
not depend on it (Python compiles what it imports, in memory where it cannot write).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import anyio
import pytest
from concurrent.futures import Future, ThreadPoolExecutor

from tests.helpers.cli import REPO
from tests.helpers.models import PLATE

pytestmark = pytest.mark.slow

BASE_PY = Path(getattr(sys, "_base_executable", "") or sys.executable)

def clean_env(root: Path, **extra) -> dict:
    env = {"PATH": f"{root / 'bin'}:/usr/local/bin:/usr/bin:/bin", "HOME": str(root / "home"), "LANG": "C.UTF-8"}
    for k in ("PIP_FIND_LINKS", "PIP_CERT", "PIP_DEFAULT_TIMEOUT", "PIP_DISABLE_PIP_VERSION_CHECK", "SSL_CERT_FILE",
              "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy"):
        if k in os.environ:
            env[k] = os.environ[k]
    env.update(extra)
    return env


def run(cmd, *, cwd, env, timeout=900, check=True) -> subprocess.CompletedProcess:
    p = subprocess.run([str(c) for c in cmd], cwd=str(cwd), env=env, capture_output=True, text=True,
                       timeout=timeout)
    if check and p.returncode != 0:
        raise AssertionError(f"{cmd} exited {p.returncode}\nstdout:\n{p.stdout[-4000:]}\nstderr:\n{p.stderr[-4000:]}")
    return p


def copy_tree(dst: Path) -> None:
    """The working tree's files (tracked and untracked, not ignored), without the venv."""
    try:
        files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=REPO, check=True,
                               capture_output=True).stdout.decode().split("\0")
    except (OSError, subprocess.CalledProcessError):
        shutil.copytree(REPO, dst, ignore=shutil.ignore_patterns(".venv", ".git", "build", "*.egg-info",
                                                                 "__pycache__"), dirs_exist_ok=True)
        return
    for f in files:
        if not f or f.startswith(".venv/") or ".egg-info/" in f or not (REPO / f).is_file():
            continue
        (dst / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / f, dst / f)


@pytest.fixture(scope="module")
def built():
    old_umask = os.umask(0o022)
    root = Path(tempfile.mkdtemp(prefix="b123d-install-", dir="/tmp"))
    os.chmod(root, 0o755)
    try:
        src = root / "src"
        src.mkdir()
        copy_tree(src)
        env = clean_env(root)
        p = run([sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "-w", root / "dist", src], cwd=root, env=env)
        out = p.stdout + p.stderr
        for bad in ("SetuptoolsDeprecationWarning", "License classifiers are deprecated", "project.license` as a TOML"):
            assert bad not in out, f"the build warns: {bad}"
        (wheel,) = (root / "dist").glob("build123d_launcher-*.whl")
        elsewhere = root / "elsewhere"
        elsewhere.mkdir()
        (root / "home").mkdir()
        yield {"root": root, "wheel": wheel, "src": src, "cwd": elsewhere}
    finally:
        os.umask(old_umask)
        shutil.rmtree(root, ignore_errors=True)


class Unavailable(Exception):
    """A tool (pipx, uv) cannot be installed from the package registry here: its test is skipped."""


def _tools_venv(built, *packages) -> Path:
    """A venv with ``packages`` from the package registry, or Unavailable (with the reason printed)."""
    root = built["root"]
    venv = root / ("tools-" + "-".join(packages))
    if not (venv / "bin" / "python").exists():
        run([BASE_PY, "-m", "venv", venv], cwd=root, env=clean_env(root))
        p = run([venv / "bin" / "python", "-m", "pip", "install", "-q", *packages], cwd=root, env=clean_env(root),
                check=False)
        if p.returncode != 0:
            reason = f"cannot install {' '.join(packages)} from the package registry: {p.stderr.strip()[-300:]}"
            print(reason)
            raise Unavailable(reason)
    return venv


def _install_pip(built) -> Path:
    """``pip install <wheel>`` into a fresh venv; returns the venv."""
    root = built["root"]
    venv = root / "venv-pip"
    env = clean_env(root)
    run([BASE_PY, "-m", "venv", venv], cwd=root, env=env)
    run([venv / "bin" / "python", "-m", "pip", "install", "-q", "--no-compile", built["wheel"]], cwd=root, env=env)
    return venv


def _pipx_env(root: Path) -> dict:
    return clean_env(root, PIPX_HOME=str(root / "pipx"), PIPX_BIN_DIR=str(root / "pipx-bin"),
                     PIPX_MAN_DIR=str(root / "pipx-man"))


def _install_pipx(built) -> Path:
    """``pipx install <wheel>``; returns the command it put on PATH."""
    root = built["root"]
    tools = _tools_venv(built, "pipx")
    run([tools / "bin" / "pipx", "install", "--python", BASE_PY, "--pip-args=--no-compile", built["wheel"]], cwd=root,
        env=_pipx_env(root))
    return root / "pipx-bin" / "build123d-launcher"


def _uv_env(root: Path) -> dict:
    return clean_env(root, UV_CACHE_DIR=str(root / "uv-cache"), UV_TOOL_DIR=str(root / "uv-tools"),
                     UV_TOOL_BIN_DIR=str(root / "uv-bin"), UV_PYTHON_DOWNLOADS="never")


def _install_uv(built) -> Path:
    """``uv tool install <wheel>``; returns the tools venv (its ``uvx`` is used by the test)."""
    root = built["root"]
    tools = _tools_venv(built, "uv")
    run([tools / "bin" / "uv", "tool", "install", "--python", BASE_PY, built["wheel"]], cwd=root, env=_uv_env(root))
    return tools


@pytest.fixture(scope="module")
def installs(built):
    """The three installs, started together: {"pip"|"pipx"|"uv": Future}."""
    with ThreadPoolExecutor(3) as pool:
        yield {"pip": pool.submit(_install_pip, built), "pipx": pool.submit(_install_pipx, built),
               "uv": pool.submit(_install_uv, built)}


def installed(future: Future):
    """What the install returned (its own error if it failed; a skip where the tool is unavailable)."""
    try:
        return future.result(timeout=1800)
    except Unavailable as e:
        pytest.skip(str(e))


def check_cli(exe: Path, cwd: Path, env: dict, *, full: bool) -> None:
    from launcher import __version__
    p = run([exe, "--version"], cwd=cwd, env=env)
    assert p.stdout.strip() == f"build123d-launcher {__version__}", p.stdout
    p = run([exe, "demo"], cwd=cwd, env=env, timeout=300)
    assert "plate:" in p.stdout and "An escape attempt (import subprocess) is refused" in p.stdout, p.stdout
    assert "PolicyError" in p.stdout
    if not full:
        return
    p = run([exe, "doctor"], cwd=cwd, env=env, timeout=300)
    assert "verdict: OK" in p.stdout, p.stdout
    assert "site-packages/launcher/data/profiles/default.toml" in p.stdout, p.stdout  # the wheel's own copy
    assert str(REPO) not in p.stdout + p.stderr
    p = run([exe, "audit", "--only", "fr01-open-secret,fr03-etc-shadow,net01-tcp4-connect", "--columns", "all"],
            cwd=cwd, env=env, timeout=600)
    assert "VERDICT: PASS (3 payloads" in p.stdout, p.stdout + p.stderr


def mcp_session(exe: Path, cwd: Path, env: dict) -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    out = cwd / "out"
    params = StdioServerParameters(command=str(exe), args=["mcp", "--embedded", "--output-dir", str(out)],
                                   env=env, cwd=str(cwd))

    async def scenario():
        with open(cwd / "mcp-stderr.log", "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as s:
                    init = await s.initialize()
                    assert init.server_info.name == "build123d-launcher"
                    r = await s.call_tool("execute", {"code": PLATE})
                    assert not r.is_error and "part: Part" in r.content[0].text, r
                    r = await s.call_tool("export", {"object_name": "part", "filename": "plate.step"})
                    assert not r.is_error, r
                    r = await s.call_tool("export", {"object_name": "part", "filename": "/etc/plate.step"})
                    assert r.is_error, r

    anyio.run(scenario)
    data = (out / "plate.step").read_bytes()
    assert data.startswith(b"ISO-10303-21"), data[:40]


def test_pip_install_wheel_in_a_fresh_venv(built, installs):
    root, cwd = built["root"], built["cwd"]
    venv = installed(installs["pip"])
    env = clean_env(root)
    site = run([venv / "bin" / "python", "-c", "import launcher, jail; print(launcher.__file__, jail.__file__)"],
               cwd=cwd, env=env).stdout
    assert str(venv) in site and str(REPO) not in site, site  # not the checkout
    exe = venv / "bin" / "build123d-launcher"
    check_cli(exe, cwd, env, full=True)
    mcp_session(exe, cwd, env)


def test_pipx_install(built, installs):
    exe = installed(installs["pipx"])
    check_cli(exe, built["cwd"], _pipx_env(built["root"]), full=False)


def test_uv_tool_install_and_uvx(built, installs):
    root, cwd = built["root"], built["cwd"]
    tools = installed(installs["uv"])
    env = _uv_env(root)
    check_cli(root / "uv-bin" / "build123d-launcher", cwd, env, full=False)
    # uvx --from <source directory>: builds the package itself, runs it once
    p = run([tools / "bin" / "uvx", "--python", BASE_PY, "--from", built["src"], "build123d-launcher", "demo"],
            cwd=cwd, env=env, timeout=600)
    assert "An escape attempt (import subprocess) is refused" in p.stdout, p.stdout

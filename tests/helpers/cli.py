"""The launcher as the tests run it: the repository, the test profiles, ``python -m launcher``.

Test profiles are found by name (``sessions_fast``, ``dev_noseccomp`` ...) because
``BUILD123D_LAUNCHER_PROFILES`` starts with ``<repo>/tests/profiles`` in the test process
(tests/conftest.py sets it) and in every environment :func:`launcher_env` builds.
``B123D_TEST_PROFILE=<name or .toml>`` overrides the profile the tests use (default
``sessions_fast``: the default jail with short limits).
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TEST_PROFILES = REPO / "tests" / "profiles"
TEST_PROFILE = os.environ.get("B123D_TEST_PROFILE", "sessions_fast")


def profile_search_path() -> str:
    """``BUILD123D_LAUNCHER_PROFILES`` with the test profiles first (each directory once)."""
    rest = [d for d in os.environ.get("BUILD123D_LAUNCHER_PROFILES", "").split(os.pathsep)
            if d and d != str(TEST_PROFILES)]
    return os.pathsep.join([str(TEST_PROFILES), *rest])


def launcher_env(**extra: str) -> dict[str, str]:
    """Environment for ``python -m launcher ...`` subprocesses."""
    env = dict(os.environ)
    env["BUILD123D_LAUNCHER_PROFILES"] = profile_search_path()
    env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env.pop("BUILD123D_LAUNCHER_PROFILE", None)  # tests always pass --profile explicitly
    env.update(extra)
    return env


def run_cli(*args: str, timeout: float = 120, cwd: str | os.PathLike | None = None,
            env: dict | None = None, input: str | None = None, prefix: list[str] | None = None
            ) -> subprocess.CompletedProcess:
    """Run ``[prefix...] sys.executable -m launcher ARGS`` and return the completed process (text)."""
    cmd = list(prefix or []) + [sys.executable, "-m", "launcher", *args]
    return subprocess.run(cmd, cwd=str(cwd or REPO), env=env or launcher_env(), input=input,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)

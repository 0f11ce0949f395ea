"""Shared fixtures and /proc helpers for the whole test tree.

* ``BUILD123D_LAUNCHER_PROFILES`` is set to ``<repo>/tests/profiles`` for this
  process and every subprocess the tests start, so test profiles are found by
  name (``sessions_fast``, ``dev_noseccomp`` ...).
* ``launcher`` is one module-scoped :class:`launcher.core.Launcher` on the
  ``sessions_fast`` profile (starting a zygote costs seconds; a session costs
  ~0.1 s, so tests take fresh sessions from the shared launcher).
* ``TEST_PROFILE`` can be overridden with ``B123D_TEST_PROFILE=<name or .toml>``
  (e.g. to try the tests against a profile under development); the default is
  ``sessions_fast``, i.e. exactly the default jail with short limits.

Test modules import the helpers as ``from testlib import ...``: this file
registers itself under that unique name (several conftest.py files exist, so
``import conftest`` would pick whichever was loaded last).

Helpers read /proc directly (not ``launcher.contain.procs``), so a bug there cannot
hide a bug the tests look for.
"""
from __future__ import annotations

import os

# The test process itself must stay single-threaded, like the zygote: several tests fork it
# (tests/unit/jailchild.py applies the jail's layers in a forked child), and in-process tests
# (render, measure, import) run OCCT geometry and numpy. A BLAS or OCCT pool thread alive at a
# fork leaves the child waiting forever on a lock that thread held (seen: the seccomp layer
# test's child hung in OSD_ThreadPool::Init after the render tests had started OCCT's pool).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_var] = "1"
try:
    from OCP.OSD import OSD_ThreadPool as _Pool
    _Pool.DefaultPool_s(1)
    from OCP.BOPAlgo import BOPAlgo_Options as _BOP
    _BOP.SetParallelMode_s(False)
except ImportError:  # pragma: no cover - OCP is a dependency; keep conftest importable anyway
    pass
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
TEST_PROFILES = REPO / "tests" / "profiles"
TEST_PROFILE = os.environ.get("B123D_TEST_PROFILE", "sessions_fast")

if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
sys.modules.setdefault("testlib", sys.modules[__name__])

# one search path for this process and (through os.environ) every child
_dirs = [str(TEST_PROFILES)] + [d for d in os.environ.get("BUILD123D_LAUNCHER_PROFILES", "").split(os.pathsep)
                                if d and d != str(TEST_PROFILES)]
os.environ["BUILD123D_LAUNCHER_PROFILES"] = os.pathsep.join(_dirs)


# ----------------------------------------------------------------- environment
def launcher_env(**extra: str) -> dict[str, str]:
    """Environment for ``python -m launcher ...`` subprocesses."""
    env = dict(os.environ)
    env["BUILD123D_LAUNCHER_PROFILES"] = os.environ["BUILD123D_LAUNCHER_PROFILES"]
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


# ----------------------------------------------------------------- /proc helpers
def proc_stat(pid: int) -> tuple[str, int, int] | None:
    """(state, ppid, starttime) of ``pid``, or None if it does not exist."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            data = f.read()
    except OSError:
        return None
    rest = data[data.rfind(")") + 2:].split()
    return rest[0], int(rest[1]), int(rest[19])


def alive(pid: int, starttime: int | None = None) -> bool:
    """True if ``pid`` exists, is not a zombie and (if given) is the same process (start time)."""
    st = proc_stat(pid)
    if st is None or st[0] in ("Z", "X"):
        return False
    return starttime is None or st[2] == starttime


# the launcher's own /proc walkers: the tests check the tree the launcher sees
from launcher.contain.procs import children_of as children, descendants  # noqa: E402,F401


def live_descendants(pid: int) -> list[int]:
    return [p for p in descendants(pid) if alive(p)]


def zombie_children(pid: int | None = None) -> list[int]:
    pid = pid or os.getpid()
    return [c for c in children(pid) if (proc_stat(c) or ("?",))[0] == "Z"]


def fd_count(pid: int | None = None) -> int:
    return len(os.listdir(f"/proc/{pid or 'self'}/fd"))


def task_count(pid: int | None = None) -> int:
    return len(os.listdir(f"/proc/{pid or 'self'}/task"))


def proc_status(pid: int, key: str) -> str | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        return None
    return None


def wait_until(pred, timeout: float = 5.0, interval: float = 0.01):
    """Poll ``pred()`` until it returns a truthy value (returned) or ``timeout`` passes (None)."""
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() > deadline:
            return None
        time.sleep(interval)


def next_pid(session, timeout: float = 10.0) -> int:
    """Host pid of the process the session's next ``execute`` goes to (waits for its ``ready``)."""
    with session.lock:
        session.ensure_next(timeout)
        return session.next.pid


def settled_tree(root: int, expect_min: int, timeout: float = 5.0, quiet: float = 0.05) -> list[int]:
    """Live descendants of ``root`` once there are at least ``expect_min`` and the set has not
    changed for ``quiet`` seconds (or ``timeout`` passed: then the last sample)."""
    last: list[int] = []
    since = time.monotonic()

    def stable():
        nonlocal last, since
        now = sorted(live_descendants(root))
        if now != last:
            last, since = now, time.monotonic()
            return False
        return len(now) >= expect_min and time.monotonic() - since >= quiet

    wait_until(stable, timeout, 0.01)
    return last


# ----------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def launcher(tmp_path_factory):
    """One launcher (one zygote) per test module, on ``TEST_PROFILE``."""
    from launcher.core import Launcher
    L = Launcher(TEST_PROFILE, output_dir=tmp_path_factory.mktemp("out"))
    try:
        yield L
    finally:
        L.close()


@pytest.fixture
def session(launcher):
    """A fresh session of the module's launcher, closed after the test."""
    s = launcher.new_session()
    try:
        yield s
    finally:
        launcher.close_session(s)


@pytest.fixture
def new_session(launcher):
    """Factory for extra sessions, all closed after the test."""
    made = []

    def make():
        s = launcher.new_session()
        made.append(s)
        return s

    yield make
    for s in made:
        launcher.close_session(s)

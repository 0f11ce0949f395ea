"""Fixtures for the whole test tree (helpers live in tests/helpers/).

* ``launcher``: one module-scoped :class:`launcher.core.Launcher` (one zygote) on ``TEST_PROFILE``
  (starting a zygote costs seconds, a session ~0.1 s); ``session`` / ``new_session``: fresh
  sessions of it, closed after the test.
* The test process stays single-threaded, like the zygote: tests fork it (the layer harness, the
  /proc tests), and a BLAS or OCCT pool thread alive at a fork can leave the child waiting forever
  on a lock that thread held (seen: the seccomp layer test's child hung in OSD_ThreadPool::Init
  after the render tests had started OCCT's pool).
"""
from __future__ import annotations

import os

import pytest

from tests.helpers.cli import TEST_PROFILE, profile_search_path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_var] = "1"
try:
    from OCP.OSD import OSD_ThreadPool as _Pool
    _Pool.DefaultPool_s(1)
    from OCP.BOPAlgo import BOPAlgo_Options as _BOP
    _BOP.SetParallelMode_s(False)
except ImportError:  # pragma: no cover - OCP is a dependency; keep conftest importable anyway
    pass
# one search path for this process and (through os.environ) every child
os.environ["BUILD123D_LAUNCHER_PROFILES"] = profile_search_path()


# ----------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def launcher(tmp_path_factory):
    """One launcher (one zygote) per test module, on ``TEST_PROFILE``."""
    from launcher.core import Launcher  # here, not at import: the pure tier never loads the session code
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

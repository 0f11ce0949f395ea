"""Fixtures and tier markers for the whole test tree (helpers live in tests/helpers/).

* ``launcher``: one module-scoped :class:`launcher.core.Launcher` on ``TEST_PROFILE``, on the test
  process' shared zygote (tests/helpers/zygotes.py);
  ``session`` / ``new_session``: fresh sessions of it, closed after the test.
* Markers (pyproject.toml lists them): ``jail``, ``root``, ``unprivileged``, ``systemd``, ``slow``
  and ``soak`` are given at collection by :mod:`tests.helpers.tiers`. A test without ``jail`` that
  starts a zygote or the launcher's CLI fails (an audit hook refuses the spawn). ``soak`` tests
  are skipped unless ``--soak`` (``make soak``).
* The test process runs no native threads (Python ones only: pytest-xdist's I/O thread under
  ``make test``, the launcher's): tests fork it (the layer harness, the /proc tests), and a BLAS or
  OCCT pool thread alive at a fork can leave the child waiting forever on a lock that thread held. OCCT's pool is set to one thread the moment OCP is first imported,
  so a run that never needs OCP (``make test-fast``'s pure modules) never imports it.
"""
from __future__ import annotations

import importlib.abc
import importlib.util
import os
import sys

import pytest

from tests.helpers import tiers, zygotes
from tests.helpers.cli import REPO, TEST_PROFILE, profile_search_path

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS"):
    os.environ[_var] = "1"
# one search path for this process and (through os.environ) every child
os.environ["BUILD123D_LAUNCHER_PROFILES"] = profile_search_path()


# ----------------------------------------------------------------- OCCT: one thread, from its first import
def _one_occt_thread() -> None:
    from OCP.BOPAlgo import BOPAlgo_Options
    from OCP.OSD import OSD_ThreadPool
    OSD_ThreadPool.DefaultPool_s(1)
    BOPAlgo_Options.SetParallelMode_s(False)


class _ThenOneThread(importlib.abc.Loader):
    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        _one_occt_thread()


class _OcctWatch(importlib.abc.MetaPathFinder):
    """Finds nothing itself: wraps the loader of the first ``import OCP`` so that the pool is set
    before any caller (build123d included) gets the module; then leaves sys.meta_path."""

    def find_spec(self, name, path, target=None):
        if name != "OCP":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None:
            spec.loader = _ThenOneThread(spec.loader)
        return spec


if "OCP" in sys.modules:  # pragma: no cover - a plugin imported it first
    _one_occt_thread()
else:
    sys.meta_path.insert(0, _OcctWatch())


# ----------------------------------------------------------------- tiers
sys.addaudithook(tiers.audit)


def pytest_addoption(parser):
    parser.addoption("--soak", action="store_true", default=False,
                     help="run the soak variants and the long counts of tests/faults (100 fault rounds, "
                          "10k executes, 100k fuzz cases)")


def _relative(item) -> str:
    try:
        path = item.path.resolve().relative_to(REPO).as_posix()
    except ValueError:
        return item.nodeid
    _, sep, rest = item.nodeid.partition("::")
    return path + sep + rest


def pytest_collection_modifyitems(config, items):
    soak = config.getoption("--soak")
    collected: dict[str, dict] = {}
    for item in items:
        module = getattr(item, "module", None)
        names = vars(module) if module is not None else {}
        nodeid = _relative(item)
        collected.setdefault(nodeid.partition("::")[0], names)
        for name in sorted(tiers.markers_for(nodeid, item.fixturenames, names)):
            item.add_marker(getattr(pytest.mark, name))
        if item.get_closest_marker("soak") is not None and not soak:
            item.add_marker(pytest.mark.skip(reason="soak variant: runs with --soak (make soak)"))
    existing = [p.relative_to(REPO).as_posix() for p in (REPO / "tests").rglob("test_*.py")]
    stale = tiers.stale_keys(collected, existing)
    if stale:
        raise pytest.UsageError(f"tests/helpers/tiers.py EXPLICIT names tests that do not exist: {stale}")


def pytest_sessionfinish(session, exitstatus):
    zygotes.close_all()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    tiers.guard(item.get_closest_marker("jail") is None)
    try:
        yield
    finally:
        tiers.guard(False)


# ----------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def launcher(tmp_path_factory):
    """One launcher per test module, on ``TEST_PROFILE``, on the process' shared zygote."""
    from launcher.core import Launcher  # here, not at import: the pure tier never loads the session code
    L = Launcher(TEST_PROFILE, output_dir=tmp_path_factory.mktemp("out"), zygote=zygotes.shared(TEST_PROFILE))
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

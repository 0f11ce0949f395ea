"""Fixtures of the reliability tests (tests/faults); helpers are in tests/helpers/faults.py.

``pytest tests/faults`` is the normal, quick run; ``pytest tests/faults --soak``
(``make soak``) runs the same tests with the large round/case counts.
Every figure a test prints is informational: nothing here asserts on time.
"""
from __future__ import annotations

import pytest

from launcher.core import Launcher
from tests.helpers.faults import profile_path


def pytest_addoption(parser):
    parser.addoption("--soak", action="store_true", default=False,
                     help="reliability tests: run the long soak counts (100 fault rounds, 10k executes, "
                          "100k fuzz cases) instead of the quick ones")


def is_soak(config) -> bool:
    try:
        return bool(config.getoption("--soak"))
    except ValueError:  # conftest not loaded as an initial conftest (e.g. `pytest tests`)
        return False


@pytest.fixture(scope="session")
def soak(request) -> bool:
    return is_soak(request.config)


@pytest.fixture(scope="module")
def faults_launcher(tmp_path_factory):
    with Launcher(profile_path("faults"), output_dir=tmp_path_factory.mktemp("out")) as L:
        yield L

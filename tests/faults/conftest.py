"""Fixtures of the reliability tests (tests/faults); helpers are in tests/helpers/faults.py.

``pytest tests/faults`` is the normal, quick run; ``--soak`` (``make soak``) runs the same tests
with the large round/case counts and the soak variants. Every figure a test prints is
informational: nothing here asserts on time.
"""
from __future__ import annotations

import pytest

from launcher.core import Launcher
from tests.helpers import zygotes
from tests.helpers.faults import profile_path


@pytest.fixture(scope="session")
def soak(request) -> bool:
    return bool(request.config.getoption("--soak"))


@pytest.fixture(scope="module")
def faults_launcher(tmp_path_factory):
    prof = profile_path("faults")
    with Launcher(prof, output_dir=tmp_path_factory.mktemp("out"), zygote=zygotes.shared(prof)) as L:
        yield L

"""The production code has no undefined name, unused import or shadowed definition (pyflakes rules).

A module split can leave a name behind (a `signal` call without `import signal` in a path the tests
reach only in a rare race); ruff's ``F`` rules find such mistakes without running the code.
"""
from __future__ import annotations

import subprocess
import sys

from tests.helpers.cli import REPO

CHECKED = ["launcher", "jail", "bench", "docs/tables.py", ".ci"]


def test_pyflakes_rules_hold_on_the_production_code():
    r = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--select", "F", "--output-format",
                        "concise", *CHECKED], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert "No module named ruff" not in r.stderr, "ruff is a test dependency: pip install -e '.[test]'"
    assert r.returncode == 0, r.stdout + r.stderr

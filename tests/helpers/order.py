"""The order test modules start in: the longest first, so two workers finish together.

``make test`` hands whole modules to its workers (pytest-xdist ``--dist loadfile``) in collection order
(``--no-loadscope-reorder``: xdist's own reorder starts the modules with the most tests first, which
left the longest ones, the escape matrix and the installs with a few tests each, to the end, one
worker busy for minutes while the other was done). Longest-processing-time first: the modules below,
in this order, then every other module in its usual order. The times (total seconds, junit, a 2-core
VM, stop 36) only rank them; a module missing from the list only starts later.
"""
from __future__ import annotations

LONGEST_FIRST = (
    "tests/integration/test_install.py",            # 231 s: three installs into fresh venvs
    "tests/escape/test_matrix.py",                  # 186 s: every payload in every required column
    "tests/faults/test_faults_containment.py",      # 100 s
    "tests/faults/test_faults_session_bounds.py",   # 91 s
    "tests/faults/test_faults_human_files.py",      # 89 s
    "tests/integration/test_sessions.py",           # 81 s
    "tests/faults/test_faults_hostile_replies.py",  # 71 s
    "tests/integration/test_cli.py",                # 69 s
    "tests/faults/test_faults_inputs.py",           # 68 s
    "tests/faults/test_faults_daemon_slots.py",     # 57 s
    "tests/faults/test_faults_resources.py",        # 57 s
    "tests/faults/test_faults_load.py",             # 53 s
    "tests/integration/test_exports.py",            # 51 s
    "tests/faults/test_faults_render.py",           # 49 s
)


def longest_first(items, path_of) -> list:
    """``items`` with the modules of ``LONGEST_FIRST`` first, in that order; a module's own tests
    keep their order (its module-scoped fixtures are made once)."""
    rank = {m: i for i, m in enumerate(LONGEST_FIRST)}
    return sorted(items, key=lambda it: rank.get(path_of(it), len(rank)))  # stable: the rest as collected


def stale(existing) -> list[str]:
    """Modules listed that do not exist (renamed or removed): the list must not rot unseen."""
    return [m for m in LONGEST_FIRST if m not in set(existing)]

"""The audit's launcher-fds canary (launcher/selftest/audit/checks.py): fds a call left open fire
it, fds another launcher thread holds for a moment do not (stop 49's CI: one look caught three on a
payload the AST policy had refused, and the matrix read a false ESCAPED)."""
from __future__ import annotations

import os
import threading
import time

from launcher.selftest.audit.checks import kept_fds, path_fds


def _open(n: int) -> list[int]:
    return [os.open(os.devnull, os.O_RDONLY) for _ in range(n)]


def test_fds_held_for_a_moment_do_not_count():
    before = path_fds()
    fds = _open(4)
    closer = threading.Timer(0.1, lambda: [os.close(fd) for fd in fds])
    closer.start()
    try:
        more, _ = kept_fds(before, time.monotonic() + 10.0)  # looks again until they are closed
    finally:
        closer.join()
    assert more < 3


def test_fds_kept_count_and_are_named():
    before = path_fds()
    fds = _open(3)
    try:
        more, paths = kept_fds(before, time.monotonic() + 0.2)
    finally:
        for fd in fds:
            os.close(fd)
    assert more >= 3 and os.devnull in paths


def test_no_first_look_no_finding():
    assert kept_fds(None, time.monotonic() + 1.0) == (0, [])

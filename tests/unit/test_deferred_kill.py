"""launcher/contain/deferred_kill.py: stopped at once, killed a moment later, through a pidfd of its own.

Real child processes (``sleep``), no jail: the process must be stopped (state T) soon after
``later`` returns and before its delay ends, dead within a deadline after it, and the caller's own pidfd may be
closed meanwhile without the kill going astray.
"""
from __future__ import annotations

import os
import subprocess

from launcher.contain.deferred_kill import REAPER, _Reaper
from tests.helpers.proc import proc_stat, wait_until


def _child():
    return subprocess.Popen(["sleep", "1000"])


def test_stopped_at_once_then_killed():
    p = _child()
    fd = os.pidfd_open(p.pid)
    try:
        assert REAPER.later(fd, 3.0)
        # SIGSTOP was sent before later() returned; it takes effect once the process is scheduled
        # (at once on an idle host). The kill comes 3 s later: seen stopped first, then killed.
        assert wait_until(lambda: proc_stat(p.pid)[0] in ("T", "t"), 2.5), proc_stat(p.pid)
        assert p.poll() is None  # not killed yet
        assert wait_until(lambda: p.poll() is not None, 10.0), "not killed after its delay"
        assert p.returncode == -9
    finally:
        os.close(fd)
        p.kill()
        p.wait()


def test_the_callers_pidfd_may_close_first():
    """The reaper kills through a duplicate: the caller closing (or reusing) its fd changes nothing."""
    p, other = _child(), _child()
    fd = os.pidfd_open(p.pid)
    try:
        assert REAPER.later(fd, 0.2)
        os.close(fd)
        fd2 = os.pidfd_open(other.pid)  # likely the very fd number just closed
        try:
            assert wait_until(lambda: p.poll() is not None, 10.0)
            assert other.poll() is None, "the kill reached another process"
        finally:
            os.close(fd2)
    finally:
        for c in (p, other):
            c.kill()
            c.wait()


def test_a_process_already_gone_is_refused():
    p = _child()
    fd = os.pidfd_open(p.pid)
    p.kill()
    p.wait()
    try:
        assert REAPER.later(fd) is False  # the caller kills (nothing) and goes on
        assert REAPER.later(-1) is False
    finally:
        os.close(fd)


def test_flush_kills_what_waits_and_the_thread_ends_when_idle():
    r = _Reaper()
    kids = [_child() for _ in range(3)]
    fds = [os.pidfd_open(k.pid) for k in kids]
    try:
        for fd in fds:
            assert r.later(fd, 60.0)
        assert r.pending() == 3
        r.flush()
        assert r.pending() == 0
        assert wait_until(lambda: all(k.poll() is not None for k in kids), 10.0)
        assert wait_until(lambda: r._thread is None, 10.0), "the thread outlived its work"
    finally:
        for fd in fds:
            os.close(fd)
        for k in kids:
            k.kill()
            k.wait()

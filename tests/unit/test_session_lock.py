"""launcher/session/lock.py: the work a successful call leaves runs before anything else gets the session.

Plain threads, no jail: deferred work runs exactly once, at the first acquisition after it was handed
over (re-entrant ones included) or by the finisher thread soon after; a non-blocking acquisition (the
watchdog's) is refused while work is pending and never runs it; ``drop_pending`` (close) forgets it;
work that raises leaves the lock usable.
"""
from __future__ import annotations

import threading

import pytest

from launcher.session import lock as lock_mod
from launcher.session.lock import SessionLock
from tests.helpers.proc import wait_until


@pytest.fixture
def no_finisher(monkeypatch):
    """Only acquisitions run the work (the finisher thread is not asked)."""
    monkeypatch.setattr(lock_mod.FINISHER, "soon", lambda lock, delay=0.0: None)


def test_the_next_acquisition_runs_the_work_once_before_its_holder(no_finisher):
    lk, ran = SessionLock(), []
    with lk:
        lk.defer(lambda: ran.append("promote"))
        assert ran == []  # not while the call that deferred it still holds the lock
    with lk:
        ran.append("next call")
    with lk:
        pass
    assert ran == ["promote", "next call"]


def test_another_thread_sees_the_work_done_first(no_finisher):
    lk, seen = SessionLock(), []
    state = {"head": "old"}
    with lk:
        lk.defer(lambda: state.update(head="new"))

    def reader():
        with lk:
            seen.append(state["head"])

    t = threading.Thread(target=reader)
    t.start()
    t.join(10)
    assert seen == ["new"]


def test_a_reentrant_acquisition_runs_it(no_finisher):
    lk, ran = SessionLock(), []
    with lk:
        lk.defer(lambda: ran.append(1))
        with lk:  # e.g. the execute tool holds the lock around execute, then asks for a picture
            assert ran == [1]


def test_the_watchdog_never_runs_it(no_finisher):
    lk, ran = SessionLock(), []
    with lk:
        lk.defer(lambda: ran.append(1))
    assert lk.acquire(blocking=False) is False  # refused while work is pending
    assert ran == [] and lk.pending()
    lk.settle()  # a reader of the roles (Session.head) runs it
    assert ran == [1] and not lk.pending()
    assert lk.acquire(blocking=False) is True
    lk.release()


def test_close_drops_it(no_finisher):
    lk, ran = SessionLock(), []
    with lk:
        lk.defer(lambda: ran.append(1))
    assert lk.acquire(finish=False)
    lk.drop_pending()
    lk.release()
    with lk:
        pass
    assert ran == []


def test_work_deferred_twice_runs_in_order(no_finisher):
    lk, ran = SessionLock(), []
    with lk:
        lk.defer(lambda: ran.append(1))
        lk.defer(lambda: ran.append(2))  # the first runs before the second is held
    lk.settle()
    assert ran == [1, 2]


def test_work_that_raises_leaves_the_lock_usable(no_finisher, caplog):
    lk = SessionLock()
    with lk:
        lk.defer(lambda: 1 / 0)
    with lk:
        pass
    assert "the work after a call failed" in caplog.text
    assert lk.acquire(blocking=False)
    lk.release()


def test_the_finisher_runs_it_without_any_caller():
    lk, ran = SessionLock(), []
    with lk:
        lk.defer(lambda: ran.append(threading.current_thread().name))
    assert wait_until(lambda: ran, 5.0), "the finisher thread never ran the work"
    assert ran == ["after-call"] and not lk.pending()


def test_one_session_s_long_call_does_not_hold_up_another_s_work():
    """The finisher waits a moment for a held lock, then serves the others: session A's call holds
    its lock (with A's work pending) for 3 s; B's work must not wait for that."""
    a, b, ran = SessionLock(), SessionLock(), []
    held, release = threading.Event(), threading.Event()

    def long_call():
        with a:
            a.defer(lambda: ran.append("a"))
            held.set()
            release.wait(3.0)

    t = threading.Thread(target=long_call)
    t.start()
    try:
        assert held.wait(5.0)
        with b:
            b.defer(lambda: ran.append("b"))
        assert wait_until(lambda: "b" in ran, 2.0), "B's work waited for A's call"
        assert "a" not in ran
    finally:
        release.set()
        t.join(10)
    assert wait_until(lambda: "a" in ran, 5.0), "A's work never ran once its lock was free"

"""The session lock, and the work a successful call leaves to do after its reply (decision 0028).

A successful ``execute`` replies first and promotes afterwards: its next becomes the head, the old
head is retired, strays are swept, and the new head's next is taken, all after the client has its
reply (``Calls.execute`` hands that work to ``defer``). It is done by whoever takes the lock next:
the launcher's finisher thread a moment after the reply (``FINISH_AFTER_S``), or the following call
or read-only tool, whichever comes first, before anything else it does. So no call, snapshot or
report ever sees a session between a reply and its promotion; only the time moved, off the reply's
path into the client's think time.

Blocks: nothing by itself. Keeps: every acquisition (re-entrant ones included) runs the pending
work first; a non-blocking acquisition (the watchdog's, between calls) is refused while work is
pending, so the watchdog never does a session's promotion; ``close`` may skip it (``finish=False``).
"""
from __future__ import annotations

import logging
import threading

from launcher.due_queue import DueQueue

log = logging.getLogger("build123d_launcher.session")

FINISH_AFTER_S = 0.005  # the reply has left (it takes a millisecond or two) before the finisher competes for the GIL
RETRY_S = 0.05  # the finisher waits this long for a held lock, then serves the others and comes back


class SessionLock:
    """A re-entrant lock whose acquisition first runs the work a call deferred (``defer``)."""

    def __init__(self):
        self._lock = threading.RLock()
        self._after = None  # the deferred work, a callable (set under the lock)

    def acquire(self, blocking: bool = True, timeout: float = -1, *, finish: bool = True) -> bool:
        if not self._lock.acquire(blocking, timeout):
            return False
        if finish and self._after is not None:
            if not blocking:  # the watchdog: a call is finishing, it looks again at its next tick
                self._lock.release()
                return False
            self._run_after()
        return True

    def release(self) -> None:
        self._lock.release()

    def __enter__(self):
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()

    def defer(self, work) -> None:
        """With the lock held: ``work()`` runs at the next acquisition (and the finisher makes one
        soon). Work already pending runs first."""
        if self._after is not None:
            self._run_after()
        self._after = work
        FINISHER.soon(self)

    def pending(self) -> bool:
        return self._after is not None

    def settle(self) -> None:
        """Run the pending work now, if any (a reader of the session's roles: tests, reports)."""
        if self._after is not None:
            with self:
                pass

    def drop_pending(self) -> None:
        """With the lock held: forget the pending work (the session is being closed)."""
        self._after = None

    def _run_after(self) -> None:
        work, self._after = self._after, None
        try:
            work()
        except Exception:  # noqa: BLE001 - the next call's own checks report what is left broken
            log.exception("the work after a call failed")


class _Finisher(DueQueue):
    """One daemon thread for the whole launcher: takes each lock handed to ``soon`` a moment later,
    which runs its session's pending work (unless a call took the lock first and ran it). It waits at
    most ``RETRY_S`` for a held lock and looks again later: one session's long call never holds
    up the other sessions' work."""

    name, idle_s = "after-call", 5.0

    def soon(self, lock: SessionLock, delay: float = FINISH_AFTER_S) -> None:
        self.add(lock, delay)

    def flush(self) -> None:
        """Run every session's pending work now, in the calling thread (tests that count what the
        launcher holds: a promotion retires an old head and takes a next)."""
        for lock in self.drain():
            lock.settle()

    def act(self, lock: SessionLock) -> None:
        # never waits for a session's call: its thread ran the work when it took the lock
        if lock.pending() and lock.acquire(timeout=RETRY_S):
            lock.release()
        elif lock.pending():  # its holder had not let go yet: again a moment later
            self.soon(lock, RETRY_S)


FINISHER = _Finisher()

"""Kill a process a moment from now: stopped at once, SIGKILLed after ``DELAY_S``.

A head that leaves its role after a successful call holds a whole build123d process. Its teardown
(unmapping it: 10–20 ms of CPU, page and lock traffic in the kernel) used to run beside the reply: the launcher sending it and the client reading it waited for a core,
~4 ms of a warm execute through MCP on two cores. Lowering the dying process's priority did not
help (the cost is in the kernel's unmapping, not in its share of a core); moving the teardown
after the reply did. So the process is SIGSTOPped at once and SIGKILLed ``DELAY_S`` later by one
daemon thread for the whole launcher (or sooner: the session's next call kills it at its start,
``Chain.kill_retired``). Used for the old head only (docs/decisions/0023).

Blocks: nothing by itself. What it must not break: a stopped process can be continued (by the
kernel when another member of its orphaned process group exits, by the watchdog's SIGCONT, by
session code: ``kill -CONT``); an old head then waits for the new head, which lives on, and
forks nothing. The kill goes through a pidfd of its own (a duplicate taken now), so the caller
closing its pidfd, and the number being reused, never send it to another process.
"""
from __future__ import annotations

import heapq
import itertools
import os
import signal
import threading
import time

DELAY_S = 0.05  # after the reply has gone (a reply takes a few milliseconds to leave and be read)


class _Reaper:
    """One thread: SIGKILLs each pidfd handed to ``later`` once its time has come."""

    def __init__(self):
        self._cv = threading.Condition()
        self._due: list[tuple[float, int, int]] = []  # (when, tie-break, pidfd of our own)
        self._seq = itertools.count()
        self._thread: threading.Thread | None = None

    def later(self, pidfd: int, delay: float = DELAY_S) -> bool:
        """SIGSTOP the process of ``pidfd`` now, SIGKILL it after ``delay``; False when it could not
        be stopped (gone, or no fd left for the duplicate): the caller kills it at once."""
        try:
            own = os.dup(pidfd)
        except OSError:
            return False
        try:
            signal.pidfd_send_signal(own, signal.SIGSTOP)
        except OSError:
            os.close(own)
            return False
        with self._cv:
            heapq.heappush(self._due, (time.monotonic() + delay, next(self._seq), own))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, daemon=True, name="deferred-kill")
                self._thread.start()
            self._cv.notify()
        return True

    def flush(self) -> None:
        """Kill every process still waiting now (tests)."""
        with self._cv:
            due, self._due = self._due, []
            for _, _, fd in due:
                _kill(fd)
            self._cv.notify()  # the thread may be waiting for a time that is no longer due

    def pending(self) -> int:
        with self._cv:
            return len(self._due)

    def _run(self) -> None:
        """Until nothing has been due for a second (then the thread ends, like the watchdog's: a
        launcher with no session has no thread of its own)."""
        while True:
            with self._cv:
                if not self._due:
                    self._cv.wait(1.0)
                    if not self._due:
                        self._thread = None
                        return
                    continue
                when, _, fd = self._due[0]
                left = when - time.monotonic()
                if left > 0:
                    self._cv.wait(left)
                    continue
                heapq.heappop(self._due)
                _kill(fd)  # under the lock: once pending() says 0, every kill has been sent


def _kill(fd: int) -> None:
    try:
        signal.pidfd_send_signal(fd, signal.SIGKILL)
    except OSError:
        pass  # gone already
    finally:
        os.close(fd)


REAPER = _Reaper()

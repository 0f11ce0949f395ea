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

import os
import signal

from launcher.due_queue import DueQueue

DELAY_S = 0.05  # after the reply has gone (a reply takes a few milliseconds to leave and be read)


class _Reaper(DueQueue):
    """One thread: SIGKILLs each pidfd handed to ``later`` once its time has come (under the queue's
    lock: once ``pending()`` says 0, every kill has been sent)."""

    name, idle_s, locked = "deferred-kill", 1.0, True

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
        self.add(own, delay)  # a pidfd of our own
        return True

    def flush(self) -> None:
        """Kill every process still waiting now (tests)."""
        with self._cv:
            for fd in self.drain():
                _kill(fd)

    def act(self, fd: int) -> None:
        _kill(fd)


def _kill(fd: int) -> None:
    try:
        signal.pidfd_send_signal(fd, signal.SIGKILL)
    except OSError:
        pass  # gone already
    finally:
        os.close(fd)


REAPER = _Reaper()

"""The bytes of input files the launcher holds at once, bounded for the whole process.

An ``import_file`` holds its file in the launcher's memory from the read until the jail's reply
(the bytes are sent as the request's raw blob). Every session and every daemon client of the
process takes its bytes from one :data:`IMPORTS` budget before reading: a request that does not
fit waits its turn (first come, first served) up to a deadline, then gets :class:`Busy`, with
nothing read and nothing changed. So N concurrent imports cost at most the budget, not N files.

Blocks: concurrency multiplying the launcher's memory through imports. Does not block: the memory
of one import (bounded by ``max_input_bytes``), other tools' replies (launcher/replies, the
protocol's receive budget).
"""
from __future__ import annotations

import itertools
import threading
import time
from contextlib import contextmanager

from launcher.session import SessionError

#: The jail reads one request of at most 64 MiB (jail/wire/protocol.py recv_simple): a file of up
#: to this size travels as the raw blob beside a small JSON request.
WIRE_MAX_INPUT = 63 * 1024 * 1024
#: Bytes of input files held at once by the whole launcher process: two files at the default
#: 32 MiB cap, one at the wire's maximum.
IMPORT_BYTES_IN_FLIGHT = 64 * 1024 * 1024


class Busy(SessionError):
    """No room in the budget before the deadline; the message says what to do."""


class ByteBudget:
    """At most ``limit`` bytes held at once; waiters served in arrival order."""

    def __init__(self, limit: int):
        self.limit = limit
        self.held = 0
        self.peak = 0
        self._cond = threading.Condition()
        self._tickets = itertools.count()
        self._queue: list[int] = []   # tickets waiting, oldest first

    @contextmanager
    def hold(self, n: int, wait_s: float):
        """Hold ``n`` bytes for the ``with`` block; Busy if they are not free within ``wait_s``."""
        n = max(0, min(int(n), self.limit))
        deadline = time.monotonic() + wait_s
        with self._cond:
            me = next(self._tickets)
            self._queue.append(me)
            try:
                while self._queue[0] != me or self.held + n > self.limit:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise Busy(f"the launcher is already holding {self.held} bytes of files being imported "
                                   f"(its limit for all sessions together is {self.limit}) and no room came free "
                                   f"within {wait_s:g}s; nothing was read and the session is unchanged: "
                                   "try import_file again in a moment")
                    self._cond.wait(left)
            finally:
                self._queue.remove(me)
                self._cond.notify_all()
            self.held += n
            self.peak = max(self.peak, self.held)
        try:
            yield
        finally:
            with self._cond:
                self.held -= n
                self._cond.notify_all()


IMPORTS = ByteBudget(IMPORT_BYTES_IN_FLIGHT)


def wait_s(limits) -> float:
    """How long an import waits for room: one import's time limit (the longest a file can be held)
    and a little more for its hand-over."""
    return float(limits.import_timeout_s) + 5.0

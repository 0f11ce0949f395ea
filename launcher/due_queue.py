"""Things to do at a time, by one daemon thread that exists only while there is something to do.

The launcher defers two kinds of work off a reply's path: a retired head's SIGKILL
(``contain/deferred_kill``) and a session's promotion after a call (``session/lock``). Each is a
:class:`DueQueue`: items added with a delay are handed to ``act`` in time order by one thread, started
on the first ``add`` and ended after ``idle_s`` with nothing queued (a launcher with no session has no
thread of its own).

Blocks: nothing by itself. Keeps: an ``act`` that raises is logged and the thread goes on; with
``locked``, ``act`` runs under the queue's lock, so once ``pending()`` says 0 every item has been
acted on; without, it runs outside it and may ``add`` again (a retry).
"""
from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time

log = logging.getLogger("build123d_launcher.due_queue")


class DueQueue:
    """Subclasses set ``name``, ``idle_s`` and ``locked`` and define ``act(item)``."""

    name = "due"
    idle_s = 1.0     # the thread ends after this long with nothing queued
    locked = False   # act under the queue's lock

    def __init__(self):
        self._cv = threading.Condition()  # over an RLock: a subclass may drain() while holding it
        self._due: list[tuple[float, int, object]] = []  # (when, tie-break, item)
        self._seq = itertools.count()
        self._thread: threading.Thread | None = None

    def act(self, item) -> None:  # pragma: no cover - every subclass defines it
        raise NotImplementedError

    def add(self, item, delay: float) -> None:
        """``act(item)`` in ``delay`` seconds, by the queue's thread (started if it is not running)."""
        with self._cv:
            heapq.heappush(self._due, (time.monotonic() + delay, next(self._seq), item))
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, daemon=True, name=self.name)
                self._thread.start()
            self._cv.notify()

    def drain(self) -> list:
        """Every item still queued, in time order, taken off the queue (for a flush to act on now)."""
        with self._cv:
            due, self._due = self._due, []
            self._cv.notify()  # the thread may be waiting for a time that is no longer due
        return [item for _, _, item in sorted(due, key=lambda d: d[:2])]

    def pending(self) -> int:
        with self._cv:
            return len(self._due)

    def _act(self, item) -> None:
        try:
            self.act(item)
        except Exception:  # noqa: BLE001 - never end the thread
            log.exception("%s: acting on a due item failed", self.name)

    def _run(self) -> None:
        while True:
            with self._cv:
                if not self._due:
                    self._cv.wait(self.idle_s)
                    if not self._due:
                        self._thread = None
                        return
                    continue
                when, _, item = self._due[0]
                left = when - time.monotonic()
                if left > 0:
                    self._cv.wait(left)
                    continue
                heapq.heappop(self._due)
                if self.locked:
                    self._act(item)
                    continue
            self._act(item)

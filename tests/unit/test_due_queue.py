"""launcher/due_queue.py: items acted on in time order by one thread that ends when idle; an act that
raises does not end it; ``drain`` takes what is left."""
from __future__ import annotations

import threading

from launcher.due_queue import DueQueue
from tests.helpers.proc import wait_until


class Recorder(DueQueue):
    name, idle_s = "test-due", 0.2

    def __init__(self):
        super().__init__()
        self.done: list = []
        self.threads: set = set()

    def act(self, item) -> None:
        self.threads.add(threading.current_thread().name)
        if item == "boom":
            raise RuntimeError("an act that fails")
        self.done.append(item)


def test_items_in_time_order_by_one_thread_that_survives_a_failing_act_and_ends_when_idle():
    q = Recorder()
    q.add("late", 0.3)
    q.add("boom", 0.0)
    q.add("early", 0.1)
    assert wait_until(lambda: len(q.done) == 2 or None, 10.0), q.done
    assert q.done == ["early", "late"] and q.threads == {"test-due"} and q.pending() == 0
    assert wait_until(lambda: q._thread is None or None, 10.0), "the thread outlived its work"
    q.add("again", 0.0)  # a new thread for new work
    assert wait_until(lambda: q.done[-1:] == ["again"] or None, 10.0), q.done


def test_drain_takes_what_is_queued_in_time_order_and_nothing_is_acted_on_twice():
    q = Recorder()
    q.add("b", 60.0)
    q.add("a", 30.0)
    assert q.pending() == 2 and q.drain() == ["a", "b"] and q.pending() == 0
    q.add("c", 0.0)
    assert wait_until(lambda: q.done == ["c"] or None, 10.0), q.done
    assert q.done == ["c"]

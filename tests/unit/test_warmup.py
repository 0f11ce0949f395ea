"""An idle next's CAD warm-up (jail/cad/warmup.py), in process: what it runs, what it leaves, its bound.

The warm-up runs build123d, whose classes are the session's: code a call left in them runs here.
These tests patch a method the warm-up reaches and check that a loop there is cut off by the CPU
budget, an exception is swallowed, and the process's CPU limit and SIGXCPU handler come back.
"""
from __future__ import annotations

import math
import resource
import signal
import time

import pytest
from build123d import Box, BuildPart, Mode, Shape

from jail.cad import shape_measure, summary, warmup


def _cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


@pytest.fixture
def patched_cut():
    """Replace ``Shape.cut`` (each ``Hole`` of the warm-up's part cuts with it) for one test."""
    original = Shape.cut

    def patch(fn):
        Shape.cut = fn

    yield patch
    Shape.cut = original


def test_only_a_session_holding_a_shape_or_builder_is_warmed():
    assert not warmup.holds_cad({"n": 1, "s": "text", "parts": [Box(1, 1, 1)]})
    assert warmup.holds_cad({"n": 1, "part": Box(1, 1, 1)})
    assert warmup.holds_cad({"bp": BuildPart()})


def test_looking_for_shapes_runs_no_session_code():
    """A class whose metaclass answers ``==`` and ``__mro__`` itself: neither is asked."""
    calls = []

    class Meta(type):
        def __eq__(cls, other):
            calls.append("eq")
            return True

        __hash__ = type.__hash__

        @property
        def __mro__(cls):
            calls.append("mro")
            return (Box,)

    class Sly(metaclass=Meta):
        pass

    assert not warmup.holds_cad({"x": Sly()})
    assert calls == []


def test_runs_every_step_and_leaves_no_cache_entry():
    local, local_next = dict(shape_measure._LOCAL), dict(shape_measure._LOCAL_NEXT)
    shapes, shapes_next = dict(summary._SHAPE_CACHE), dict(summary._shape_cache_next)
    assert warmup.warm_cad() == len(warmup.STEPS) >= 1
    assert shape_measure._LOCAL == local and shape_measure._LOCAL_NEXT == local_next
    assert summary._SHAPE_CACHE == shapes and summary._shape_cache_next == shapes_next


def test_a_spare_renders_a_part_of_its_own():
    assert warmup.warm_read_only() == len(warmup.READ_ONLY_STEPS) >= 1
    png, meta = warmup._render_view()
    assert png.startswith(b"\x89PNG") and (meta["width"], meta["height"]) == (800, 600)


def test_a_waiting_request_stops_it_before_any_step():
    calls = []
    assert warmup.warm_cad(lambda: calls.append(1) or True) == 0
    assert calls == [1]



def test_a_request_stops_it_between_the_part_s_stages():
    """The part is built and measured in stages: a request that comes meanwhile waits for one stage,
    not for the whole part. The stopped step leaves no builder of its own open and no cache entry."""
    calls = []

    def stop():
        calls.append(1)
        return len(calls) > 2  # no request before the step, nor after its first stage; then one

    local, shapes = dict(shape_measure._LOCAL), dict(summary._SHAPE_CACHE)
    bp = BuildPart()
    bp.__enter__()
    try:
        Box(1, 1, 1)
        assert warmup.warm_cad(stop) == 0
        assert calls == [1, 1, 1]
        Box(2, 2, 2, mode=Mode.ADD)  # the session's builder is still the active one
        assert len(bp.part.solids()) == 1 and abs(bp.part.volume - 8.0) < 1e-9
    finally:
        bp.__exit__(None, None, None)
    assert shape_measure._LOCAL == local and summary._SHAPE_CACHE == shapes

def test_an_open_builder_takes_none_of_its_shapes():
    bp = BuildPart()
    bp.__enter__()
    try:
        Box(1, 1, 1)
        assert warmup.warm_cad() == len(warmup.STEPS)
        assert warmup.warm_read_only() == len(warmup.READ_ONLY_STEPS)
        assert len(bp.part.solids()) == 1 and abs(bp.part.volume - 1.0) < 1e-9
    finally:
        bp.__exit__(None, None, None)


def test_session_code_that_raises_is_swallowed(patched_cut):
    def boom(self, *a, **k):
        raise RuntimeError("patched by the session")

    patched_cut(boom)
    assert warmup.warm_cad() == 0


def test_session_code_that_loops_is_cut_off_by_the_cpu_budget(patched_cut):
    """A loop in a patched method would keep an idle next busy forever, so its request would wait
    for the call's wall-clock limit: the soft RLIMIT_CPU raises SIGXCPU after the budget."""
    spins = []

    def spin(self, *a, **k):
        spins.append(1)
        while True:
            pass

    patched_cut(spin)
    limit_before = resource.getrlimit(resource.RLIMIT_CPU)
    handler_before = signal.getsignal(signal.SIGXCPU)
    c0, t0 = _cpu(), time.monotonic()
    done = warmup.warm_cad()
    used, wall = _cpu() - c0, time.monotonic() - t0
    where = f"steps done {done}, spins {spins}, CPU {c0:.2f} s + {used:.2f} s, wall {wall:.2f} s"
    assert spins == [1], "the patched method was not reached: this test tests nothing; " + where
    assert done == 0, where
    # whole seconds of process CPU, counted from the next whole second: the budget to 1 s more (and the
    # kernel's check granularity)
    assert 0.5 <= used <= warmup.BUDGET_CPU_S + 3, where
    assert resource.getrlimit(resource.RLIMIT_CPU) == limit_before
    assert signal.getsignal(signal.SIGXCPU) == handler_before


def test_no_budget_means_no_warm_up(patched_cut):
    """A CPU limit too close to keep a budget apart (the call's own bound): nothing runs."""
    reached = []
    patched_cut(lambda self, *a, **k: reached.append(1))
    soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
    previous = signal.signal(signal.SIGXCPU, signal.SIG_IGN)  # this test process must not die of it
    try:
        resource.setrlimit(resource.RLIMIT_CPU, (math.ceil(_cpu()) + warmup.BUDGET_CPU_S, hard))
        assert warmup.warm_cad() == 0
    finally:
        resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
        signal.signal(signal.SIGXCPU, previous)
    assert reached == []

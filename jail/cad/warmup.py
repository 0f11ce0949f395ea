"""An idle process's CAD warm-up: typical build123d work, so the next call's first run is not slower.

A freshly forked ``next`` shares every page with its head; the first time a call's code writes a
page (a CPython reference count, an OCCT allocator block, a build123d cache) the kernel copies it.
For a small part that doubled the run (a plate with four holes: 18.6 ms in a fresh fork against
9.2 ms once the process had done similar work). ``warm_cad`` does similar work while the process
waits: a disc with holes on a circle and on a grid, measured as a summary measures. It is not the
bench's part, and none of its shapes outlive it. One small part, not more: the warm-up is drawn from
the session's CPU share (``session_cpus``), like everything the session runs.

A spare (it serves read-only calls) warms with ``warm_read_only`` instead: an 800x600 render of a
small part of its own (about 30 ms of CPU; the next's flange of ~100 ms on top exceeded the session's CPU
share at short think times).

Only a session whose names hold a shape or builder is warmed (``holds_cad``): a session that does no
CAD (a fresh one, the launcher's pre-made ones) would spend the CPU for nothing.

What it keeps apart from the session:
* builders: it runs in a new, empty ``contextvars.Context``, so a builder the session left open
  (``bp.__enter__()`` with no exit) is not the active one and takes none of its shapes;
* the namespace: never written; ``holds_cad`` reads only each value's type and that type's MRO;
* time: it starts only in a next idle for 0.1 s, stops before each step (and between a step's
  stages: the part is built and measured in five) once ``stop()`` says a request is waiting (a
  request that comes meanwhile waits for the stage it is in: a few milliseconds), and is cut
  off after ``BUDGET_CPU_S`` to ``BUDGET_CPU_S`` + 1 s of CPU (``SIGXCPU`` from a lowered soft
  ``RLIMIT_CPU``; ``setitimer`` is not in the seccomp allow list).

What it does not keep apart: build123d's classes and functions are the session's, so code a call
left in them (a patched method, a logging handler) runs here, in the same jailed process, outside a
call's wall-clock limit: under ``BUDGET_CPU_S`` + 1 s of CPU for each idle next, drawn from the
session's CPU share; the budget interrupts Python code only (a native call finishes first; the hard
``RLIMIT_CPU`` and the next call's wall-clock limit still bound it).
"""
from __future__ import annotations

import contextvars
import inspect
import math
import resource
import signal
from collections.abc import Callable

from build123d import (
    Box,
    BuildPart,
    Cylinder,
    GridLocations,
    Hole,
    PolarLocations,
    Shape,
)
from build123d.build_common import Builder

from jail.cad import measure, render, render_premesh, shape_measure


def _part_with_holes():
    """A small part as a session makes one (a disc with holes on a circle and on a grid), then what a
    reply's summary does with it (counts, volume, bounding box, validity): about 28 ms of CPU in a
    fresh fork. A flange that also had a counter-sunk hole and a chamfer cost 102 ms for 1.5 ms more.
    In stages (a generator): a request that comes meanwhile waits for the stage, a few milliseconds,
    not for the whole part (12-20 ms at the p50 of calls 0.14-0.15 s after a reply, bench/RESULTS.md
    stop 46)."""
    with BuildPart() as disc:
        Cylinder(20, 5)
        yield
        with PolarLocations(14, 3):
            Hole(2.5)
        yield
        with GridLocations(8, 8, 2, 1):
            Hole(1)
    yield
    part = disc.part
    shape_measure.local_measures(part)  # counts, volume, box: no cache entry of the summary's
    yield
    measure.is_valid(part.wrapped)  # the summary's validity check


def _render_view():
    """What a read-only ``render`` does on a spare's first call: mesh, shade and encode an 800x600 view."""
    return render.render({"warm": Box(20, 10, 5) - Cylinder(2, 10)}, width=800, height=600)


STEPS: tuple[Callable[[], object], ...] = (_part_with_holes,)        # a next's (it runs the execute)
READ_ONLY_STEPS: tuple[Callable[[], object], ...] = (_render_view,)  # a spare's
BUDGET_CPU_S = 1  # RLIMIT_CPU counts whole seconds: the warm-up gets between this and one second more


class _OverBudget(Exception):
    pass


def _over_budget(signum, frame):
    raise _OverBudget


def _cpu_seconds() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


_MRO = type.__dict__["__mro__"].__get__  # the C getter: no metaclass of the session's is asked


def holds_cad(namespace: dict) -> bool:
    """Whether a top-level name holds a build123d shape or builder: only a session doing CAD is
    warmed for it (the others, like a fresh session's, would spend the CPU for nothing). Reads each
    value's type and that type's MRO only: no user code runs (no ``isinstance``, no ``==``)."""
    for value in list(namespace.values()):
        for cls in _MRO(type(value)):
            if cls is Shape or cls is Builder:
                return True
    return False


def warm_cad(stop: Callable[[], bool] = lambda: False) -> int:
    """A next's warm-up (it runs the execute): ``STEPS``; returns how many steps completed."""
    return _bounded(STEPS, stop, BUDGET_CPU_S)


def warm_read_only(stop: Callable[[], bool] = lambda: False, namespace: dict | None = None) -> int:
    """A spare's warm-up (its calls are read-only: render, measure...): ``READ_ONLY_STEPS``, then,
    given the session's ``namespace``, the default view of its shapes meshed ahead of a ``render``
    (jail/cad/render_premesh.py), in the same budget."""
    steps = READ_ONLY_STEPS
    if namespace is not None:
        steps += (lambda: render_premesh.premesh_default_view(namespace),)
    return _bounded(steps, stop, BUDGET_CPU_S)


def _run_step(step: Callable[[], object], stop: Callable[[], bool]) -> bool:
    """Run one step in a new, empty context; a step that is a generator runs stage by stage, with
    ``stop()`` asked between stages (it is closed when a request waits: its ``with`` blocks exit).
    True when the step ran to its end."""
    ctx = contextvars.Context()
    stages = ctx.run(step)
    if not inspect.isgenerator(stages):
        return True
    try:
        while True:
            try:
                ctx.run(next, stages)
            except StopIteration:
                return True
            if stop():
                return False
    finally:
        ctx.run(stages.close)


def _bounded(steps: tuple[Callable[[], object], ...], stop: Callable[[], bool], budget_cpu_s: int) -> int:
    """Run ``steps`` until done or ``stop()`` is true (checked before each step); returns how many
    completed. Bounded by ``budget_cpu_s`` seconds of this process's CPU: the soft ``RLIMIT_CPU`` is
    lowered for the warm-up, and its ``SIGXCPU`` raises between bytecodes, so session code reached
    through build123d (a patched method, a logging handler) that loops is cut off and the process
    serves its request; the limit is restored after. Without that bound (``prlimit`` or the handler
    refused) there is no warm-up. Never raises."""
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_CPU)
        cap = math.ceil(_cpu_seconds()) + budget_cpu_s  # SIGXCPU once the process's CPU passes it
        if soft != resource.RLIM_INFINITY and soft <= cap:
            return 0  # too close to the call's own CPU bound to keep a budget apart
        previous = signal.signal(signal.SIGXCPU, _over_budget)
    except (ValueError, OSError):
        return 0
    done = 0
    try:
        try:
            resource.setrlimit(resource.RLIMIT_CPU, (cap, hard))
            for step in steps:
                if stop():
                    break
                if _run_step(step, stop):
                    done += 1
        finally:  # a SIGXCPU that comes here is caught below; none comes once the limit is back
            resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))
    except BaseException:  # noqa: BLE001 - _OverBudget, or whatever session code reached here raises
        pass
    try:
        signal.signal(signal.SIGXCPU, previous)
    except (TypeError, ValueError, OSError):
        signal.signal(signal.SIGXCPU, signal.SIG_DFL)
    return done

"""An idle next's CAD warm-up runs the session's build123d, which earlier calls may have patched.

jail/cad/warmup.py builds a small part in a next that has been idle for 0.1 s, so the next call's
first run does not pay the copy-on-write faults. Through build123d it reaches methods that user
code (default profile: plain attribute assignment) can replace. Attack: make one of them loop
forever. Without a bound the idle next would spin until the next call's wall-clock limit killed
it, and every call of the session would time out. Must hold: the warm-up is cut off after its CPU
budget (SIGXCPU from a lowered soft RLIMIT_CPU), the next then serves the call, and the process
used no more than the budget plus the call.
"""
from __future__ import annotations

import os

import pytest

from jail.cad import warmup
from tests.helpers import zygotes
from tests.helpers.faults import profile_path
from tests.helpers.proc import next_pid, spare_pid, wait_until

TICK = os.sysconf("SC_CLK_TCK")

SPIN = """
import build123d
def spin(self, *args, **kwargs):
    while True:
        pass
build123d.Shape.cut = spin  # each Hole of the warm-up's part cuts
n = 41
part = Box(1, 1, 1)  # a session doing CAD: only such a session is warmed
"""


def cpu_s(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime


def test_a_looping_patch_does_not_hold_the_idle_next(faults_launcher):
    s = faults_launcher.new_session()
    try:
        r = s.execute(SPIN)
        assert r["ok"], r
        nxt = next_pid(s)
        # the idle next reached the patched method (else this test tests nothing) ...
        assert wait_until(lambda: (cpu_s(nxt) or 0) >= 0.5, 30), "the warm-up never reached the patch"
        # ... and serves the call once its budget is spent (the faults profile's timeout is 2 s: a
        # loaded host gets more wall time, the bound under test is CPU)
        r = s.execute("print(n)", timeout_s=20)
        assert r["ok"] and r["stdout"] == "41\n", r
        used = cpu_s(nxt)
        assert used is not None and used <= warmup.BUDGET_CPU_S + 2.0, used
    finally:
        faults_launcher.close_session(s)


# the builder's ``part`` loops in any process but the one that ran this call: never in the call or
# its summary, but in an idle spare that looks for the default view to mesh ahead of a render
# (jail/cad/render_premesh.py) — and in the idle next's own warm-up, which builds a BuildPart too
PART_LOOPS_ELSEWHERE = """
import os
import build123d
_part = build123d.BuildPart.part
CALLER = os.getpid()
def looping_part(self):
    if os.getpid() != CALLER:
        while True:
            pass
    return _part.fget(self)
build123d.BuildPart.part = property(looping_part)
with BuildPart() as bp:
    Box(1, 1, 1)
n = 41
"""


@pytest.fixture(scope="module")
def faults_os_launcher(tmp_path_factory):
    with zygotes.on_shared_zygote(profile_path("faults_os_only"), output_dir=tmp_path_factory.mktemp("out")) as L:
        yield L


def _settled_cpu(pid: int, timeout: float) -> float | None:
    """The process's CPU once it stops growing (two reads 0.2 s apart agree), None if it never does."""
    last = [cpu_s(pid)]

    def settled():
        now = cpu_s(pid)
        same = now is not None and now == last[0]
        last[0] = now
        return now if same else None
    return wait_until(settled, timeout, interval=0.2)


def test_a_looping_property_does_not_hold_the_idle_spare(faults_os_launcher):
    """The spare's look at the session's default view reads each builder's ``part``; patched to loop,
    it is cut off by the warm-up's CPU budget and the spare serves a read-only call."""
    s = faults_os_launcher.new_session()
    try:
        r = s.execute(PART_LOOPS_ELSEWHERE)
        assert r["ok"], r
        spare = spare_pid(s, 30)
        assert spare is not None, "no spare was forked by the idle next"
        # its own warm-up (a small part's render) has no builder: CPU past that is the pre-mesh's loop
        assert wait_until(lambda: (cpu_s(spare) or 0) >= 0.5, 30), "the spare's look never reached the patch"
        used = _settled_cpu(spare, 30)  # cut off by the budget: it waits for a request now
        assert used is not None and used <= warmup.BUDGET_CPU_S + 2.0, used
        msg, _ = s.ask({"t": "api", "name": "Box"}, "api", timeout=20)
        assert msg.get("ok") is not False and "Box" in str(msg)[:2000], msg
    finally:
        faults_os_launcher.close_session(s)

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

from jail.cad import warmup
from tests.helpers.proc import next_pid, wait_until

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

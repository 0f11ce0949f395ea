"""The pages a call wrote are copied ahead into the idle next (jail/proc/cow.py, decision 0027), in the
jail: its pagemap scan, ``madvise`` and the carried list work under the real layers. Ground truth is
the kernel's count of minor faults in the session's own process while the plate is built (profile
``faults_os_only``: the code may import ``resource``): a freshly forked next that only did the CAD
warm-up faulted 160-240 times while the code built the plate (~500 in the whole call), one that
copied the last call's pages ahead 20-60."""
from __future__ import annotations

import re

from tests.helpers.faults import launcher_fixture
from tests.helpers.models import PLATE
from tests.helpers.proc import next_pid, spare_pid, wait_until

launcher = launcher_fixture("faults_os_only")  # tests/conftest.py's ``session`` fixture opens its sessions

COUNTED = ("import resource\n_f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt\n" + PLATE
           + "print('FAULTS', resource.getrusage(resource.RUSAGE_SELF).ru_minflt - _f0)\n")


def state_and_faults(pid: int) -> tuple[str, int] | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            rest = f.read().rsplit(")", 1)[1].split()
        return rest[0], int(rest[7])
    except (OSError, ValueError, IndexError):
        return None


def settled(pid: int, timeout: float) -> bool:
    """True once ``pid`` sleeps with a fault count that stopped growing (two reads 0.3 s apart agree):
    its idle work is done. A process the session's CPU guard stopped (state ``T``, over its CPU
    share while the spare and the next warm up) is not settled: it resumes its work when continued."""
    last = [state_and_faults(pid)]

    def same():
        now = state_and_faults(pid)
        agreed = now is not None and now[0] == "S" and now == last[0]
        last[0] = now
        return agreed
    return bool(wait_until(same, timeout, interval=0.3))


def call_after_idle(session) -> int:
    """The plate's faults in a call that comes to an idle next whose warm-up and copies are done."""
    assert spare_pid(session, 30) is not None, "the next never went idle (no spare)"
    assert settled(next_pid(session), 30), "the idle next kept faulting for 30 s"
    r = session.execute(COUNTED)
    assert r["ok"], r
    m = re.search(r"FAULTS (\d+)", r["stdout"])
    assert m, r["stdout"]
    return int(m.group(1))


def test_an_idle_next_copies_the_last_call_s_pages_ahead(session):
    first = call_after_idle(session)  # nothing carried yet: the session's first call
    assert first >= 200, f"the fault count is not what this test assumes ({first} on a first call)"
    later = [call_after_idle(session) for _ in range(3)]
    # without the copies ahead: 160-240 each here (the code alone); with them 20-60 (a call may write a few pages anew)
    assert min(later) <= 100, f"faults after the first call: {later} (first {first})"

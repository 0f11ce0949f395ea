"""The list of pages an idle next copies ahead lives in the session's own memory (jail/proc/cow.py).

After a call, the head's ``cow.carried`` is what its scan found, and every next it forks copies those
pages while idle. Code run by a call can rewrite the scan, the list, or both (profile
``faults_os_only``: no Python layers, ``sys.modules`` is in reach). Attack: hand the next a list
that covers a large untouched mapping of its own and a range that is not mapped at all, so that the
idle next allocates memory for nothing or trips over the hole. Must hold: the next copies at most
``MAX_PAGES`` pages whatever the list says, skips the hole, and serves the next call.
"""
from __future__ import annotations

import re

from jail.proc import cow
from tests.helpers.faults import launcher_fixture
from tests.helpers.proc import next_pid, spare_pid, wait_until

launcher = launcher_fixture("faults_os_only")

HOSTILE = """
import ctypes, mmap, sys
import numpy as np
_cow = sys.modules["jail.proc.cow"]
_big = mmap.mmap(-1, {size}, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)  # never touched here
_addr = ctypes.addressof(ctypes.c_char.from_buffer(_big))
_list = (np.array([_addr, 1 << 16], np.uint64), np.array([{size} // 4096, 10 ** 12], np.uint64))
_cow.written_since_fork = lambda *a, **k: _list  # what the scan after this call "finds"
_cow.carried = _list
print("BIG", hex(_addr))
part = Box(1, 1, 1)
"""
SIZE = 256 << 20  # 65 536 pages: eight times the cap


def rss_of_mapping(pid: int, start: int) -> int | None:
    """Rss in bytes of ``pid``'s mapping that starts at ``start`` (/proc/PID/smaps), None if absent."""
    try:
        with open(f"/proc/{pid}/smaps") as f:
            text = f.read()
    except OSError:
        return None
    found = False
    for line in text.splitlines():
        head = line.split(None, 1)[0]
        if "-" in head and ":" not in head:
            found = int(head.split("-")[0], 16) == start
        elif found and line.startswith("Rss:"):
            return int(line.split()[1]) * 1024
    return None


def test_a_rewritten_list_copies_at_most_the_cap_and_the_session_goes_on(session):
    r = session.execute(HOSTILE.format(size=SIZE))
    assert r["ok"], r
    start = int(re.search(r"BIG (0x[0-9a-f]+)", r["stdout"]).group(1), 16)
    assert spare_pid(session, 30) is not None, "the next never went idle (no spare)"
    pid = next_pid(session)

    last = [None]

    def copied_and_settled():  # the idle next worked through the list: the mapping's size stops growing
        now = rss_of_mapping(pid, start)
        done = bool(now) and now == last[0]
        last[0] = now
        return now if done else None
    got = wait_until(copied_and_settled, 30, interval=0.3)
    assert got, f"the idle next never copied any of the list (Rss {last[0]})"
    assert got <= cow.MAX_PAGES * cow.PAGE, f"{got >> 20} MiB copied, cap {cow.MAX_PAGES * cow.PAGE >> 20} MiB"
    r = session.execute("x = 1\n")
    assert r["ok"], r

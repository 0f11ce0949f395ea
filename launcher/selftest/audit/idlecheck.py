"""``then: idle``: what the session's code left behind runs while its next is idle, and stays bounded.

An idle ``next`` of a session holding a shape warms up (jail/cad/warmup.py): it builds a small part
through the session's own build123d, outside any call, so a method the payload patched runs there.
This step leaves the session idle and watches the next's CPU time (the host's /proc): it must stop
growing within ``SETTLE_S`` (the warm-up's CPU budget cuts a loop off after 1-2 s of CPU), and the
following call must then be served. Without that bound the patched loop would spin until the next
call's wall-clock limit, on every idle spell.
"""
from __future__ import annotations

import time

from launcher.contain import sampling

# The warm-up's budget is 1-2 s of CPU for the next, as much for its spare (its render reaches a
# patched method too), both drawn from the session's CPU share: the watchdog's CPU guard stops them
# by turns (up to MAX_STOP_S at a time), so on a loaded host the spell can take many seconds of wall.
SETTLE_S = 30.0
STILL_S = 1.5       # the next's CPU time unchanged this long (longer than a CPU-guard stop): it is idle
FIRST_LOOK_S = 0.5  # the warm-up starts after 0.1 s idle: do not call it still before this


def _cpu_ticks(pid: int) -> int | None:
    st = sampling.stat(pid)
    return None if st is None else st[1]


def check_idle(rig, values: dict) -> list[str]:
    s = rig.attacker
    with s.lock:
        s.ensure_next()
        nxt = s.next.pid
    start = time.monotonic()
    last, since = _cpu_ticks(nxt), time.monotonic()
    while True:
        time.sleep(0.05)
        now = time.monotonic()
        ticks = _cpu_ticks(nxt)
        if ticks is None:
            break  # the next is gone (killed by the watchdog, say): the call below tells
        if ticks != last:
            last, since = ticks, now
        elif now - since >= STILL_S and now - start >= FIRST_LOOK_S:
            break
        if now - start > SETTLE_S:
            return [f"idle: the idle next kept running for {SETTLE_S:g} s with no call "
                    f"({last / sampling.HZ:.1f} s of CPU): the warm-up has no bound"]
    r = s.execute("print('idle-probe')")
    if not r.get("ok") or "idle-probe" not in r.get("stdout", ""):
        err = r.get("error") or {}
        return [f"idle: the call after the idle spell failed ({err.get('type')}: {str(err.get('message'))[:160]})"]
    return []

"""Layer 3: resource limits, set once in init and inherited by every fork.

Blocks: address space beyond the session's baseline plus ``memory_mb`` (``RLIMIT_AS``: a memory
bomb gets MemoryError, not the host's OOM killer); more than ``nproc`` processes in the session's
user namespace (fork bombs); more than ``nofile`` open files; any byte written to a file
(``RLIMIT_FSIZE=0``, SIGXFSZ ignored: EFBIG); core dumps; more than ``cpu_s`` CPU seconds per call
(``RLIMIT_CPU`` restarts at 0 in each forked child; SIGXCPU kills); a higher priority
(``RLIMIT_NICE``/``RLIMIT_RTPRIO`` = 0). The session runs in ``SCHED_BATCH``: it never preempts
another task on wakeup (seccomp keeps user code from changing its class).

Does not block: wall-clock waiting (the launcher's pidfd timer does); total memory across many
sessions (a systemd unit's MemoryMax= does).
"""
from __future__ import annotations

import os
import resource
import signal

from jail.wire.errors import LayerError


def address_space_bytes() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    raise LayerError("rlimits", "VmSize missing from /proc/self/status")


def apply_rlimits(*, memory_mb: int, nproc: int, nofile: int, cpu_s: int) -> dict:
    as_cap = address_space_bytes() + memory_mb * 1024 * 1024
    limits = {
        "RLIMIT_AS": as_cap,
        "RLIMIT_NPROC": nproc,
        "RLIMIT_NOFILE": nofile,
        "RLIMIT_FSIZE": 0,
        "RLIMIT_CORE": 0,
        "RLIMIT_CPU": cpu_s,
        "RLIMIT_MEMLOCK": 0,
        "RLIMIT_MSGQUEUE": 0,
        "RLIMIT_NICE": 0,
        "RLIMIT_RTPRIO": 0,
    }
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    for name, value in limits.items():
        res = getattr(resource, name)
        try:
            resource.setrlimit(res, (value, value))
        except (OSError, ValueError) as e:
            raise LayerError("rlimits", f"setrlimit({name}, {value}) failed: {e}") from None
    try:
        os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))
    except OSError as e:
        raise LayerError("rlimits", f"sched_setscheduler(SCHED_BATCH) failed: {e}") from None
    if os.sched_getscheduler(0) != os.SCHED_BATCH:
        raise LayerError("rlimits", "the SCHED_BATCH scheduling class did not stick")
    out: dict = {name: resource.getrlimit(getattr(resource, name))[1] for name in limits}
    out["sched"] = "SCHED_BATCH"
    return out

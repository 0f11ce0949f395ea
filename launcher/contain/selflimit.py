"""The launcher's own memory bound: a last line of defence, so a bug costs one call, not the server.

What bounds the launcher's memory in the first place is that nothing from the jail is held
unbounded (``jail.wire.protocol.Receiver`` caps every half-received message, process-wide through
``protocol.HELD``, sized here; ``launcher.replies.validate`` caps what is kept of a reply). This
module adds, once per process, glibc's ``M_ARENA_MAX`` = 2 (each arena reserves 64 MiB of address
space) and a soft ``RLIMIT_AS`` of the address space in use plus a budget from the profile
(``budget_for``). At the limit an allocation fails with ``MemoryError`` inside one call, which the
session and tool layers turn into an error reply; the kernel's OOM killer is never the one to
decide. The limit is soft: child processes inherit it and raise it where they need more (every
session sets its own ``RLIMIT_AS`` in its rlimits layer).

``$BUILD123D_LAUNCHER_AS_MB``: a limit in MiB instead of the computed one, ``0`` for none.
Not bounded here: memory the kernel holds for the launcher (socket buffers), and memory of other
processes (the zygote, the sessions: their own rlimits and containment bound them).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import resource
import threading

from jail.wire import protocol

log = logging.getLogger("build123d_launcher.selflimit")

MIB = 1024 * 1024
MIN_AS = 2048 * MIB          # floor: the zygote (about 0.9 GiB of address space) inherits the soft limit
RAM_SHARE = 4                # ... and at least a quarter of the host's RAM: a bound for a runaway, not a squeeze
SLACK = 768 * MIB            # MCP SDK, anyio worker threads, modules imported after start
THREAD_STACK = 8 * MIB
M_ARENA_MAX = -8

_lock = threading.Lock()
_applied: dict | None = None


def vm_size() -> int:
    """Bytes of address space this process maps now (``VmSize``)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024
    return 0


def _ram() -> int:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError):
        return 0


def _limit_arenas() -> bool:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return bool(libc.mallopt(M_ARENA_MAX, 2))
    except (OSError, AttributeError):
        return False


def budget_for(limits) -> tuple[int, int]:
    """(process-wide half-received budget, address-space headroom) for a profile's limits.

    The headroom is three copies of the largest message (``max_export_bytes``: the half-received
    buffer, the decoded bytes, the written copy), the process-wide budget of half-received bytes,
    one thread stack per possible session (``max_sessions``: the daemon runs a thread per
    connection) and a fixed slack for the MCP SDK and libraries imported later. ``apply`` takes at
    least ``MIN_AS`` and a quarter of the host's RAM, so a process that also does other work (a
    test run hosting a launcher) is not squeezed."""
    biggest = int(limits.max_export_bytes) + 64 * 1024
    held = max(2 * biggest + 64 * MIB, 256 * MIB)
    headroom = 3 * biggest + held + int(limits.max_sessions) * THREAD_STACK + SLACK
    return held, headroom


def apply(profile) -> dict:
    """Bound this process's memory for ``profile`` (idempotent: a second call never lowers a limit
    that an earlier, larger profile set). Returns what was done (for logs and ``doctor``)."""
    global _applied
    with _lock:
        held, headroom = budget_for(profile.limits)
        protocol.HELD.limit = max(protocol.HELD.limit if _applied else 0, held)
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        env = os.environ.get("BUILD123D_LAUNCHER_AS_MB", "").strip()
        if env:
            try:
                want = int(env) * MIB
            except ValueError:
                log.warning("BUILD123D_LAUNCHER_AS_MB=%r is not a number of MiB; using the computed limit", env)
                want = -1
        else:
            want = -1
        if want == 0:
            cap = None
        elif want > 0:
            cap = want
        else:
            cap = max(MIN_AS, _ram() // RAM_SHARE, vm_size() + headroom)
        if _applied and _applied.get("as_bytes") and cap is not None:
            cap = max(cap, _applied["as_bytes"])
        arenas = _limit_arenas() if not _applied else _applied.get("arena_max_set", False)
        if cap is not None:
            if hard != resource.RLIM_INFINITY:
                cap = min(cap, hard)
            try:
                resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
            except (ValueError, OSError) as e:
                log.warning("could not set the launcher's RLIMIT_AS to %d MiB: %s", cap // MIB, e)
                cap = soft if soft != resource.RLIM_INFINITY else None
        _applied = {"as_bytes": cap, "held_bytes": protocol.HELD.limit, "arena_max_set": arenas}
        log.debug("launcher memory bound: RLIMIT_AS %s MiB, half-received budget %d MiB",
                  cap // MIB if cap else "unlimited", protocol.HELD.limit // MIB)
        return dict(_applied)


def current() -> dict | None:
    """What :func:`apply` did in this process, or None."""
    return dict(_applied) if _applied else None

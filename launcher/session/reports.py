"""What a session reports about itself: the audit log line of every call, its memory and CPU bounds.

The audit line (logger ``build123d_launcher.audit``) names the session, a hash of the code (never
the code), the outcome, the duration and the layer that stopped it; every field that came from the
jail is one escaped token, so jailed code cannot forge a log field. The reports say which mechanism
bounds the session as a whole (the kernel's cgroup or the launcher's watchdog) and what it saw.
"""
from __future__ import annotations

import hashlib
import re
import logging

from launcher.replies import sanitize

audit_log = logging.getLogger("build123d_launcher.audit")


_LAYER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}(\.[A-Za-z_][A-Za-z0-9_]{0,63}){0,3}")


def log_layer(layer) -> str:
    """The ``layer`` field of the audit line: the rule or error type the jail named when it is a
    (dotted) ASCII identifier of at most 64 characters, else ``other``. A session that rewrote its
    runner picks this word, so it must not be able to carry data (an input file's bytes) into the log."""
    return layer if isinstance(layer, str) and _LAYER.fullmatch(layer) else ("-" if layer in (None, "-") else "other")


def log_call(sid: str, code: str, outcome: str, duration_ms: float, layer) -> None:
    """One audit line for a call (``layer``: the rule or error type from the jail, or "-")."""
    audit_log.info(
        "execute session=%s sha256=%s outcome=%s duration_ms=%.1f layer=%s", sanitize.log_token(sid),
        hashlib.sha256(code.encode("utf-8", "surrogatepass")).hexdigest()[:16], outcome, duration_ms,
        log_layer(layer))


def log_silent_timeout(sid: str, chain) -> None:
    """A call that reached its limit with no last words (its process never ran the code, or never
    answered): log what each of the session's processes was doing, for the rare case this is not the
    user's code (warning, logger ``build123d_launcher.session``). Only kernel-made fields: pid, role,
    state, parent, ``wchan``. Never raises."""
    from launcher.contain import sampling
    from launcher.contain.procs import descendants
    try:
        pids = chain.pids()
        roles = {p: r for r, p in pids.items() if isinstance(p, int)}
        roles.update({p: f"snapshot {n}" for n, p in pids["snapshots"].items()})
        roles.update({p: "dying" for p in chain.dying_pids()})
        rows = []
        for pid in descendants(chain.init.pid)[:64]:
            st = sampling.stat(pid)
            try:
                with open(f"/proc/{pid}/wchan") as f:
                    wchan = f.read().strip() or "-"
            except OSError:
                continue
            if st is None:
                continue
            rows.append(f"{pid}:{sanitize.log_token(roles.get(pid, '?'), 24)}:{st[3]}:ppid={st[4]}:"
                        f"{sanitize.log_token(wchan, 40)}")
        logging.getLogger("build123d_launcher.session").warning(
            "session %s: a call timed out with no last words; processes: %s", sanitize.log_token(sid),
            " ".join(rows) or "none")
    except Exception:  # noqa: BLE001 - a diagnostic only
        pass


def session_memory_report(limits, watch, contain) -> dict:
    """Which mechanism bounds the session's memory as a whole, the bound, the peak seen, kills."""
    lim = limits.session_memory_mb * 1024 * 1024
    m = watch.memory
    if m is not None:
        return {"mechanism": "watchdog", "limit_bytes": lim, "peak_bytes": m.peak, "kills": m.kills,
                "last_bytes": m.last_total, "exact_reads": m.precise_reads}
    return {"mechanism": contain.memory_mechanism, "limit_bytes": lim,
            "peak_bytes": contain.memory_peak_bytes(), "kills": contain.oom_kills()}


def session_cpu_report(limits, watch, contain) -> dict:
    """Which mechanism bounds the session's CPU share, the share, and how often it was throttled."""
    c = watch.cpu
    if c is not None:
        return {"mechanism": "watchdog", "cpus": c.cpus, "throttled": c.throttled}
    return {"mechanism": "cgroup-v2", "cpus": limits.session_cpus,
            "throttled": contain.cpu_throttled()}

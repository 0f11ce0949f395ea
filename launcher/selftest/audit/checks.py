"""What one call may not do to the launcher: the launcher-side canaries of a cell.

The reply must carry no planted token, no ``ESCAPE-RESULT: escaped=`` proof, no more output than
the profile's cap; it must be strict UTF-8 JSON with finite numbers, hold no character that can
deceive a terminal or a reader (C0/C1 controls but newline and tab, bidi overrides, line
separators, lone surrogates) and stay within the caps. The launcher's peak RSS must not grow by
more than :data:`LAUNCHER_GROWTH_KB` during the call, and it must not keep file descriptors on
paths (what fds passed with SCM_RIGHTS and kept would add).
"""
from __future__ import annotations

import json
import os
import re
import time

from launcher.selftest.audit.payloads import ESCAPE_LINE

_DECEIVING = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e"
                        "\u2066-\u2069\ud800-\udfff]")
LAUNCHER_GROWTH_KB = 128 * 1024
KEPT_FDS = 3  # this many new path fds still open after a call fire the canary


def path_fds() -> dict[int, str] | None:
    """The launcher's file descriptors that name a path (files, devices), fd -> path: what fds
    passed with SCM_RIGHTS and kept would add. Sockets, pipes and pidfds come and go with sessions.
    None when /proc/self/fd cannot be read."""
    out = {}
    try:
        for fd in os.listdir("/proc/self/fd"):
            try:
                target = os.readlink(f"/proc/self/fd/{fd}")
            except OSError:
                continue
            if target.startswith("/"):
                out[int(fd)] = target
    except OSError:
        return None
    return out


def kept_fds(before: dict[int, str] | None, deadline: float, at_least: int = KEPT_FDS) -> tuple[int, list[str]]:
    """How many more path fds the launcher holds than ``before`` (and the paths of those it did not
    have then), looked at again until fewer than ``at_least`` more or ``deadline`` (monotonic)
    passes: the launcher's own threads hold a file for a moment (the watchdog reading a process's
    /proc files, a session starting in the background), and one look caught three (stop 49's CI, on
    a payload the AST policy had refused). What a session passed and the launcher kept stays."""
    if before is None:
        return 0, []
    while True:
        now = path_fds() or {}
        more = len(now) - len(before)
        if more < at_least or time.monotonic() >= deadline:
            return more, sorted({p for fd, p in now.items() if before.get(fd) != p})
        time.sleep(0.02)


def _status_kb(key: str) -> int:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def reset_peak_rss() -> int:
    """Reset this process's peak RSS (VmHWM) to its current RSS; return that RSS (kB), or -1."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return -1
    return _status_kb("VmRSS")


def _strings(v, depth: int = 0):
    if isinstance(v, str):
        yield v
    elif depth < 20 and isinstance(v, dict):
        for k, x in v.items():
            yield from _strings(k, depth + 1)
            yield from _strings(x, depth + 1)
    elif depth < 20 and isinstance(v, (list, tuple)):
        for x in v:
            yield from _strings(x, depth + 1)


def _reply_canaries(res: dict, limits, rss0_kb: int) -> list[str]:
    """Strict UTF-8 JSON, no deceiving character, within the caps; the launcher's peak RSS grew by
    at most LAUNCHER_GROWTH_KB during the call."""
    fired = []
    try:
        blob = json.dumps(res, ensure_ascii=False, allow_nan=False)
        blob.encode("utf-8")
    except (ValueError, TypeError, UnicodeEncodeError) as e:
        return [f"reply: not encodable as strict UTF-8 JSON ({type(e).__name__})"]
    for text in _strings(res):
        m = _DECEIVING.search(text.replace("\n", "").replace("\t", ""))
        if m:
            fired.append(f"reply: raw U+{ord(m.group()):04X} in the reply text")
            break
    cap = limits.max_output_bytes + limits.max_result_bytes
    if len(blob.encode("utf-8")) > cap + 16384:
        fired.append(f"reply-size: {len(blob)} characters came back (caps: {cap} bytes)")
    if rss0_kb >= 0:
        grown = _status_kb("VmHWM") - rss0_kb
        if grown > LAUNCHER_GROWTH_KB:
            fired.append(f"launcher-memory: the launcher's RSS grew by {grown // 1024} MB during the call")
    return fired


def reply_findings(res: dict, leak_markers: dict[str, str], limits, rss0_kb: int) -> list[str]:
    """The canaries a reply fires: leaked tokens, proofs, output over the cap, then
    :func:`_reply_canaries` (``rss0_kb``: what :func:`reset_peak_rss` returned before the call)."""
    fired = []
    blob = json.dumps(res, default=str)
    for label, marker in leak_markers.items():
        if marker and marker in blob:
            fired.append(f"leak:{label}")
    for line in (res.get("stdout") or "").splitlines():
        m = ESCAPE_LINE.search(line)
        if m and "escaped=" in m.group(1):
            fired.append("proof:" + m.group(1).strip()[:120])
    out_cap = limits.max_output_bytes
    out_len = len((res.get("stdout") or "").encode()) + len((res.get("stderr") or "").encode())
    if out_len > out_cap + 4096:
        fired.append(f"output-cap: {out_len} bytes of output came back (cap {out_cap})")
    return fired + _reply_canaries(res, limits, rss0_kb)


def fs_changes(before: dict, after: dict) -> list[str]:
    """``fs:<path> created|removed|modified`` for every difference of two ``fs_snapshot()``s."""
    fired = []
    for p in sorted(set(before) | set(after)):
        if before.get(p) != after.get(p):
            what = "created" if p not in before else "removed" if p not in after else "modified"
            fired.append(f"fs:{p} {what}")
    return fired

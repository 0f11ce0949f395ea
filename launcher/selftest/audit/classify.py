"""Which layer stopped a blocked payload, read from its reply.

From the error (PolicyError -> ast_policy, EPERM -> seccomp, EACCES -> landlock, ENOENT/EROFS ->
mountview, MemoryError/EFBIG/EAGAIN/EMFILE -> rlimits, ExecutionTimeout -> wall-clock, SIGSYS ->
seccomp, SIGXCPU -> rlimits ...) or from the payload's ``ESCAPE-RESULT: errno=... layer=...`` lines.
A label only: whether the payload escaped is decided by the canaries, never here.
"""
from __future__ import annotations

import errno as _errno
import re

from launcher.selftest.audit.payloads import ESCAPE_LINE

ERRNO_LAYER = {
    "EPERM": "seccomp", "ENOSYS": "seccomp", "EACCES": "landlock", "ENOENT": "mountview", "EROFS": "mountview",
    "ENOTDIR": "mountview", "EXDEV": "mountview", "EFBIG": "rlimits", "EAGAIN": "rlimits", "EMFILE": "rlimits",
    "ENFILE": "rlimits", "ENOMEM": "rlimits", "ENOSPC": "rlimits", "EDQUOT": "rlimits",
    "ESRCH": "namespaces", "ENETUNREACH": "namespaces", "ECONNREFUSED": "namespaces",
    "EADDRNOTAVAIL": "namespaces", "EHOSTUNREACH": "namespaces", "ENETDOWN": "namespaces",
    "EINVAL": "kernel(EINVAL)", "EBADF": "fd-hygiene",
}
SIGNAL_LAYER = {"SIGSYS": "seccomp(kill)", "SIGXCPU": "rlimits(cpu)", "SIGXFSZ": "rlimits(fsize)",
                "SIGKILL": "rlimits/oom(SIGKILL)", "SIGSEGV": "crash(SIGSEGV)", "SIGABRT": "crash(SIGABRT)",
                "SIGBUS": "crash(SIGBUS)"}
EXC_ERRNO = {"PermissionError": None, "FileNotFoundError": "ENOENT", "ProcessLookupError": "ESRCH",
             "ConnectionRefusedError": "ECONNREFUSED", "BlockingIOError": "EAGAIN", "IsADirectoryError": None,
             "NotADirectoryError": "ENOTDIR"}


def _errno_name(n: int) -> str:
    return _errno.errorcode.get(n, str(n))


def _escape_results(stdout: str) -> dict[str, str]:
    """The ``key=value`` words of the ``ESCAPE-RESULT:`` lines (first value wins); every errno that is
    not ``0``/``OK`` is also collected, in order, in ``errnos`` (comma-terminated)."""
    kv: dict[str, str] = {}
    for line in stdout.splitlines():
        m = ESCAPE_LINE.search(line)
        if m:
            for part in m.group(1).split():
                k, _, v = part.partition("=")
                kv.setdefault(k, v)
                if k == "errno" and v not in ("0", "OK", ""):
                    kv.setdefault("errnos", "")
                    kv["errnos"] += v + ","
    return kv


def classify(res: dict) -> tuple[str, str]:
    """(layer, detail) from an execute() reply."""
    err = res.get("error") or {}
    et, msg = err.get("type") or "", str(err.get("message") or "")
    kv = _escape_results(res.get("stdout") or "")
    if et == "PolicyError":
        return "ast_policy", f"rule {err.get('rule')}"
    if et == "ExecutionTimeout":
        return "wall-clock", "killed at the wall-clock limit"
    if et == "ChildDied":
        for sig, layer in SIGNAL_LAYER.items():
            if sig in msg:
                return layer, msg[:120]
        return "child-died", msg[:120]
    if et == "ProtocolError":
        return "protocol", msg[:120]
    if et == "SessionMemoryLimit":
        return "session-memory(watchdog)", msg[:120]
    if et in ("NameError",) and "is not defined" in msg:
        return "builtins", msg[:120]
    if et in ("ImportError", "ModuleNotFoundError") and "not allowed" in msg:
        return "builtins", msg[:120]
    if et == "MemoryError":
        return "rlimits", "MemoryError"
    if "layer" in kv:
        return kv["layer"], " ".join(f"{k}={v}" for k, v in kv.items() if k != "errnos")[:120]
    m = re.search(r"\[Errno (\d+)\]", msg)
    if m:
        name = _errno_name(int(m.group(1)))
        return ERRNO_LAYER.get(name, f"errno {name}"), f"{et}: {msg[:100]}"
    if et in EXC_ERRNO and EXC_ERRNO[et]:
        name = EXC_ERRNO[et]
        return ERRNO_LAYER.get(name, name), f"{et}: {msg[:100]}"
    if et == "RuntimeError" and "new thread" in msg:
        return "seccomp", "can't start new thread"
    if kv.get("errnos"):
        names = [x for x in kv["errnos"].split(",") if x]
        layers = [ERRNO_LAYER.get(n, f"errno {n}") for n in names]
        # the most specific one: first non-EINVAL
        best = next((layer for layer in layers if not layer.startswith("kernel")), layers[0])
        return best, "errno=" + ",".join(dict.fromkeys(names))
    if et:
        return "python", f"{et}: {msg[:100]}"
    said = " ".join(f"{k}={v}" for k, v in kv.items() if k != "errnos")
    if said:
        return "contained", said[:160]
    out = (res.get("stdout") or "").strip().replace("\n", " | ")
    return "contained", ("ran; printed: " + out[:140]) if out else "ran; no canary fired"

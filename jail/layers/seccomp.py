"""Layer 6: the seccomp-bpf syscall filter, via pyseccomp (libseccomp). Applied last, in init.

Blocks: every syscall the profile does not allow: ``ERRNO(EPERM)``, or ``KILL_PROCESS`` with
``default_action = "kill"``; ``kill`` names kill the process (SIGSYS); ``enosys`` names get ENOSYS
(always ``clone3``, whose flags seccomp cannot read: glibc falls back to ``clone``). Whatever the
profile says (jail/layers/syscalls.py): the always-denied calls (sockets, exec, ptrace, mounts and
namespaces, modules, signals to other processes, setuid-family...) and the argument rules (fork-only
``clone``, ``prctl`` without PR_SET_NAME, ``ioctl``/``fcntl`` whitelists, ``tgkill`` without SIGCONT).
The filter covers all threads (TSYNC); a syscall from a foreign ABI (x32, ``int 0x80``) kills. The
jail is single-threaded (OCCT's pool pinned to one thread, ``*_NUM_THREADS=1``): ``pthread_create``
fails with EPERM unless ``threads=True`` (code, never a profile).

Does not block: the allowed calls on any path or fd the filesystem layers let through;
``sendmsg``/``recvmsg`` on inherited sockets; CPU and memory use (rlimits); ``tgkill`` to its own
threads. Path and sockaddr arguments (behind pointers) are never inspected.
"""
from __future__ import annotations

import errno
import os
import sys

import pyseccomp as sc

from jail.layers.libc import prctl
from jail.layers.syscalls import ARG_RULES, HARD_DENY, IOCTL_ALLOWED, THREADED_CLONE, ArgRule
from jail.wire.errors import LayerError

LAYER = "seccomp"
PR_GET_SECCOMP = 21


def _resolve(name: str, where: str) -> int:
    nr = sc.resolve_syscall(sc.system_arch(), name)
    if nr == -1:  # __NR_SCMP_ERROR: a name libseccomp does not know on any arch
        raise LayerError(LAYER, f"unknown syscall name {name!r} in [seccomp] {where}; fix the profile")
    return nr


def pin_single_threaded() -> dict:
    """Pin OCCT's default thread pool to one thread if OCP is loaded (never
    imports it otherwise). With ``CLONE_THREAD`` denied, a pool of N > 1 threads
    makes the first boolean wait forever on a futex for a worker that could not
    be started, so this fails closed instead. Returns {occt_pool_threads,
    threads_in_process}."""
    info: dict = {"occt_pool_threads": None}
    if "OCP.OSD" in sys.modules or "OCP" in sys.modules:
        try:
            from OCP.OSD import OSD_ThreadPool  # only when OCP is already loaded: never load it here
            pool = OSD_ThreadPool.DefaultPool_s(1)  # sizes it if nobody created it yet
            if pool.NbThreads() > 1:
                # created earlier with more threads; safe only while its workers
                # were never launched (no geometry ran before the fork)
                pool.Init(1)
            info["occt_pool_threads"] = pool.NbThreads()
        except Exception as e:  # pragma: no cover - OCP without the binding
            info["occt_pool_error"] = repr(e)
    try:
        info["threads_in_process"] = len(os.listdir("/proc/self/task"))
    except OSError:
        info["threads_in_process"] = None
    if (info["occt_pool_threads"] or 1) > 1:
        raise LayerError(LAYER, f"OCCT's thread pool has {info['occt_pool_threads']} threads but the filter "
                         "denies CLONE_THREAD: call OSD_ThreadPool.DefaultPool_s(1) in the zygote before any geometry")
    if (info["threads_in_process"] or 1) > 1:
        raise LayerError(LAYER, f"the process has {info['threads_in_process']} threads; the jail is "
                         "single-threaded (set OPENBLAS_NUM_THREADS=1, OMP_NUM_THREADS=1 before numpy)")
    return info


def _seccomp_mode() -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Seccomp:"):
                    return int(line.split()[1])
    except OSError:
        pass
    try:
        return prctl(PR_GET_SECCOMP)
    except OSError:
        return None


def _checked(allow, kill, enosys, default_action: str) -> tuple[list, list, list]:
    """The profile's lists, de-duplicated, with clone3 in ENOSYS; LayerError on a list the layer refuses."""
    allow, kill, enosys = list(dict.fromkeys(allow)), list(dict.fromkeys(kill)), list(dict.fromkeys(enosys))
    if "clone3" in allow:
        raise LayerError(LAYER, "profile [seccomp] allow lists clone3, whose flags seccomp cannot check; "
                         "remove it (it always gets ENOSYS, glibc falls back to clone)")
    if "clone3" not in enosys and "clone3" not in kill:
        enosys.append("clone3")
    bad = sorted(set(allow) & set(HARD_DENY))
    if bad:
        raise LayerError(LAYER, f"profile [seccomp] allow lists always-denied syscall(s) {bad}; "
                         "remove them (the jail never allows them)")
    both = sorted(set(allow) & (set(kill) | set(enosys)))
    if both:
        raise LayerError(LAYER, f"[seccomp] {both} are both allowed and killed/ENOSYS; pick one")
    if default_action not in ("errno", "kill"):
        raise LayerError(LAYER, f"[seccomp] default_action {default_action!r}: use 'errno' or 'kill'")
    for name in allow + kill + enosys:
        _resolve(name, "lists")
    return allow, kill, enosys


def _allow(f, name: str, rule: ArgRule | None) -> None:
    """One allowed call, with its argument rule (syscalls.ARG_RULES) if it has one."""
    if rule is None:
        f.add_rule(sc.ALLOW, name)
    elif rule.op == "ne":
        f.add_rule(sc.ALLOW, name, sc.Arg(rule.arg, sc.NE, rule.values[0]))
    else:  # masked_eq: one rule per admitted value
        for value in rule.values:
            f.add_rule(sc.ALLOW, name, sc.Arg(rule.arg, sc.MASKED_EQ, rule.mask, value))


def _build(allow, kill, enosys, default_action: str, threads: bool):
    """(filter, allowed count, killed names, hard-denied names); raises OSError from libseccomp."""
    f = sc.SyscallFilter(sc.ERRNO(errno.EPERM) if default_action == "errno" else sc.KILL_PROCESS)
    f.set_attr(sc.Attr.ACT_BADARCH, sc.KILL_PROCESS)
    f.set_attr(sc.Attr.CTL_TSYNC, 1)
    f.set_attr(sc.Attr.CTL_NNP, 1)
    allowed = 0
    for name in allow:
        if _resolve(name, "allow") < 0:
            continue  # not a syscall on this architecture
        _allow(f, name, THREADED_CLONE if threads and name == "clone" else ARG_RULES.get(name))
        allowed += 1
    killed = []
    for name in kill:
        if _resolve(name, "kill") >= 0:
            if default_action != "kill":  # libseccomp refuses rules equal to the default
                f.add_rule(sc.KILL_PROCESS, name)
            killed.append(name)
    for name in enosys:
        if _resolve(name, "enosys") >= 0:
            f.add_rule(sc.ERRNO(errno.ENOSYS), name)
    denied = []
    for name in HARD_DENY:
        if name in kill or sc.resolve_syscall(sc.system_arch(), name) < 0:
            continue
        if default_action != "errno":
            f.add_rule(sc.ERRNO(errno.EPERM), name)
        denied.append(name)
    return f, allowed, killed, denied


def build_filter(allow, kill, enosys, default_action: str = "errno", *, threads: bool = False):
    """The filter :func:`apply_seccomp` would load, not loaded (tests compare its BPF)."""
    allow, kill, enosys = _checked(allow, kill, enosys, default_action)
    return _build(allow, kill, enosys, default_action, threads)[0]


def apply_seccomp(allow, kill, enosys, default_action: str = "errno", *, threads: bool = False) -> dict:
    """Load the filter (see the module docstring) into this process, all threads.

    ``allow``/``kill``/``enosys`` are syscall names from the profile. Raises
    LayerError on a forbidden or unknown name or when loading fails. Returns
    evidence {allowed, denied_hardcoded, killed, enosys, threads_allowed,
    default_action, ioctl_cmds, threading}."""
    allow, kill, enosys = _checked(allow, kill, enosys, default_action)
    threading = {} if threads else pin_single_threaded()
    try:
        f, allowed, killed, denied = _build(allow, kill, enosys, default_action, threads)
        f.load()
    except OSError as e:
        name = errno.errorcode.get(e.errno or 0, str(e.errno))
        raise LayerError(LAYER, f"building/loading the filter failed: {name} ({e.strerror}); "
                         "seccomp needs no_new_privs or CAP_SYS_ADMIN and CONFIG_SECCOMP_FILTER") from None
    mode = _seccomp_mode()
    if mode != 2:
        raise LayerError(LAYER, f"after loading, the process reports Seccomp: {mode} (want 2 = filter)")
    return {
        "allowed": allowed, "denied_hardcoded": denied, "killed": killed, "enosys": enosys,
        "threads_allowed": bool(threads), "default_action": default_action,
        "clone_flags": "any but CLONE_NEW*" if threads else "fork only (SIGCHLD + *_SETTID/CLEARTID)",
        "ioctl_cmds": sorted(IOCTL_ALLOWED) if "ioctl" in allow else [], "threading": threading,
    }

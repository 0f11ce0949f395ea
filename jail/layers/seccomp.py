"""Layer 6: seccomp-bpf syscall allowlist, via pyseccomp (libseccomp). Applied last.

The profile's ``[seccomp] allow`` list was traced from real workloads (the
zygote's imports, then booleans/fillets/text/meshing/exports to BytesIO, numpy,
tracebacks, lazy imports, fork/wait, pipes, poll/select, sendmsg/recvmsg on an
inherited socketpair, sigtimedwait, sleep) with ``strace -f`` and cut to what
ran after the zygote had imported everything. Everything else gets the
default action: ``ERRNO(EPERM)`` (or ``KILL_PROCESS`` with
``default_action = "kill"``); ``enosys`` names get ``ENOSYS`` (``clone3``, so
glibc falls back to ``clone``); ``kill`` names kill the whole process
(``SIGSYS``). The filter is synchronised to all threads (TSYNC), and any
syscall from a foreign ABI (x32, i386 via ``int 0x80``) kills the process.

Hard-coded, whatever the profile says (a profile that lists one of these in
``allow`` is rejected with LayerError):

* ``clone`` is allowed only with **plain fork flags**: exit signal ``SIGCHLD`` and
  nothing but ``CLONE_CHILD_SETTID``/``CLONE_CHILD_CLEARTID``/``CLONE_PARENT_SETTID``
  besides (what glibc's ``fork`` passes). So no ``CLONE_NEW*``, no ``CLONE_THREAD`` (the
  jail is single-threaded), no ``CLONE_PARENT`` (a child that would be its parent's
  sibling, outside the call's process tree), no ``CLONE_VM``/``CLONE_VFORK``/``CLONE_FILES``/
  ``CLONE_SIGHAND``/``CLONE_PTRACE``..., no other exit signal (a child its parent's ``wait``
  would not reap). Every process a call makes then descends from the call's process, which
  is what the launcher's pid-namespace sweep relies on where no cgroup contains the session.
  ``clone3`` (flags behind a pointer, which seccomp cannot read) always gets ``ENOSYS``, so
  glibc falls back to ``clone``; a profile cannot allow it. OCCT's thread pool
  must be pinned to one thread before the first geometry
  (``OSD_ThreadPool.DefaultPool_s(1)``, done here too when OCP is loaded) and
  OpenBLAS/OpenMP must be started with ``*_NUM_THREADS=1``; with that the traced
  workload creates no thread at all. ``pthread_create`` then fails with EPERM
  (Python: ``RuntimeError: can't start new thread``). Pass ``threads=True``
  (code, not profile) to allow ``CLONE_THREAD``.
* ``prctl`` is allowed except ``PR_SET_NAME`` (no renaming to look like a host process).
* ``tgkill`` is allowed with any signal but ``SIGCONT``, and ``fcntl`` with every command but
  ``F_SETOWN``/``F_SETOWN_EX``/``F_SETSIG``/``F_SETLEASE``/``F_NOTIFY`` (see ``FCNTL_ALLOWED``): no
  jailed process can continue one that the launcher's CPU watchdog stopped (kill, tkill,
  rt_*sigqueueinfo and pidfd_send_signal are denied outright).
* ``ioctl`` is allowed only for a few harmless commands (TCGETS, TIOCGWINSZ,
  FIONREAD, FIONBIO, FIOCLEX, FIONCLEX; compared on the low 32 bits, which is
  what the kernel uses), so ``TIOCSTI``/``TIOCLINUX`` terminal injection is out.
* Always denied (see ``HARD_DENY``): socket creation and connect/bind/listen/
  accept, exec, ptrace and process_vm_*, bpf, perf_event_open, userfaultfd,
  io_uring, keyrings, every mount/namespace syscall, modules, kexec,
  personality, kill-style signals to other processes (``tgkill`` stays, for
  ``raise``/``abort``), setuid-family, reboot/swap/acct/quota, handle-based
  opens, iopl/ioperm, syslog, clock setting, memfd_secret.

What it does NOT block: the allowed syscalls themselves, on any path or fd the
filesystem layers let through (``openat`` is allowed: read-only-ness and
hidden paths are the mount view's and Landlock's job); ``sendmsg``/``recvmsg``
on inherited sockets; CPU and memory use (rlimits); ``tgkill`` to threads of
the own process. Seccomp cannot look behind pointers, so path or sockaddr
arguments are never inspected.
"""
from __future__ import annotations

import errno
import os

import pyseccomp as sc

from jail.wire.errors import LayerError

LAYER = "seccomp"

from jail.layers.libc import (CLONE_NEWCGROUP, CLONE_NEWIPC, CLONE_NEWNET, CLONE_NEWNS,  # noqa: E402
                       CLONE_NEWPID, CLONE_NEWUSER, CLONE_NEWUTS, CLONE_THREAD, prctl)
CLONE_NS_FLAGS = (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC
                  | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET)
CSIGNAL, SIGCHLD = 0xFF, 17
CLONE_PARENT_SETTID, CLONE_CHILD_CLEARTID, CLONE_CHILD_SETTID = 0x00100000, 0x00200000, 0x01000000
# clone's flags as the kernel reads them (the low 32 bits): everything but these must be 0,
# and the exit signal (the low byte) SIGCHLD
FORK_FLAGS_MASK = 0xFFFFFFFF & ~(CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID | CLONE_CHILD_SETTID)

# SIGCONT could continue a process the launcher's CPU watchdog stopped (launcher/watchdog.py): no
# signal to another process is allowed anyway (kill & co. are denied), and tgkill may send any signal
# but this one (to a thread of its own process it has no use)
SIGCONT = 18
# fcntl: everything but handing the fd's signals to another process (F_SETOWN/F_SETOWN_EX: SIGIO or
# the F_SETSIG signal, e.g. SIGCONT, sent to that owner) and lease/dnotify signals
FCNTL_ALLOWED = {
    "F_DUPFD": 0, "F_GETFD": 1, "F_SETFD": 2, "F_GETFL": 3, "F_SETFL": 4, "F_GETLK": 5, "F_SETLK": 6,
    "F_SETLKW": 7, "F_GETOWN": 9, "F_GETSIG": 11, "F_GETOWN_EX": 16, "F_OFD_GETLK": 36, "F_OFD_SETLK": 37,
    "F_OFD_SETLKW": 38, "F_GETLEASE": 1025, "F_DUPFD_CLOEXEC": 1030, "F_SETPIPE_SZ": 1031,
    "F_GETPIPE_SZ": 1032, "F_ADD_SEALS": 1033, "F_GET_SEALS": 1034,
}

IOCTL_ALLOWED = {
    "TCGETS": 0x5401, "TIOCGWINSZ": 0x5413, "FIONREAD": 0x541B, "FIONBIO": 0x5421,
    "FIONCLEX": 0x5450, "FIOCLEX": 0x5451,
}

# Syscalls the profile cannot allow. ``clone`` and ``ioctl`` are not here: the
# profile may list them, and they get the argument filters above.
HARD_DENY = (
    "socket", "socketpair", "connect", "bind", "listen", "accept", "accept4",
    "execve", "execveat", "ptrace", "process_vm_readv", "process_vm_writev",
    "bpf", "perf_event_open", "userfaultfd",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    "keyctl", "add_key", "request_key",
    "mount", "umount", "umount2", "fsopen", "fsmount", "fsconfig", "fspick", "move_mount",
    "open_tree", "open_tree_attr", "mount_setattr", "pivot_root", "chroot", "unshare", "setns",
    "init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
    "personality", "vfork",
    "kill", "tkill", "pidfd_send_signal", "pidfd_open", "pidfd_getfd",
    "rt_sigqueueinfo", "rt_tgsigqueueinfo",
    "setuid", "setgid", "setreuid", "setregid", "setresuid", "setresgid",
    "setfsuid", "setfsgid", "setgroups", "capset",
    "reboot", "swapon", "swapoff", "acct", "quotactl", "quotactl_fd", "lookup_dcookie",
    "name_to_handle_at", "open_by_handle_at", "vm86", "vm86old", "iopl", "ioperm",
    "syslog", "uselib", "nfsservctl", "settimeofday", "clock_settime", "clock_adjtime",
    "adjtimex", "stime", "memfd_secret", "landlock_create_ruleset", "landlock_add_rule",
    "mknod", "mknodat", "sethostname", "setdomainname",
)

PR_GET_SECCOMP = 21
PR_SET_NAME = 15


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
    import sys
    info: dict = {"occt_pool_threads": None}
    if "OCP.OSD" in sys.modules or "OCP" in sys.modules:
        try:
            from OCP.OSD import OSD_ThreadPool
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


def apply_seccomp(allow, kill, enosys, default_action: str = "errno", *, threads: bool = False) -> dict:
    """Load the filter (see the module docstring) into this process, all threads.

    ``allow``/``kill``/``enosys`` are syscall names from the profile. Raises
    LayerError on a forbidden or unknown name or when loading fails. Returns
    evidence {allowed, denied_hardcoded, killed, enosys, threads_allowed,
    default_action, ioctl_cmds, threading}."""
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
    default = sc.ERRNO(errno.EPERM) if default_action == "errno" else sc.KILL_PROCESS
    for name in allow + kill + enosys:
        _resolve(name, "lists")

    threading = {} if threads else pin_single_threaded()
    try:
        f = sc.SyscallFilter(default)
        f.set_attr(sc.Attr.ACT_BADARCH, sc.KILL_PROCESS)
        f.set_attr(sc.Attr.CTL_TSYNC, 1)
        f.set_attr(sc.Attr.CTL_NNP, 1)
        allowed = 0
        for name in allow:
            if _resolve(name, "allow") < 0:
                continue  # not a syscall on this architecture
            if name == "clone":
                if threads:
                    f.add_rule(sc.ALLOW, "clone", sc.Arg(0, sc.MASKED_EQ, CLONE_NS_FLAGS, 0))
                else:
                    f.add_rule(sc.ALLOW, "clone", sc.Arg(0, sc.MASKED_EQ, FORK_FLAGS_MASK, SIGCHLD))
            elif name == "prctl":
                # everything but PR_SET_NAME: a jailed process cannot rename itself to look like a
                # host daemon in ps/top (/proc/self/comm is read-only to it: Landlock, mount view)
                f.add_rule(sc.ALLOW, "prctl", sc.Arg(0, sc.NE, PR_SET_NAME))
            elif name == "ioctl":
                for cmd in IOCTL_ALLOWED.values():
                    f.add_rule(sc.ALLOW, "ioctl", sc.Arg(1, sc.MASKED_EQ, 0xFFFFFFFF, cmd))
            elif name in ("fcntl", "fcntl64"):
                for cmd in FCNTL_ALLOWED.values():
                    f.add_rule(sc.ALLOW, name, sc.Arg(1, sc.MASKED_EQ, 0xFFFFFFFF, cmd))
            elif name == "tgkill":
                f.add_rule(sc.ALLOW, "tgkill", sc.Arg(2, sc.NE, SIGCONT))
            else:
                f.add_rule(sc.ALLOW, name)
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

"""The seccomp policy by purpose: named syscall groups, argument rules, the always-denied list.

Profiles name groups with ``@`` plus extra calls by name (``allow = ["@memory", ..., "sysinfo"]``);
launcher/profile.py resolves them into the flat lists the jail receives, and
jail/layers/seccomp.py builds the filter from those. Each group says what needs it. A call in
:data:`ARG_RULES` is allowed only with the arguments its rule admits, whatever group or profile
lists it. :data:`ALWAYS_DENIED` can never be allowed (the layer refuses such a profile).

Pure data (no pyseccomp): the launcher imports it to resolve and print profiles.
Blocks nothing by itself. Seccomp cannot look behind pointers: path and sockaddr arguments
are never inspected (the mount view and Landlock decide what a path reaches).
"""
from __future__ import annotations

from dataclasses import dataclass

from jail.layers.libc import (CLONE_NEWCGROUP, CLONE_NEWIPC, CLONE_NEWNET, CLONE_NEWNS, CLONE_NEWPID,
                              CLONE_NEWUSER, CLONE_NEWUTS)


@dataclass(frozen=True)
class Group:
    name: str
    why: str                 # what needs these calls
    calls: tuple[str, ...]


@dataclass(frozen=True)
class ArgRule:
    """``masked_eq``: allowed when ``args[arg] & mask`` equals one of ``values`` (one rule each);
    ``ne``: allowed unless ``args[arg]`` equals ``values[0]``."""
    arg: int
    op: str
    values: tuple[int, ...]
    why: str
    mask: int = 0xFFFFFFFF   # the low 32 bits: what the kernel reads of an int argument


def _group(name: str, why: str, *calls: str) -> Group:
    return Group(name, why, tuple(calls))


# ---------------------------------------------------------------- groups a profile may allow
GROUPS: dict[str, Group] = {g.name: g for g in (
    _group("memory", "allocators (glibc, CPython, numpy, OCCT) and mapping shared libraries of lazy imports",
           "brk", "madvise", "mmap", "mprotect", "mremap", "munmap"),
    _group("files", "path lookups and opens: lazy imports, fonts, tracebacks reading sources "
           "(what a path reaches is the mount view's and Landlock's job)",
           "access", "faccessat", "faccessat2", "getcwd", "getdents64", "lstat", "newfstatat", "openat",
           "readlink", "readlinkat", "stat", "statx"),
    _group("io", "reading and writing open descriptors: files, pipes, /dev/null, the session socket "
           "(RLIMIT_FSIZE=0 makes every file write fail)",
           "fstat", "lseek", "pread64", "read", "readv", "write", "writev"),
    _group("fds", "descriptor bookkeeping: close, dup, fcntl and ioctl (both argument-filtered)",
           "close", "close_range", "dup", "dup2", "dup3", "fcntl", "ioctl"),
    _group("poll", "waiting on descriptors: select/poll/epoll (selectors, the protocol, library event loops)",
           "epoll_create1", "epoll_ctl", "epoll_pwait", "epoll_wait", "poll", "ppoll", "pselect6", "select"),
    _group("time", "clocks and sleeping: time.time/monotonic/sleep",
           "clock_getres", "clock_gettime", "clock_nanosleep", "gettimeofday", "nanosleep"),
    _group("signals", "CPython's signal handling, faulthandler's stack, sigwaitinfo in snapshots, "
           "raise/abort (tgkill, never SIGCONT)",
           "restart_syscall", "rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigtimedwait",
           "sigaltstack", "tgkill"),
    _group("fork", "the head/next/snapshot chain and os.fork in user code: plain fork flags only, then reap",
           "clone", "set_robust_list", "wait4", "waitid"),
    _group("process", "the process itself: exit, futex locks, its ids, CPU affinity (os.cpu_count), "
           "prctl (never PR_SET_NAME)",
           "exit", "exit_group", "futex", "getpid", "getppid", "gettid", "prctl", "sched_getaffinity",
           "sched_yield"),
    _group("info", "reading back identity, limits, usage, uname and randomness (os.urandom, hash seeds)",
           "getegid", "geteuid", "getgid", "getrandom", "getrlimit", "getrusage", "getuid", "prlimit64",
           "uname"),
    _group("ipc", "pipes between head and next, and the inherited session socket (no socket can be made)",
           "getpeername", "getsockname", "getsockopt", "pipe2", "recvfrom", "recvmsg", "sendmsg", "sendto",
           "shutdown"),
    # ------------------------------------------------------------ groups a profile may kill
    _group("exploit", "kernel attack surface no workload calls: kill at the first attempt (SIGSYS) "
           "instead of an error to probe with",
           "bpf", "delete_module", "finit_module", "init_module", "ioperm", "iopl", "kexec_file_load",
           "kexec_load", "open_by_handle_at", "perf_event_open", "process_vm_writev", "ptrace",
           "userfaultfd"),
)}

# Never allowed, whatever a profile says (EPERM unless the profile kills them). clone and ioctl
# are not here: they are allowed with the argument rules below.
ALWAYS_DENIED = _group(
    "always-denied", "escape and host-changing calls: the layer refuses a profile that allows one",
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
HARD_DENY = ALWAYS_DENIED.calls

# ---------------------------------------------------------------- argument rules, by syscall
CLONE_NS_FLAGS = (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC
                  | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET)
SIGCHLD, SIGCONT, PR_SET_NAME = 17, 18, 15
CLONE_PARENT_SETTID, CLONE_CHILD_CLEARTID, CLONE_CHILD_SETTID = 0x00100000, 0x00200000, 0x01000000
# clone's flags as the kernel reads them: all but these must be 0, and the exit signal (low byte) SIGCHLD
FORK_FLAGS_MASK = 0xFFFFFFFF & ~(CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID | CLONE_CHILD_SETTID)

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
_FCNTL = ArgRule(1, "masked_eq", tuple(FCNTL_ALLOWED.values()),
                 "no F_SETOWN/F_SETOWN_EX/F_SETSIG/F_SETLEASE/F_NOTIFY: an fd's signals (e.g. SIGCONT "
                 "to a process the CPU watchdog stopped) never go to another process")

ARG_RULES: dict[str, ArgRule] = {
    "clone": ArgRule(0, "masked_eq", (SIGCHLD,),
                     "plain fork only (exit signal SIGCHLD, *_SETTID/CLEARTID): no CLONE_NEW*, CLONE_THREAD, "
                     "CLONE_PARENT, CLONE_VM...; every process descends from the call's process",
                     mask=FORK_FLAGS_MASK),
    "prctl": ArgRule(0, "ne", (PR_SET_NAME,), "no PR_SET_NAME: no renaming to look like a host daemon"),
    "ioctl": ArgRule(1, "masked_eq", tuple(IOCTL_ALLOWED.values()),
                     "only " + ", ".join(IOCTL_ALLOWED) + ": no TIOCSTI/TIOCLINUX terminal injection"),
    "fcntl": _FCNTL,
    "fcntl64": _FCNTL,
    "tgkill": ArgRule(2, "ne", (SIGCONT,), "any signal but SIGCONT, which could continue a stopped process"),
}
# with threads=True (code, never a profile): any clone but a new namespace
THREADED_CLONE = ArgRule(0, "masked_eq", (0,), "any clone but CLONE_NEW*", mask=CLONE_NS_FLAGS)


def members(spec: str) -> tuple[str, ...]:
    """The calls an entry of a profile list names: ``@group`` -> its calls, a name -> itself.
    Raises KeyError for an unknown group."""
    if spec.startswith("@"):
        return GROUPS[spec[1:]].calls
    return (spec,)

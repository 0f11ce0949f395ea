"""Seccomp layer on the real kernel: a forked child loads the default profile's
filter, then tries what it must block; plus the whole stack (mount view,
Landlock, privilege drop, seccomp, in that order, in fresh namespaces) still
runs a real build123d workload. Needs unprivileged user namespaces, not root.
The filter the shipped profiles build is compared, as BPF, with the one built
from the flat allowlist they had before syscall groups (frozen below)."""
import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import ctypes  # noqa: E402
import errno  # noqa: E402
import platform  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402

import pyseccomp  # noqa: E402
import pytest  # noqa: E402

from jail.wire.errors import LayerError  # noqa: E402
from jail.layers.seccomp import apply_seccomp, build_filter  # noqa: E402
from jail.layers.syscalls import GROUPS, HARD_DENY  # noqa: E402
from launcher.profile import ProfileError, load_profile  # noqa: E402

from jailchild import CLONE_NEWUSER, _libc, errno_of, in_session


PROFILE = load_profile("default")
_libc.syscall.restype = ctypes.c_long


def nr(name):
    return pyseccomp.resolve_syscall(pyseccomp.system_arch(), name)


def raw(name, *args):
    """syscall(name, args...) -> 'OK' or errno name."""
    res = _libc.syscall(ctypes.c_long(nr(name)), *[ctypes.c_long(a) for a in args])
    return "OK" if res >= 0 else errno.errorcode.get(ctypes.get_errno(), "?")


def load_default(**kw):
    return apply_seccomp(PROFILE.seccomp_allow, PROFILE.seccomp_kill, PROFILE.seccomp_enosys,
                         PROFILE.seccomp_default, **kw)


def test_denied_calls_get_eperm_or_enosys(tmp_path):
    def fn():
        ev = load_default()
        out = {"ev": ev}
        out["socket_inet"] = errno_of(lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM))
        out["socket_unix"] = errno_of(lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM))
        out["socketpair"] = errno_of(lambda: socket.socketpair())
        out["execv"] = errno_of(lambda: os.execv("/bin/true", ["true"]))
        out["unshare"] = raw("unshare", CLONE_NEWUSER)
        out["clone3"] = raw("clone3", 0, 0)
        out["clone_newuser"] = raw("clone", CLONE_NEWUSER | signal.SIGCHLD, 0, 0, 0, 0)
        out["mount"] = raw("mount", 0, 0, 0, 0, 0)
        out["kill_parent"] = errno_of(lambda: os.kill(os.getppid(), 0))
        out["personality"] = raw("personality", 0xFFFFFFFF)
        out["setuid"] = raw("setuid", 0)
        fd = os.open("/dev/null", os.O_RDONLY)
        out["tiocsti"] = raw("ioctl", fd, 0x5412, 0)
        out["tiocsti_hi"] = raw("ioctl", fd, (1 << 32) | 0x5412, 0)
        out["tcgets"] = raw("ioctl", fd, 0x5401, 0)  # allowed: kernel says ENOTTY
        import threading
        try:
            threading.Thread(target=lambda: None).start()
            out["thread"] = "OK"
        except RuntimeError as e:
            out["thread"] = str(e)
        pid = os.fork()  # plain fork still works
        if pid == 0:
            os._exit(7)
        out["fork"] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        out["pipe"] = errno_of(lambda: os.pipe())
        out["open_read"] = errno_of(lambda: open(os.__file__).read(10))
        return out

    out = in_session(fn, namespaces=False)["ok"]
    ev = out["ev"]
    assert ev["allowed"] == len(PROFILE.seccomp_allow)
    assert ev["threads_allowed"] is False
    assert "socket" in ev["denied_hardcoded"] and "execve" in ev["denied_hardcoded"]
    assert "ptrace" in ev["killed"]
    for k in ("socket_inet", "socket_unix", "socketpair", "execv", "unshare", "clone_newuser",
              "mount", "kill_parent", "personality", "setuid", "tiocsti", "tiocsti_hi"):
        assert out[k] == "EPERM", k
    assert out["clone3"] == "ENOSYS"
    assert out["tcgets"] == "ENOTTY"
    assert out["thread"] == "can't start new thread"
    assert out["fork"] == 7 and out["pipe"] == "OK" and out["open_read"] == "OK"


@pytest.mark.parametrize("name,args", [("ptrace", (0, 0, 0, 0)), ("bpf", (0, 0, 0)),
                                       ("perf_event_open", (0, 0, -1, -1, 0))])
def test_kill_list_kills_with_sigsys(name, args):
    def fn():
        load_default()
        raw(name, *args)
        return "survived"

    out = in_session(fn, namespaces=False)
    assert out.get("ok") is None and out["signal"] == signal.SIGSYS


@pytest.mark.skipif(platform.machine() != "x86_64", reason="x32 ABI is x86_64 only")
def test_x32_abi_is_killed():
    def fn():
        load_default()
        _libc.syscall(ctypes.c_long(0x40000000 | 39))  # x32 getpid
        return "survived"

    out = in_session(fn, namespaces=False)
    assert out.get("ok") is None and out["signal"] == signal.SIGSYS


def test_default_kill_action():
    def fn():
        apply_seccomp(PROFILE.seccomp_allow, PROFILE.seccomp_kill, PROFILE.seccomp_enosys, "kill")
        out = {"socket": errno_of(lambda: socket.socket())}  # hard-coded deny stays EPERM
        _libc.syscall(ctypes.c_long(nr("sync")))  # not allowed -> killed
        return out

    out = in_session(fn, namespaces=False)
    assert "ok" not in out and out["signal"] == signal.SIGSYS


@pytest.mark.parametrize("bad", ["socket", "execve", "ptrace", "unshare", "mount"])
def test_profile_cannot_allow_hard_denied(bad):
    with pytest.raises(LayerError) as ei:
        apply_seccomp(list(PROFILE.seccomp_allow) + [bad], [], [])
    assert ei.value.layer == "seccomp" and bad in ei.value.reason


def test_unknown_syscall_name_is_an_error():
    with pytest.raises(LayerError):
        apply_seccomp(["read", "not_a_syscall"], [], [])


def test_profiles_lists_are_sane():
    strict = load_profile("strict")
    assert strict.seccomp_allow == PROFILE.seccomp_allow and strict.seccomp_kill == PROFILE.seccomp_kill
    assert list(PROFILE.seccomp_allow) == sorted(PROFILE.seccomp_allow)
    assert "clone3" in PROFILE.seccomp_enosys
    for must in ("read", "write", "mmap", "futex", "clone", "wait4", "sendmsg", "recvmsg", "exit_group"):
        assert must in PROFILE.seccomp_allow
    assert strict.required("mountview") and strict.require_landlock_abi == 4


def test_all_four_layers_then_build123d_workload(tmp_path):
    from jail.layers.landlock import abi_version, apply_landlock
    from jail.layers.mountview import apply_mount_view
    from jail.layers.privileges import drop_privileges

    if abi_version() < 1:
        pytest.skip("no Landlock")
    import io
    from OCP.OSD import OSD_ThreadPool
    OSD_ThreadPool.DefaultPool_s(1)  # what the zygote does before any geometry
    import build123d as bd

    secret = tmp_path / "secret"
    secret.write_text("s3cret")
    home_secret = str(secret)
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)  # made before the jail

    def fn():
        ev = {"mv": apply_mount_view(list(PROFILE.read_paths), list(PROFILE.devices)),
              "ll": apply_landlock(list(PROFILE.read_paths), list(PROFILE.devices)),
              "pr": drop_privileges(),
              "sc": load_default()}
        part = bd.Box(10, 10, 10) - bd.Cylinder(2, 20)
        buf = io.BytesIO()
        bd.export_step(part, buf)
        b.sendmsg([b"step", buf.getvalue()[:64]])
        return {
            "pid": os.getpid(), "volume": part.volume, "valid": part.is_valid,
            "step_len": len(buf.getvalue()),
            "secret": errno_of(lambda: open(home_secret).read()),
            "socket": errno_of(lambda: socket.socket()),
            "exec": errno_of(lambda: os.execv(os.path.realpath(sys.executable), ["python"])),
            "write": errno_of(lambda: open("/usr/lib/evil", "w")),
            "cap_eff": ev["pr"]["CapEff"],
        }

    out = in_session(fn)["ok"]
    msg = a.recv(1 << 16)
    a.close()
    b.close()
    import math
    assert out["pid"] == 1
    assert math.isclose(out["volume"], 1000 - math.pi * 4 * 10, rel_tol=1e-6)
    assert out["valid"] is True and out["step_len"] > 1000
    assert msg.startswith(b"step")
    assert out["secret"] == "ENOENT"          # not even in the view
    assert out["socket"] == "EPERM"
    assert out["exec"] == "EPERM"
    assert out["write"] == "EROFS"
    assert int(out["cap_eff"], 16) == 0


# ----------------------------------------------------------------- the policy before syscall groups
# profiles/default.toml's flat lists and jail/layers/seccomp.py's argument rules as they were before
# jail/layers/syscalls.py (commit ea72420). A change of the effective policy must show up here.
OLD_ALLOW = (
    "access", "brk", "clock_getres", "clock_gettime", "clock_nanosleep", "clone", "close", "close_range", "dup",
    "dup2", "dup3", "epoll_create1", "epoll_ctl", "epoll_pwait", "epoll_wait", "exit", "exit_group", "faccessat",
    "faccessat2", "fcntl", "fstat", "futex", "getcwd", "getdents64", "getegid", "geteuid", "getgid", "getpeername",
    "getpid", "getppid", "getrandom", "getrlimit", "getrusage", "getsockname", "getsockopt", "gettid",
    "gettimeofday", "getuid", "ioctl", "lseek", "lstat", "madvise", "mmap", "mprotect", "mremap", "munmap",
    "nanosleep", "newfstatat", "openat", "pipe2", "poll", "ppoll", "prctl", "pread64", "prlimit64", "pselect6",
    "read", "readlink", "readlinkat", "readv", "recvfrom", "recvmsg", "restart_syscall", "rt_sigaction",
    "rt_sigprocmask", "rt_sigreturn", "rt_sigtimedwait", "sched_getaffinity", "sched_yield", "select", "sendmsg",
    "sendto", "set_robust_list", "shutdown", "sigaltstack", "stat", "statx", "tgkill", "uname", "wait4", "waitid",
    "write", "writev",
)
OLD_KILL = ("bpf", "delete_module", "finit_module", "init_module", "ioperm", "iopl", "kexec_file_load", "kexec_load",
            "open_by_handle_at", "perf_event_open", "process_vm_writev", "ptrace", "userfaultfd")
OLD_FCNTL = (0, 1, 2, 3, 4, 5, 6, 7, 9, 11, 16, 36, 37, 38, 1025, 1030, 1031, 1032, 1033, 1034)
OLD_IOCTL = (0x5401, 0x5413, 0x541B, 0x5421, 0x5450, 0x5451)
OLD_FORK_MASK, OLD_NS_FLAGS = 0xFECFFFFF, 0x7E020000


def _bpf(f) -> bytes:
    with tempfile.TemporaryFile() as t:
        f.export_bpf(t)
        t.seek(0)
        return t.read()


def _old_filter(allow, kill, enosys, default_action, threads=False):
    """The filter the pre-groups jail/layers/seccomp.py built (its rules, restated)."""
    sc = pyseccomp
    f = sc.SyscallFilter(sc.ERRNO(errno.EPERM) if default_action == "errno" else sc.KILL_PROCESS)
    f.set_attr(sc.Attr.ACT_BADARCH, sc.KILL_PROCESS)
    f.set_attr(sc.Attr.CTL_TSYNC, 1)
    f.set_attr(sc.Attr.CTL_NNP, 1)
    for name in allow:
        if name == "clone":
            f.add_rule(sc.ALLOW, name, sc.Arg(0, sc.MASKED_EQ, OLD_NS_FLAGS, 0) if threads
                       else sc.Arg(0, sc.MASKED_EQ, OLD_FORK_MASK, 17))
        elif name == "prctl":
            f.add_rule(sc.ALLOW, name, sc.Arg(0, sc.NE, 15))
        elif name in ("ioctl", "fcntl"):
            for cmd in OLD_IOCTL if name == "ioctl" else OLD_FCNTL:
                f.add_rule(sc.ALLOW, name, sc.Arg(1, sc.MASKED_EQ, 0xFFFFFFFF, cmd))
        elif name == "tgkill":
            f.add_rule(sc.ALLOW, name, sc.Arg(2, sc.NE, 18))
        else:
            f.add_rule(sc.ALLOW, name)
    for name in kill:
        if default_action != "kill":
            f.add_rule(sc.KILL_PROCESS, name)
    for name in enosys:
        f.add_rule(sc.ERRNO(errno.ENOSYS), name)
    if default_action != "errno":
        for name in HARD_DENY:
            if name not in kill and nr(name) >= 0:
                f.add_rule(sc.ERRNO(errno.EPERM), name)
    return f


@pytest.mark.parametrize("name", ["default", "strict"])
def test_groups_resolve_to_the_flat_lists_they_replaced(name):
    p = load_profile(name)
    assert p.seccomp_allow == OLD_ALLOW and p.seccomp_kill == OLD_KILL and p.seccomp_enosys == ("clone3",)
    assert p.seccomp_default == "errno"


@pytest.mark.parametrize("threads", [False, True])
@pytest.mark.parametrize("action", ["errno", "kill"])
def test_the_kernel_gets_the_same_filter_as_before_groups(action, threads):
    args = (PROFILE.seccomp_allow, PROFILE.seccomp_kill, PROFILE.seccomp_enosys, action)
    new = _bpf(build_filter(*args, threads=threads))
    assert new == _bpf(_old_filter(OLD_ALLOW, OLD_KILL, ("clone3",), action, threads))
    # and the comparison can fail: one rule less is a different program
    assert new != _bpf(_old_filter(OLD_ALLOW[1:], OLD_KILL, ("clone3",), action, threads))


def test_groups_are_disjoint_and_never_allow_an_always_denied_call():
    seen = {}
    for g in GROUPS.values():
        assert g.why and g.calls, g.name
        for call in g.calls:
            assert call not in seen, f"{call} is in @{seen.get(call)} and @{g.name}"
            seen[call] = g.name
            if g.name != "exploit":
                assert call not in HARD_DENY, call
    assert set(GROUPS["exploit"].calls) <= set(HARD_DENY)


def _load(tmp_path, seccomp: str):
    f = tmp_path / "p.toml"
    f.write_text('extends = "default"\nname = "p"\n[seccomp]\n' + seccomp)
    return load_profile(str(f))


def test_profile_lists_mix_groups_and_calls(tmp_path):
    p = _load(tmp_path, 'allow = ["@time", "read", "nanosleep", "@memory"]\nkill = ["sync", "@exploit"]\n')
    assert p.seccomp_allow == tuple(sorted({"read", *GROUPS["time"].calls, *GROUPS["memory"].calls}))
    assert p.seccomp_kill == ("sync", *GROUPS["exploit"].calls)
    assert p.seccomp_enosys == ("clone3",)  # inherited from default
    assert _load(tmp_path, "allow = []\n").seccomp_allow == ()  # replaces the inherited list, as before


@pytest.mark.parametrize("entry", ["@nope", "@always-denied", "@"])
def test_an_unknown_group_is_a_clear_error(tmp_path, entry):
    with pytest.raises(ProfileError) as ei:
        _load(tmp_path, f'allow = ["@memory", "{entry}"]\n')
    msg = str(ei.value)
    assert "p.toml" in msg and "[seccomp] allow" in msg and repr(entry) in msg and "@memory" in msg, msg

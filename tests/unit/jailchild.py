"""Shared harness of the layer tests: run a function in a forked child the way a session
init runs (fresh user+pid+net+ipc+uts+mount namespaces, uid 0 mapped to the caller's ids,
then pid 1), or in a plain forked child. Real kernel, works unprivileged.

Imported as ``jailchild`` (pytest puts this directory on sys.path for its test modules).
"""
import ctypes
import errno
import json
import os
import sys
import traceback

from tests.helpers.proc import wait_until
from jail.layers.libc import (CLONE_NEWIPC, CLONE_NEWNET, CLONE_NEWNS, CLONE_NEWPID,  # noqa: F401
                       CLONE_NEWUSER, CLONE_NEWUTS)

_libc = ctypes.CDLL(None, use_errno=True)


def _send(w, obj):
    os.write(w, (json.dumps(obj) + "\n").encode())


def _frameless_threads() -> int:
    return len(os.listdir("/proc/self/task")) - len(sys._current_frames())


def _native_threads(timeout: float = 2.0) -> int:
    """Threads of this process without a Python frame, once those that are only starting or ending
    (a Python thread between its OS thread and its first or after its last frame) are gone: waited
    for until ``timeout``. What stays is a native pool thread (BLAS, OCCT)."""
    wait_until(lambda: _frameless_threads() <= 0, timeout)
    return max(_frameless_threads(), 0)


def in_session(fn, *, namespaces=True):
    """Run fn() like a session init would: in a forked child that unshares
    user+pid+net+ipc+uts+mount namespaces, maps uid/gid 0 to the caller's ids,
    then forks the pid-1 process that calls fn(). Returns fn's result merged
    with {"signal": <signal that killed pid 1 or None>}. Works unprivileged."""
    native = _native_threads()
    if native > 0:  # a BLAS/OCCT pool thread: the forked child could wait forever on its locks
        raise RuntimeError(f"the test process has {native} native thread(s) (a BLAS or OCCT pool?): "
                           "forking it to apply the layers could deadlock; see tests/conftest.py")
    r, w = os.pipe()
    uid, gid = os.getuid(), os.getgid()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            if namespaces:
                flags = CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNS
                if _libc.unshare(flags) != 0:
                    raise OSError(ctypes.get_errno(), "unshare")
                for name, text in (("setgroups", "deny"), ("uid_map", f"0 {uid} 1"), ("gid_map", f"0 {gid} 1")):
                    with open(f"/proc/self/{name}", "w") as f:
                        f.write(text)
            child = os.fork()
            if child == 0:
                try:
                    _send(w, {"ok": fn()})
                except BaseException as e:
                    _send(w, {"error": repr(e), "tb": traceback.format_exc()})
                os._exit(0)
            _, st = os.waitpid(child, 0)
            _send(w, {"signal": os.WTERMSIG(st) if os.WIFSIGNALED(st) else None})
        except BaseException as e:
            _send(w, {"error": repr(e), "tb": traceback.format_exc()})
        os._exit(0)
    os.close(w)
    data = b""
    while chunk := os.read(r, 1 << 20):
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    out = {}
    for line in data.decode().splitlines():
        out.update(json.loads(line))
    assert "error" not in out, out.get("tb")
    return out


def errno_of(f):
    try:
        f()
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
    return "OK"


def in_child(fn):
    """fn() in a plain forked child (no namespaces); its result, asserting it was not killed."""
    out = in_session(fn, namespaces=False)
    assert out.get("signal") is None, f"child killed by signal {out['signal']}"
    return out["ok"]

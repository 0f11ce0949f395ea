"""Privilege-drop layer on the real kernel: in a fresh user namespace (where we are
root with a full capability set), drop everything, then check the read-back and
that privileged operations now fail. Needs unprivileged user namespaces, not root."""
import ctypes
import json
import os

from jail.layers.privileges import drop_privileges, read_status

from jailchild import CLONE_NEWNS, CLONE_NEWUSER, _libc, errno_of, in_session


def _mount_tmpfs():
    if _libc.mount(b"tmpfs", b"/tmp", b"tmpfs", 0, None) != 0:
        raise OSError(ctypes.get_errno(), "mount")


def _unshare_ns():
    if _libc.unshare(CLONE_NEWNS) != 0:
        raise OSError(ctypes.get_errno(), "unshare")


def _unshare_user():
    if _libc.unshare(CLONE_NEWUSER) != 0:
        raise OSError(ctypes.get_errno(), "unshare")


def test_read_status_fields():
    st = read_status()
    for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        int(st[k], 16)
    assert st["NoNewPrivs"] in (0, 1) and st["Seccomp"] in (0, 1, 2)


def test_drop_privileges_everything_zero():
    def fn():
        before = read_status()
        ev = drop_privileges()
        after = read_status()
        return {
            "before": before, "ev": ev, "after": after,
            "mount": errno_of(_mount_tmpfs),
            "unshare_ns": errno_of(_unshare_ns),
            "sethostname": errno_of(lambda: _libc.sethostname(b"x", 1) == 0 or (_ for _ in ()).throw(
                OSError(ctypes.get_errno(), "sethostname"))),
            "nested_userns": errno_of(_unshare_user),
        }

    out = in_session(fn)["ok"]
    assert int(out["before"]["CapEff"], 16) != 0  # root in our user namespace
    for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        assert int(out["ev"][k], 16) == 0, k
        assert int(out["after"][k], 16) == 0, k
    assert out["ev"]["NoNewPrivs"] == 1 and out["after"]["NoNewPrivs"] == 1
    assert out["ev"]["securebits"] & 0xEF == 0xEF  # all but KEEP_CAPS, all locked
    assert out["mount"] == "EPERM"
    assert out["unshare_ns"] == "EPERM"
    assert out["sethostname"] == "EPERM"
    # creating a user namespace is unprivileged, so this layer does not block it
    # (seccomp does); it must just not give the caps back to *this* process
    assert out["nested_userns"] in ("OK", "EPERM", "ENOSPC")


def test_children_inherit_the_drop():
    def fn():
        drop_privileges()
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.write(w, json.dumps(read_status()).encode())
            os._exit(0)
        os.close(w)
        data = os.read(r, 65536)
        os.waitpid(pid, 0)
        return json.loads(data)

    st = in_session(fn)["ok"]
    assert all(int(st[k], 16) == 0 for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"))
    assert st["NoNewPrivs"] == 1


def test_read_back_without_proc():
    """Under Landlock /proc is hidden; the read-back falls back to capget/prctl."""
    from jail.layers.landlock import abi_version, apply_landlock
    import pytest
    if abi_version() < 1:
        pytest.skip("no Landlock")

    def fn():
        apply_landlock(["/usr/lib"], [])
        ev = drop_privileges()
        return {"ev": ev, "proc": errno_of(lambda: open("/proc/self/status").close())}

    out = in_session(fn)["ok"]
    assert out["proc"] == "EACCES"
    assert out["ev"]["source"] == "capget+prctl"
    assert int(out["ev"]["CapEff"], 16) == 0 and int(out["ev"]["CapBnd"], 16) == 0
    assert out["ev"]["NoNewPrivs"] == 1

"""Mount-view layer on the real kernel: in a fresh user+mount+pid namespace (like a
session init), build the view, then check that hidden paths do not exist and
nothing is writable. Needs unprivileged user namespaces, not root."""
import ctypes
import os
import sys
import sysconfig

import pytest

from jail.wire.errors import LayerError
from jail.layers.mountview import apply_mount_view

from jailchild import CLONE_NEWNS, CLONE_NEWUSER, _libc, errno_of, in_session


PY_PATHS = sorted({sys.prefix, sys.base_prefix, sysconfig.get_paths()["stdlib"],
                   sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
READ = PY_PATHS + ["/usr/lib", "/lib", "/lib64", "/usr/lib64", "/nonexistent/path"]
DEVS = ["/dev/null", "/dev/zero", "/dev/urandom"]


@pytest.fixture
def secret(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "secret").write_text("s3cret")
    return str(home / "secret")


def test_view_hides_and_is_read_only(secret):
    home = os.path.expanduser("~")
    some_read = sysconfig.get_paths()["stdlib"]

    def fn():
        ev = apply_mount_view(READ, DEVS)
        out = {"ev": ev, "pid": os.getpid(), "root": sorted(os.listdir("/")),
               "proc": sorted(os.listdir("/proc"))}
        for name, p in (("secret", secret), ("secret_dir", os.path.dirname(secret)),
                        ("etc_passwd", "/etc/passwd"), ("home", home), ("sys", "/sys"),
                        ("dev_sda", "/dev/sda"), ("run", "/run")):
            out["stat_" + name] = errno_of(lambda: os.stat(p))
            out["open_" + name] = errno_of(lambda: open(p).close())
        out["access_secret"] = os.access(secret, os.F_OK)
        out["write_root"] = errno_of(lambda: open("/newfile", "w"))
        out["mkdir_root"] = errno_of(lambda: os.mkdir("/newdir"))
        out["write_read_path"] = errno_of(lambda: open(os.path.join(some_read, "evil.py"), "w"))
        out["mkdir_tmp"] = errno_of(lambda: os.mkdir(f"/tmp/b123d-view-{os.getpid()}-{id(out)}"))  # a fresh name: /tmp/<clone> may be a read path
        out["read_stdlib"] = os.path.isfile(os.path.join(some_read, "os.py"))
        out["devnull"] = errno_of(lambda: open("/dev/null", "w").write("x"))
        out["urandom"] = len(open("/dev/urandom", "rb").read(8))
        out["lib_link"] = os.readlink("/lib") if os.path.islink("/lib") else None
        import json as _json, decimal  # noqa: F401  lazy imports still work
        out["lazy_import"] = "decimal" in sys.modules
        return out

    out = in_session(fn)["ok"]
    ev = out["ev"]
    assert out["pid"] == 1
    assert ev["proc"] is True
    assert "/nonexistent/path" in ev["skipped"]
    assert set(ev["devices"]) == set(DEVS)
    # only our own pid namespace in /proc
    assert [p for p in out["proc"] if p.isdigit()] == ["1"]
    for name in ("secret", "secret_dir", "etc_passwd", "home", "sys", "dev_sda", "run"):
        if name == "home" and any(home == p or home.startswith(p + "/") for p in PY_PATHS):
            continue  # a venv under $HOME makes that part of $HOME a read path
        assert out["stat_" + name] == "ENOENT", name
        assert out["open_" + name] == "ENOENT", name
    assert out["access_secret"] is False
    assert out["write_root"] == "EROFS" and out["mkdir_root"] == "EROFS"
    assert out["write_read_path"] == "EROFS"
    assert out["mkdir_tmp"] in ("EROFS", "ENOENT")
    assert out["read_stdlib"] is True
    assert out["devnull"] == "OK" and out["urandom"] == 8
    if os.path.islink("/lib"):
        assert out["lib_link"] == os.readlink("/lib")
    assert out["lazy_import"] is True


def test_bound_paths_are_nosuid_nodev_ro():
    stdlib = sysconfig.get_paths()["stdlib"]

    def fn():
        apply_mount_view([stdlib], ["/dev/null"], mount_proc=False)
        f = os.statvfs(stdlib).f_flag
        root = os.statvfs("/").f_flag
        return {"ro": bool(f & os.ST_RDONLY), "nosuid": bool(f & os.ST_NOSUID),
                "nodev": bool(f & os.ST_NODEV), "root_ro": bool(root & os.ST_RDONLY),
                "proc": os.path.exists("/proc/self")}

    out = in_session(fn)["ok"]
    assert out == {"ro": True, "nosuid": True, "nodev": True, "root_ro": True, "proc": False}


def test_fails_closed_without_own_mount_namespace():
    def fn():
        try:
            apply_mount_view(["/usr/lib"], [])
        except LayerError as e:
            return {"layer": e.layer, "reason": e.reason}
        return None

    # no namespaces: an unprivileged caller gets EPERM; as host root we must not
    # touch the host's mounts, so only run this when not root.
    if os.geteuid() == 0:
        pytest.skip("would remount the host's / when run as host root")
    out = in_session(fn, namespaces=False)["ok"]
    assert out["layer"] == "mountview" and "EPERM" in out["reason"]


def test_proc_mount_failure_raises_layer_error():
    """Without a pid namespace of our own, a fresh procfs cannot be mounted."""
    def fn():
        if _libc.unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0:
            raise OSError(ctypes.get_errno(), "unshare")
        for name, text in (("setgroups", "deny"), ("uid_map", "0 0 1"), ("gid_map", "0 0 1")):
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)
        try:
            apply_mount_view(["/usr/lib"], [], mount_proc=True)
        except LayerError as e:
            return {"layer": e.layer, "reason": e.reason}
        return None

    out = in_session(fn)["ok"]
    # we are pid 1 of a pid ns owned by the *outer* user ns, not the new one
    assert out["layer"] == "mountview" and "procfs" in out["reason"]

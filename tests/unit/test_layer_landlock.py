"""Landlock layer on the real kernel: a forked child applies it, then tries what it must block.

Landlock needs no privileges (no_new_privs is enough), so a plain fork suffices;
runs the same as root or not.
"""
import os
import socket

import pytest

from jail.layers import landlock
from jail.wire.errors import LayerError
from jailchild import errno_of, in_child

pytestmark = pytest.mark.skipif(landlock.abi_version() < 1, reason="kernel without Landlock")


@pytest.fixture
def tree(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "secret").write_text("s3cret")
    ro = tmp_path / "ro"
    ro.mkdir()
    (ro / "data.txt").write_text("hello")
    single = tmp_path / "single.txt"
    single.write_text("one file")
    return {"home": str(home), "ro": str(ro), "single": str(single)}


def test_abi_version_is_int():
    v = landlock.abi_version()
    assert isinstance(v, int) and v >= 1


def test_blocks_reads_writes_exec_outside(tree):
    ro, home = tree["ro"], tree["home"]

    def fn():
        ev = landlock.apply_landlock([ro, tree["single"], "/does/not/exist"], ["/dev/null"])
        return {
            "ev": ev,
            "secret": errno_of(lambda: open(os.path.join(home, "secret")).read()),
            "listdir_home": errno_of(lambda: os.listdir(home)),
            "etc_passwd": errno_of(lambda: open("/etc/passwd").read()),
            "read_ro": open(os.path.join(ro, "data.txt")).read(),
            "read_single": open(tree["single"]).read(),
            "listdir_ro": sorted(os.listdir(ro)),
            "write_ro": errno_of(lambda: open(os.path.join(ro, "data.txt"), "w")),
            "create_ro": errno_of(lambda: open(os.path.join(ro, "new"), "x")),
            "mkdir_ro": errno_of(lambda: os.mkdir(os.path.join(ro, "d"))),
            "unlink_ro": errno_of(lambda: os.unlink(os.path.join(ro, "data.txt"))),
            "devnull": errno_of(lambda: open("/dev/null", "w").write("x")),
            "exec": errno_of(lambda: os.execv("/bin/true", ["true"])),
        }

    out = in_child(fn)
    ev = out["ev"]
    assert ev["abi"] == landlock.abi_version()
    assert "execute" in ev["handled_fs"] and "write_file" in ev["handled_fs"]
    assert {r["path"] for r in ev["rules"]} == {ro, tree["single"], "/dev/null"}
    assert [s["path"] for s in ev["skipped"]] == ["/does/not/exist"]
    for r in ev["rules"]:
        assert "execute" not in r["access"]
    assert out["secret"] == "EACCES"
    assert out["listdir_home"] == "EACCES"
    assert out["etc_passwd"] == "EACCES"
    assert out["read_ro"] == "hello" and out["read_single"] == "one file"
    assert out["listdir_ro"] == ["data.txt"]
    for k in ("write_ro", "create_ro", "mkdir_ro", "unlink_ro"):
        assert out[k] == "EACCES", k
    assert out["devnull"] == "OK"
    assert out["exec"] == "EACCES"


@pytest.mark.skipif(landlock.abi_version() < 4, reason="TCP rules need Landlock ABI 4")
def test_tcp_connect_and_bind_denied(tree):
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port = srv.getsockname()[1]

    def fn():
        ev = landlock.apply_landlock([tree["ro"]], [])
        s = socket.socket()
        s2 = socket.socket()
        return {"net": ev["handled_net"],
                "connect": errno_of(lambda: s.connect(("127.0.0.1", port))),
                "bind": errno_of(lambda: s2.bind(("127.0.0.1", 0)))}

    try:
        out = in_child(fn)
    finally:
        srv.close()
    assert out["net"] == ["bind_tcp", "connect_tcp"]
    assert out["connect"] == "EACCES"
    assert out["bind"] == "EACCES"


@pytest.mark.skipif(landlock.abi_version() < 6, reason="scoping needs Landlock ABI 6")
def test_scoped_signals_and_abstract_unix(tree):
    name = f"\0b123d-landlock-test-{os.getpid()}"
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(name)
    srv.listen(1)
    parent = os.getpid()

    def fn():
        ev = landlock.apply_landlock([tree["ro"]], [])
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        return {"scoped": ev["scoped"],
                "abstract": errno_of(lambda: c.connect(name)),
                "signal_parent": errno_of(lambda: os.kill(parent, 0)),
                "signal_self": errno_of(lambda: os.kill(os.getpid(), 0))}

    try:
        out = in_child(fn)
    finally:
        srv.close()
    assert out["scoped"] == ["abstract_unix_socket", "signal"]
    assert out["abstract"] == "EPERM"
    assert out["signal_parent"] == "EPERM"
    assert out["signal_self"] == "OK"


def test_min_abi_fails_closed(tree):
    def fn():
        try:
            landlock.apply_landlock([tree["ro"]], [], min_abi=99)
        except LayerError as e:
            # and nothing was applied: the home dir is still readable
            return {"layer": e.layer, "reason": e.reason, "still_open": sorted(os.listdir(tree["home"]))}
        return None

    out = in_child(fn)
    assert out["layer"] == "landlock" and "99" in out["reason"]
    assert out["still_open"] == ["secret"]

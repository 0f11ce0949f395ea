"""doctor's socket check against hostile paths and peers (launcher/selftest/service.py).

A symlink at the socket path is reported, never followed (not even to a live daemon); a peer
that answers with junk, terminal escapes, a huge announced frame or a trickle is reported in
escaped words within the deadline; nothing the peer sends reaches the output raw.
"""
from __future__ import annotations

import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from launcher.daemon.client import recv_frame, send_frame
from launcher.selftest import service


def _serve(path, reply: bytes | None, *, trickle: bool = False, greet=None):
    """(the listening socket, an Event set when a peer connects)."""
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(str(path))
    srv.listen()
    seen = threading.Event()

    def run():
        try:
            conn, _ = srv.accept()
        except OSError:
            return
        seen.set()
        with conn:
            conn.settimeout(10)
            try:
                recv_frame(conn)
                if greet is not None:
                    send_frame(conn, greet)
                elif trickle:
                    for b in reply:
                        conn.send(bytes([b]))
                        time.sleep(0.2)
                elif reply is not None:
                    conn.sendall(reply)
            except OSError:
                pass
    threading.Thread(target=run, daemon=True).start()
    return srv, seen


def test_symlinked_socket_path_is_not_followed(tmp_path):
    real = tmp_path / "real.sock"
    srv, seen = _serve(real, None, greet={"server": "build123d-launcher", "pid": 1, "profile": "default"})
    link = tmp_path / "link.sock"
    link.symlink_to(real)
    s, plan = service.check_socket(str(link), "default", deadline_s=1)
    assert "a symlink" in s.state and "not followed" in s.state and plan.state.startswith("embedded")
    assert not seen.wait(0.3), "doctor connected through the symlink"
    srv.close()
    (tmp_path / "file").write_text("x")
    link2 = tmp_path / "to-file.sock"
    link2.symlink_to(tmp_path / "file")
    s, _ = service.check_socket(str(link2), "default", deadline_s=1)
    assert "a symlink" in s.state


ESC = b"\x1b]0;owned\x07\x1b[2J"


@pytest.mark.parametrize("reply", [
    b"\xff\xfe junk that is no frame at all" + ESC,
    struct.pack(">I", 40) + b"\x1b[31mnot json\x00\xff" + ESC + b"....",
    struct.pack(">I", 0xFFFFFFF0) + b"{",
    None,  # greeting as JSON with escapes in every field, below
], ids=["raw-junk", "frame-not-json", "huge-announced", "escapes-in-fields"])
def test_junk_peer_is_reported_escaped(tmp_path, reply):
    p = tmp_path / "d.sock"
    greet = None if reply is not None else {"server": "build123d-launcher", "pid": "\x1b[2J1",
                                            "profile": "default\x1b]0;x\x07", "output_dir": "/o\u202e\n"}
    srv, _ = _serve(p, reply, greet=greet)
    s, plan = service.check_socket(str(p), "default", deadline_s=2)
    srv.close()
    out = json.dumps([vars(s), vars(plan)]) + s.state + s.todo + plan.state
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out and "\n" not in s.state, out
    if reply is not None:
        assert "not the daemon" in s.state and plan.state.startswith("embedded"), s.state
    else:  # a "daemon" whose profile is not ours (escaped): not used
        assert "\\x1b" in s.state and plan.state.startswith("embedded"), s.state


def test_trickling_peer_is_cut_at_the_deadline(tmp_path):
    p = tmp_path / "d.sock"
    srv, _ = _serve(p, struct.pack(">I", 20) + b'{"server": "build1"}', trickle=True)
    t0 = time.monotonic()
    s, _ = service.check_socket(str(p), "default", deadline_s=1)
    took = time.monotonic() - t0
    srv.close()
    assert "no greeting within" in s.state, s.state
    assert took < 5, took  # one deadline for the whole greeting (generous bound, not a timing figure)


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root and setpriv")
def test_socket_of_another_uid_is_named_and_not_read():
    """A socket squatted by another user (here uid 65533): doctor names the uid and reads nothing."""
    d = Path(tempfile.mkdtemp(prefix="b123d-doctor-", dir="/tmp"))  # pytest's tmp_path is 0700: not for 65533
    os.chmod(d, 0o755)
    os.chown(d, 65533, 65533)
    path = d / "d.sock"
    code = ("import socket,sys,os\ns=socket.socket(socket.AF_UNIX);s.bind(sys.argv[1]);os.chmod(sys.argv[1],0o777)\n"
            "s.listen();print('ready',flush=True)\nc,_=s.accept()\n"
            "c.sendall(b'\\x00\\x00\\x00\\x20{\"server\":\"build123d-launcher\"}   ')\nc.recv(1)\n")
    p = subprocess.Popen(["setpriv", "--reuid", "65533", "--regid", "65533", "--clear-groups", sys.executable,
                          "-c", code, str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "ready"
        s, plan = service.check_socket(str(path), "default", deadline_s=2)
    finally:
        p.kill()
        p.wait()
        shutil.rmtree(d)
    assert s.state == f"{path}: served by uid 65533, not by you (0)", s.state
    assert "refuses it" in s.todo and plan.state.startswith("embedded")

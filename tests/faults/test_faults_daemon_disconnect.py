"""Daemon clients that go away during a call (issue 11): their sessions are killed at once, even
mid-call, and their connection slots are freed; other clients are served meanwhile.

A real ``serve --socket S`` daemon on a profile with a long wall clock (120 s) and two connection
slots (``max_sessions = 2``), real clients speaking the daemon's wire protocol. Client A runs
``while True: pass``; the jailed process burning CPU is found in /proc (a process in a pid
namespace other than the daemon's, running, its CPU time growing), then A closes its socket. The
session's pid namespace must be empty within a deadline that is far shorter than the wall
clock (before this fix the call ran on until its timeout and the slot stayed taken), and two
new clients must then both be admitted. Every wait is a poll with a deadline; nothing is timed.
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import pytest

from tests.helpers.cli import REPO
from tests.helpers.faults import profile_path
from tests.helpers.proc import descendants
from launcher.daemon.client import DaemonBackend, DaemonUnavailable, recv_frame, send_frame

DEADLINE_S = 40  # well under the profile's 120 s wall clock


def _profile(tmp) -> str:
    p = tmp / "disconnect.toml"
    p.write_text(f'extends = "{profile_path("faults")}"\nname = "faults_disconnect"\n'
                 "[limits]\ntimeout_s = 120\ncpu_s = 120\nmax_sessions = 2\n")
    return str(p)


def _start_daemon(sock, tmp) -> subprocess.Popen:
    p = subprocess.Popen([sys.executable, "-m", "launcher", "serve", "--socket", str(sock),
                          "--profile", _profile(tmp), "--output-dir", str(tmp / "out")],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=open(tmp / "daemon.log", "ab"), cwd=str(REPO))
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        assert p.poll() is None, f"the daemon exited ({p.returncode}): {(tmp / 'daemon.log').read_text()[-2000:]}"
        if sock.exists():
            try:
                DaemonBackend(str(sock), hello_timeout=60).close()
                return p
            except DaemonUnavailable:
                pass
        time.sleep(0.1)
    p.kill()
    pytest.fail("the daemon never answered")


def _connect(sock) -> socket.socket:
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    c.settimeout(120)
    c.connect(str(sock))
    return c


def _call(c: socket.socket, tool: str, args: dict | None = None) -> dict:
    send_frame(c, {"tool": tool, "args": args or {}})
    return recv_frame(c)


def _pidns(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return None


def _cpu_ticks(pid: int) -> tuple[str, int] | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            rest = f.read().rsplit(")", 1)[1].split()
        return rest[0], int(rest[11]) + int(rest[12])
    except (OSError, IndexError, ValueError):
        return None


def _spinning_session(daemon_pid: int) -> tuple[int, str]:
    """(pid, pid namespace) of the jailed process running the loop: found, not guessed."""
    own = _pidns(daemon_pid)
    first: dict[int, int] = {}
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for pid in descendants(daemon_pid):
            ns, st = _pidns(pid), _cpu_ticks(pid)
            if ns is None or ns == own or st is None:
                continue
            state, ticks = st
            if pid in first and state == "R" and ticks > first[pid] + 20:  # 0.2 s of CPU since first seen
                return pid, ns
            first.setdefault(pid, ticks)
        time.sleep(0.05)
    pytest.fail("no jailed process started spinning")


def _in_ns(daemon_pid: int, ns: str) -> list[int]:
    return [p for p in descendants(daemon_pid) if _pidns(p) == ns]


@pytest.mark.parametrize("how", ["close", "shutdown-rdwr"])
def test_client_gone_mid_call_kills_its_session_and_frees_its_slot(tmp_path, how):
    sock = tmp_path / "d.sock"
    d = _start_daemon(sock, tmp_path)
    try:
        a = _connect(sock)
        assert _call(a, "_hello").get("server") == "build123d-launcher"
        assert _call(a, "execute", {"code": "keep = 1"}).get("ok") is True
        send_frame(a, {"tool": "execute", "args": {"code": "while True:\n    pass\n"}})
        pid, ns = _spinning_session(d.pid)
        assert _in_ns(d.pid, ns), "the spinning process is not below the daemon"

        # the other slot serves another client while A's call runs
        b = _connect(sock)
        assert _call(b, "execute", {"code": "x = 2\nprint(x)"}).get("stdout", "").strip() == "2"
        assert _cpu_ticks(pid) is not None, "A's call ended on its own before the disconnect"
        b.close()

        if how == "shutdown-rdwr":
            a.shutdown(socket.SHUT_RDWR)
        a.close()
        deadline = time.monotonic() + DEADLINE_S
        while _in_ns(d.pid, ns) and time.monotonic() < deadline:
            time.sleep(0.05)
        left = _in_ns(d.pid, ns)
        assert not left, f"the session of a client that went away still runs: {left}"

        # both slots are free again: two new clients are admitted and served
        deadline = time.monotonic() + DEADLINE_S
        while True:
            c1, c2 = _connect(sock), _connect(sock)
            r1 = _call(c1, "execute", {"code": "y = 3"})
            r2 = _call(c2, "execute", {"code": "z = 4"})
            if r1.get("ok") and r2.get("ok"):
                break
            c1.close()
            c2.close()
            assert time.monotonic() < deadline, f"a slot was never freed: {r1} {r2}"
            time.sleep(0.1)
        c1.close()
        c2.close()
        log = (tmp_path / "daemon.log").read_text()
        assert "event=client_gone" in log and "result=client-gone" in log, log[-3000:]
    finally:
        d.terminate()
        try:
            d.wait(30)
        except subprocess.TimeoutExpired:
            d.kill()
            d.wait(10)


def test_half_closed_client_still_gets_its_reply(tmp_path):
    """A client that only shuts down its sending side (it will send nothing more) is not gone:
    its call runs to the end and the reply is delivered."""
    sock = tmp_path / "d.sock"
    d = _start_daemon(sock, tmp_path)
    try:
        a = _connect(sock)
        send_frame(a, {"tool": "execute", "args": {"code": "v = sum(range(10))\nprint(v)"}})
        a.shutdown(socket.SHUT_WR)
        r = recv_frame(a)
        assert r is not None and r.get("stdout", "").strip() == "45", r
        a.close()
    finally:
        d.terminate()
        try:
            d.wait(30)
        except subprocess.TimeoutExpired:
            d.kill()
            d.wait(10)


def test_mcp_client_that_quits_mid_call_frees_its_session(tmp_path):
    """The realistic case: the AI app closes the stdin of its ``launcher mcp --socket S`` process
    while a ``while True: pass`` call runs. The MCP process closes its daemon connection without
    waiting for the call (DaemonBackend.close), exits, and the daemon kills the session."""
    from tests.helpers.faults import Stdio
    sock = tmp_path / "d.sock"
    d = _start_daemon(sock, tmp_path)
    try:
        c = Stdio(tmp_path, ["--socket", str(sock), "--profile", _profile(tmp_path)])
        c.initialize()
        out = c.tool("execute", {"code": "keep = 1"})
        assert out is not None and "rror" not in out, out
        c.send({"jsonrpc": "2.0", "id": 99, "method": "tools/call",
                "params": {"name": "execute", "arguments": {"code": "while True:\n    pass\n"}}})
        pid, ns = _spinning_session(d.pid)
        c.p.stdin.close()  # the app goes away
        c.p.wait(DEADLINE_S)
        deadline = time.monotonic() + DEADLINE_S
        while _in_ns(d.pid, ns) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _in_ns(d.pid, ns), "the session of an MCP client that quit still runs"
        # its slot is free: two new connections are served
        c1, c2 = _connect(sock), _connect(sock)
        try:
            assert _call(c1, "execute", {"code": "y = 3"}).get("ok") is True
            assert _call(c2, "execute", {"code": "z = 4"}).get("ok") is True
        finally:
            c1.close()
            c2.close()
    finally:
        d.terminate()
        try:
            d.wait(30)
        except subprocess.TimeoutExpired:
            d.kill()
            d.wait(10)

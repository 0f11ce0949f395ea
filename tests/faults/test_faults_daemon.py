"""The daemon restarted (SIGTERM, then SIGKILL) under live MCP clients.

Two ``python -m launcher mcp --socket S`` clients talk to a ``serve --socket S``
daemon. The daemon is stopped while one client has an execute in flight:
that call and the clients' next calls get a clear error (the MCP servers stay
up and answer pings), and once a new daemon listens on the same socket the
clients reconnect by themselves into new, empty sessions. After SIGKILL of
the daemon nothing it started survives (pdeathsig + pid namespaces).
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from tests.helpers.cli import REPO
from tests.helpers.faults import Stdio, profile_path
from tests.helpers.proc import descendants, proc_stat
from launcher.daemon.client import DaemonBackend, DaemonUnavailable

def _start_daemon(sock, tmp) -> subprocess.Popen:
    p = subprocess.Popen([sys.executable, "-m", "launcher", "serve", "--socket", str(sock),
                          "--profile", profile_path("faults"), "--output-dir", str(tmp / "out")],
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


def _is_lost_error(text: str) -> bool:
    t = (text or "").lower()
    return "daemon" in t and ("lost" in t or "not reachable" in t or "closed" in t)


@pytest.mark.parametrize("how", ["SIGTERM", "SIGKILL"])
def test_daemon_restart_under_live_clients(tmp_path, how):
    sock = tmp_path / "d.sock"
    d = _start_daemon(sock, tmp_path)
    clients = []
    try:
        for _ in range(2):
            c = Stdio(tmp_path, ["--socket", str(sock), "--profile", profile_path("faults")])
            c.initialize()
            clients.append(c)
        for i, c in enumerate(clients):
            out = c.tool("execute", {"code": f"n = {i + 10}\nprint(n)"})
            assert out and f"{i + 10}" in out, out
        tree = descendants(d.pid)
        assert tree, "the daemon has no zygote/sessions?"
        # one client has a call in flight when the daemon goes away
        inflight: dict = {}

        def slow():
            # a busy loop (until the profile's 2 s limit): the daemon goes away while it runs
            inflight["text"] = clients[0].tool("execute", {"code": "n = 0\nwhile True:\n    n += 1"},
                                               timeout=60)

        t = threading.Thread(target=slow)
        t.start()
        # wait (with a deadline) until the call runs: a session process on a CPU
        deadline = time.monotonic() + 30
        while not any((proc_stat(p) or ("?",))[0] == "R" for p in descendants(d.pid)):
            assert time.monotonic() < deadline, "the call never started running"
            time.sleep(0.01)
        d.send_signal(getattr(signal, how))
        d.wait(30)
        t.join(60)
        assert inflight.get("text") is not None, "the in-flight call never got an answer"
        # the call did not complete: its reply is the daemon-lost error, not a success listing n
        assert _is_lost_error(inflight["text"]) and "+ n" not in inflight["text"], inflight["text"]
        if how == "SIGKILL":
            # nothing the daemon started survives it
            deadline = time.monotonic() + 5
            while time.monotonic() < deadline and any(os.path.exists(f"/proc/{p}") for p in tree):
                time.sleep(0.05)
            left = [p for p in tree if os.path.exists(f"/proc/{p}")]
            assert not left, f"processes of the killed daemon survive: {left}"
        # daemon down: a clear error, the MCP servers keep answering
        for c in clients:
            out = c.tool("execute", {"code": "print(n)"})
            assert out is not None and _is_lost_error(out), out
            assert c.alive_and_answering()
        # a new daemon on the same socket: the clients reconnect into new, empty sessions
        d = _start_daemon(sock, tmp_path)
        for c in clients:
            out = c.tool("execute", {"code": "print(n)"}, timeout=120)
            assert out is not None and "NameError" in out, out
            out = c.tool("execute", {"code": "n = 5\nprint(n + 1)"})
            assert out is not None and "6" in out, out
    finally:
        for c in clients:
            c.close()
        if d.poll() is None:
            d.terminate()
            try:
                d.wait(20)
            except subprocess.TimeoutExpired:
                d.kill()
    for c in clients:
        assert c.p.returncode == 0, f"an MCP client exited with {c.p.returncode}"

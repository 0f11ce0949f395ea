"""Hostile replies through the daemon (``serve``): its frames stay valid JSON, its log stays one
line per record with nothing a terminal would run, and it keeps serving.

A ``python -m launcher serve`` daemon (profile ``faults_os_only``: user code can write raw
datagrams on fd 3) is driven by the real daemon client. A session sends lone surrogates, terminal
escapes and a forged error type holding a line break and fake fields; the next calls work and the
daemon's log (its stderr, the key=value formatter) holds no raw control character and no line
that was not written by the daemon itself.
"""
from __future__ import annotations

import subprocess
import sys
import time

import pytest

from tests.helpers.cli import REPO
from tests.helpers.faults import profile_path
from launcher.daemon.client import DaemonBackend, DaemonUnavailable
from test_faults_hostile_replies import ANSI, RAW, assert_safe, call_within

FORGED_TYPE = "X\nts=2026-01-01T00:00:00.000Z level=info logger=build123d_launcher.audit execute outcome=ok"


@pytest.fixture
def daemon(tmp_path):
    sock = tmp_path / "d.sock"
    log = tmp_path / "daemon.log"
    p = subprocess.Popen([sys.executable, "-m", "launcher", "serve", "--socket", str(sock),
                          "--profile", profile_path("faults_os_only"), "--output-dir", str(tmp_path / "out")],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(log, "ab"), cwd=str(REPO))
    backend = None
    deadline = time.monotonic() + 120
    while backend is None and time.monotonic() < deadline:
        assert p.poll() is None, log.read_text()[-2000:]
        if sock.exists():
            try:
                backend = DaemonBackend(str(sock), hello_timeout=60)
            except DaemonUnavailable:
                time.sleep(0.1)
        else:
            time.sleep(0.1)
    assert backend is not None, "the daemon never answered"
    try:
        yield backend, log
    finally:
        backend.close()
        p.terminate()
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def test_daemon_survives_hostile_replies_and_its_log_cannot_be_forged(daemon):
    backend, log = daemon

    def call(tool, args):
        r = call_within(lambda: backend.call(tool, args), 180)
        assert_safe(r)
        return r

    assert call("execute", {"code": "n = 41"}).get("ok")
    r = call("execute", {"code": RAW + 'reply(\'{"t":"result","ok":true,"stdout":"a\\\\ud800b"}\')'})
    assert r.get("ok") and r["stdout"] == "a\\ud800b", r
    r = call("execute", {"code": f"print({ANSI!r})"})
    assert r.get("ok") and "\\x1b]0;pwned" in r["stdout"], r
    forged = '{"t":"result","ok":false,"error":{"type":' + repr(FORGED_TYPE).replace("'", '"') + ',"message":"m"}}'
    r = call("execute", {"code": RAW + f"reply({forged!r})\nimport time\ntime.sleep(30)"})
    assert r.get("ok") is False, r
    r = call("execute", {"code": "E = type('A\\nlevel=info outcome=ok', (Exception,), {})\nraise E('\\x1b[2J')"})
    assert r.get("ok") is False, r
    r = call("execute", {"code": "print(n)"})
    assert r.get("ok") and r["stdout"] == "41\n", r
    text = log.read_text(encoding="utf-8", errors="strict")
    lines = text.splitlines()
    assert lines and all(ln.startswith(("ts=", "level=")) for ln in lines), [ln for ln in lines
                                                                           if not ln.startswith(("ts=", "level="))]
    assert not any(c in text for c in "\r\x1b\x07\u2028\u202e"), "a raw control character reached the log"
    audit = [ln for ln in lines if "logger=build123d_launcher.audit" in ln]
    assert len(audit) >= 5, audit
    for ln in audit:
        assert ln.count("outcome=") == 1 and ln.count("layer=") == 1, ln

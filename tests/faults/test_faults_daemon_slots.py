"""Connections that never send, or trickle, cannot hold the daemon's slots (issue 20, item 9).

A real ``serve --socket S`` daemon with two slots (``max_sessions = 2``; the OS layers alone, so
a call may ``time.sleep``), raw unix sockets and the real daemon client. Before this fix a connection took a slot when accepted and kept it
until it hung up: two silent connections locked the user's next client out for good, and a
client trickling a byte a second held its slot forever. Now a connection takes a slot only
with its first whole request, which must come within ``HANDSHAKE_S`` of connecting; a request
that has started must be whole within ``FRAME_S``; an admitted client idle between requests,
or waiting for a long call, keeps its session; ``_cancel`` reaches a full daemon. As root the slot test also runs with the
daemon and its clients as uid 65533 (``user_env``). Every wait is a poll with a deadline.
"""
from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from tests.helpers.cli import REPO, launcher_env
from tests.helpers.daemon import as_uid, raw_connect
from tests.helpers.faults import profile_path
from tests.helpers.proc import wait_until
from launcher.daemon.admission import HANDSHAKE_S, MAX_PENDING
from launcher.daemon.client import HEADER, DaemonBackend, recv_frame, send_frame
from launcher.daemon.request import FRAME_S

UID = 65533
SLACK_S = 20  # on top of a bound: a loaded machine (2 shared cores) is slow to schedule, never early
HELLO = json.dumps({"tool": "_hello", "args": {}}).encode()


# ----------------------------------------------------------------- a daemon with two slots
def _profile(d: Path) -> str:
    p = d / "slots.toml"
    p.write_text(f'extends = "{profile_path("faults_os_only")}"\nname = "faults_slots"\n'
                 "[limits]\ntimeout_s = 60\ncpu_s = 60\nmax_sessions = 2\n")
    p.chmod(0o644)
    return str(p)


def _start(d: Path, prefix=(), env=None) -> subprocess.Popen:
    sock = d / "d.sock"
    log = open(d / "daemon.log", "ab")
    p = subprocess.Popen([*prefix, sys.executable, "-m", "launcher", "serve", "--socket", str(sock),
                          "--profile", _profile(d), "--output-dir", str(d / "out")],
                         stdin=subprocess.DEVNULL, stdout=log, stderr=log, cwd=str(REPO), env=env or launcher_env())
    log.close()
    # the socket file appears once the daemon listens; it accepts only after its zygote is up
    assert wait_until(lambda: sock.exists() or p.poll() is not None, 120, 0.05) and p.poll() is None, \
        (d / "daemon.log").read_text()[-2000:]
    return p


def _stop(p: subprocess.Popen) -> None:
    p.terminate()
    try:
        p.wait(30)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait(10)


@pytest.fixture
def daemon():
    d = Path(tempfile.mkdtemp(prefix="b123d-slots-", dir="/tmp"))
    p = _start(d)
    try:
        yield d / "d.sock", p, d / "daemon.log"
    finally:
        _stop(p)
        shutil.rmtree(d, ignore_errors=True)


# ----------------------------------------------------------------- raw peers
class Peer:
    """A raw connection that watches, without blocking, for the daemon hanging up on it."""

    def __init__(self, sock):
        self.s = raw_connect(sock, 30)
        self.got = b""
        self.gone = False

    def hung_up(self) -> bool:
        # select first: with a timeout set, a socket's recv waits for data whatever its flags
        while not self.gone and select.select([self.s], [], [], 0)[0]:
            try:
                chunk = self.s.recv(65536)
            except OSError:
                chunk = b""
            if not chunk:
                self.gone = True
            self.got += chunk
        return self.gone

    def error(self) -> str:
        """The error frame the daemon sent before hanging up ('' if none)."""
        if len(self.got) < HEADER.size:
            return ""
        (n,) = HEADER.unpack(self.got[:HEADER.size])
        try:
            return json.loads(self.got[HEADER.size:HEADER.size + n]).get("error", "")
        except ValueError:
            return ""

    def close(self) -> None:
        self.s.close()


class Trickler(Peer):
    """Sends ``data`` one byte a second (never a gap long enough for a per-byte timeout) until cut off."""

    def __init__(self, sock, data: bytes, *, after: bytes = b""):
        super().__init__(sock)
        if after:
            self.s.sendall(after)
        self.sent = 0
        self.t = threading.Thread(target=self._run, args=(data,), daemon=True)
        self.t.start()

    def _run(self, data: bytes) -> None:
        for b in data:
            try:
                self.s.send(bytes([b]))
            except OSError:
                return
            self.sent += 1
            time.sleep(1.0)


def _frame(obj) -> bytes:
    body = json.dumps(obj).encode()
    return HEADER.pack(len(body)) + body


def _real_client(sock, code: str = "r = 1\nprint(r)"):
    """The user's client (the daemon client ``mcp`` uses): admitted and served, or the reason why not."""
    try:
        b = DaemonBackend(str(sock), hello_timeout=30)
    except Exception as e:  # noqa: BLE001
        return None, f"{type(e).__name__}: {e}"
    r = b.call("execute", {"code": code})
    if not r.get("ok"):
        b.close()
        return None, str(r)
    return b, r


# ----------------------------------------------------------------- tests
def _silent_peers_hold_no_slot(sock) -> dict:
    """Both slots' worth of silent peers and a pre-handshake trickler; the real client is served
    at once, and every such peer is dropped within the handshake bound. Returns what was seen."""
    silent = [Peer(sock) for _ in range(2)]
    half = Peer(sock)
    half.s.sendall(HELLO[:2])  # a header begun, never finished
    slow = Trickler(sock, HEADER.pack(len(HELLO)) + HELLO)
    peers = silent + [half, slow]
    try:
        start = time.monotonic()
        client, why = _real_client(sock)
        admitted = time.monotonic() - start
        assert client is not None, f"the real client was refused while silent peers held the slots: {why}"
        second, why = _real_client(sock, "q = 2\nprint(q)")  # the other slot is free too
        assert second is not None, f"the second slot was held by a silent peer: {why}"
        left = wait_until(lambda: all(p.hung_up() for p in peers) or None, HANDSHAKE_S + SLACK_S, 0.05)
        assert left, f"silent peers still connected after {HANDSHAKE_S + SLACK_S} s: " \
                     f"{[i for i, p in enumerate(peers) if not p.gone]}"
        errors = [p.error() for p in peers]
        assert all(f"no whole request within {HANDSHAKE_S:g} s" in e for e in errors), errors
        assert slow.sent < len(HELLO), "the trickler finished its hello: the bound is per byte, not per frame"
        assert "1" in client.call("execute", {"code": "print(r)"})["stdout"]
        client.close()
        second.close()
        return {"admitted_s": admitted, "dropped_s": time.monotonic() - start, "trickled": slow.sent}
    finally:
        for p in peers:
            p.close()


def test_silent_connections_hold_no_slot_and_are_dropped(daemon):
    sock, _p, log = daemon
    seen = _silent_peers_hold_no_slot(sock)
    print(f"\nreal client served in {seen['admitted_s']:.2f} s with 2 silent peers; all 4 peers dropped "
          f"after {seen['dropped_s']:.1f} s (bound {HANDSHAKE_S:g} s); trickler sent {seen['trickled']} bytes")
    text = log.read_text()
    assert text.count("event=dropped") >= 4 and "stage=handshake" in text, text[-3000:]


def test_flood_of_silent_connections_cannot_lock_out_the_user(daemon):
    sock, p, _log = daemon

    def sockets() -> int:
        n = 0
        for fd in os.listdir(f"/proc/{p.pid}/fd"):
            try:
                n += os.readlink(f"/proc/{p.pid}/fd/{fd}").startswith("socket:")
            except OSError:
                pass
        return n

    first, why = _real_client(sock)
    assert first is not None, why
    base = sockets()
    flood = [Peer(sock) for _ in range(2 * MAX_PENDING + 4)]
    try:
        # the daemon keeps at most MAX_PENDING of them: the oldest are hung up on at once
        assert wait_until(lambda: sum(f.hung_up() for f in flood) >= len(flood) - MAX_PENDING or None,
                          SLACK_S, 0.05), "the flood was not cut down to MAX_PENDING"
        assert wait_until(lambda: sockets() - base <= MAX_PENDING + 1, SLACK_S, 0.05), \
            f"the daemon holds {sockets() - base} sockets for {len(flood)} silent peers"
        held = sockets() - base
        start = time.monotonic()
        got = {}

        def admitted():
            got["c"], got["why"] = _real_client(sock, "f = 3\nprint(f)")
            return got["c"]
        assert wait_until(admitted, HANDSHAKE_S + SLACK_S, 0.2), f"the user was locked out: {got.get('why')}"
        print(f"\n{len(flood)} silent peers: the daemon held {held} sockets (cap {MAX_PENDING}); the real client "
              f"was served after {time.monotonic() - start:.2f} s")
        got["c"].close()
        # the first client's session is untouched
        assert first.call("execute", {"code": "print(r)"})["stdout"] == "1\n"
    finally:
        for f in flood:
            f.close()
        first.close()


def test_trickling_client_is_dropped_and_its_slot_freed(daemon):
    sock, _p, log = daemon
    keeper, why = _real_client(sock)
    assert keeper is not None, why
    slow = Trickler(sock, _frame({"tool": "execute", "args": {"code": "x = 1  " + "#" * 64}}),
                    after=_frame({"tool": "_hello", "args": {}}))
    try:
        # the trickler said hello: it holds the second slot, so a third client is refused meanwhile
        hello = recv_frame(slow.s)
        assert hello and hello.get("server") == "build123d-launcher", hello
        third, why = _real_client(sock)
        assert third is None and "already serves 2 connections" in why, why
        assert wait_until(slow.hung_up, FRAME_S + SLACK_S, 0.05), \
            f"a client trickling a byte a second still holds its slot after {FRAME_S + SLACK_S} s"
        assert f"did not arrive whole within {FRAME_S:g} s" in slow.error(), slow.got[:300]
        got = {}

        def admitted():
            got["c"], got["why"] = _real_client(sock)
            return got["c"]
        assert wait_until(admitted, SLACK_S, 0.2), f"the trickler's slot was not freed: {got.get('why')}"
        got["c"].close()
        assert keeper.call("execute", {"code": "print(r)"})["stdout"] == "1\n"
        assert "stage=frame" in log.read_text()
    finally:
        slow.close()
        keeper.close()


def test_idle_client_keeps_its_session_past_every_bound(daemon):
    sock, _p, _log = daemon
    idle, why = _real_client(sock, "v = 42")
    assert idle is not None, why
    last_call = time.monotonic()
    silent = Peer(sock)   # starts its handshake clock now
    stalled = Peer(sock)  # says hello, then starts a request and stalls: starts its frame clock now
    stalled.s.sendall(_frame({"tool": "_hello", "args": {}}))
    assert recv_frame(stalled.s).get("server") == "build123d-launcher"
    stalled.s.sendall(_frame({"tool": "execute", "args": {"code": "1"}})[:6])
    try:
        # both bounds have passed for peers that started after the idle client's last call
        assert wait_until(lambda: (silent.hung_up() and stalled.hung_up()) or None,
                          max(HANDSHAKE_S, FRAME_S) + SLACK_S, 0.05), "the timers never fired"
        idled = time.monotonic() - last_call
        assert idled > max(HANDSHAKE_S, FRAME_S)
        r = idle.call("execute", {"code": "print(v)"})
        assert r.get("ok") and r["stdout"] == "42\n", f"the idle client lost its session after {idled:.1f} s: {r}"
    finally:
        silent.close()
        stalled.close()
        idle.close()


def test_call_longer_than_every_bound_is_not_cut(daemon):
    """A first request that is a long call (no hello), and a call waited for by an admitted client:
    neither the handshake bound nor the frame bound applies while a call runs."""
    sock, _p, _log = daemon
    nap = HANDSHAKE_S + FRAME_S + 1
    waiting, why = _real_client(sock, "w = 5")
    assert waiting is not None, why
    raw = raw_connect(sock, 30)
    raw.settimeout(nap + 60)
    try:
        send_frame(raw, {"tool": "execute", "args": {"code": f"import time\ntime.sleep({nap})\nu = 6\nprint('done')"}})
        r = waiting.call("execute", {"code": f"import time\ntime.sleep({nap})\nprint(w)"})
        assert r.get("ok") and r["stdout"] == "5\n", r
        r = recv_frame(raw)
        assert r and r.get("ok") and r["stdout"] == "done\n", r
        send_frame(raw, {"tool": "execute", "args": {"code": "print(u)"}})
        assert recv_frame(raw)["stdout"] == "6\n"
    finally:
        raw.close()
        waiting.close()


def test_cancel_reaches_a_full_daemon(daemon):
    """``_cancel`` comes on a second connection: it is answered before that connection would take a
    slot, so a client can cancel its call while every slot is taken (before: "already serves")."""
    sock, _p, _log = daemon
    victim, why = _real_client(sock, "n = 7")
    assert victim is not None, why
    other, why = _real_client(sock)
    assert other is not None, why  # both slots taken now
    call_id = object()
    result = {}
    t = threading.Thread(target=lambda: result.update(r=victim.call(
        "execute", {"code": "n = 8\nwhile True: pass"}, call_id)), daemon=True)
    t.start()
    try:
        assert wait_until(lambda: victim._inflight, SLACK_S)  # the request is on the wire
        victim.cancel(call_id)
        t.join(SLACK_S)
        assert not t.is_alive(), "the cancel never reached the daemon (the call runs to its 60 s limit)"
        err = result["r"].get("error")
        # cancelled while it ran, or (the request just read) before it started: the daemon got it either way
        assert (isinstance(err, dict) and err.get("type") == "Cancelled") \
            or (isinstance(err, str) and "cancelled before it started" in err), result
        assert victim.call("execute", {"code": "print(n)"})["stdout"] == "7\n"
    finally:
        victim.close()
        other.close()


# ----------------------------------------------------------------- unprivileged
@pytest.fixture
def user_env():
    """(command prefix, env, private dir, uid): as root the daemon and its clients run as uid 65533."""
    d = Path(tempfile.mkdtemp(prefix="b123d-slots-u-", dir="/tmp"))
    d.chmod(0o755)
    if os.geteuid() != 0:
        yield [], launcher_env(), d, os.getuid()
        shutil.rmtree(d, ignore_errors=True)
        return
    setpriv = shutil.which("setpriv")
    if not setpriv:
        pytest.skip("setpriv (util-linux) is not installed")
    os.chown(d, UID, UID)
    env = launcher_env(HOME=str(d), XDG_RUNTIME_DIR=str(d))
    prefix = [setpriv, f"--reuid={UID}", f"--regid={UID}", "--clear-groups", "--"]
    p = subprocess.run(prefix + [sys.executable, "-c", "import launcher.cli, jail.proc.zygote"], cwd=str(d), env=env,
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        shutil.rmtree(d, ignore_errors=True)
        pytest.skip(f"the venv/repo cannot be imported as uid {UID}: {p.stderr.strip().splitlines()[-1:]}")
    yield prefix, env, d, UID
    shutil.rmtree(d, ignore_errors=True)


def test_silent_connections_hold_no_slot_unprivileged(user_env):
    prefix, env, d, uid = user_env
    p = _start(d, prefix, env)
    try:
        code, msg = as_uid(uid, lambda: json.dumps(_silent_peers_hold_no_slot(d / "d.sock")))
        assert code == 0, msg + (d / "daemon.log").read_text()[-2000:]
        print(f"\nas uid {uid}: {msg}")
        assert (d / "d.sock").stat().st_uid == uid
    finally:
        _stop(p)

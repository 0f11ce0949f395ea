"""``build123d-launcher serve`` and ``mcp`` through it: real daemons, real sockets.

* the socket is 0600; another uid can neither connect through the file mode
  nor, when the mode is opened up, get past the SO_PEERCRED check;
* one session set per connection; malformed and oversize requests get errors
  and the daemon keeps serving;
* socket activation (LISTEN_FDS/LISTEN_PID, via a tiny exec wrapper) with
  READY=1/STOPPING=1 on NOTIFY_SOCKET; SIGTERM with live sessions (and one
  running execution) leaves no process behind and exits 0;
* ``mcp`` via the daemon and ``mcp --embedded`` answer the same script with
  the same results (real MCP stdio client).
"""
from __future__ import annotations

import json
import os
import re
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.helpers.cli import REPO, TEST_PROFILE, launcher_env
from tests.helpers.daemon import as_uid, raw_connect
from tests.helpers.proc import alive, descendants, proc_stat, wait_until

from launcher.daemon.client import DaemonBackend, connect_backend, recv_frame, send_frame

HEADER = struct.Struct(">I")


def _private_dir(prefix: str) -> Path:
    d = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    d.chmod(0o755)  # traversable, so another uid reaches the socket file (and its 0600 mode)
    return d


def start_daemon(sock: Path, out: Path, log: Path, *, wrapper: list[str] | None = None, env=None, pass_fds=()):
    cmd = (wrapper or []) + [sys.executable, "-m", "launcher", "serve", "--profile", TEST_PROFILE,
                             "--output-dir", str(out)]
    if wrapper is None:
        cmd += ["--socket", str(sock)]
    errf = open(log, "w")
    p = subprocess.Popen(cmd, cwd=str(REPO), env=env or launcher_env(), stdin=subprocess.DEVNULL,
                         stdout=errf, stderr=errf, pass_fds=pass_fds)
    errf.close()
    return p


def wait_ready(sock: Path, proc, timeout=60.0) -> DaemonBackend:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"daemon exited with {proc.returncode}"
        if sock.exists():
            try:
                return DaemonBackend(str(sock), hello_timeout=timeout)
            except Exception:  # noqa: BLE001
                pass
        time.sleep(0.05)
    raise AssertionError("daemon did not answer")


def stop(proc, timeout=30.0) -> int:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise


@pytest.fixture(scope="module")
def daemon():
    d = _private_dir("b123d-daemon-")
    sock, out, log = d / "d.sock", d / "out", d / "daemon.log"
    p = start_daemon(sock, out, log)
    try:
        first = wait_ready(sock, p)
        yield {"proc": p, "sock": sock, "out": out, "log": log, "dir": d, "first": first}
        first.close()
    finally:
        stop(p)
        import shutil
        shutil.rmtree(d, ignore_errors=True)


# ------------------------------------------------------------------ socket + peers
def test_socket_mode_0600(daemon):
    st = os.lstat(daemon["sock"])
    assert (st.st_mode & 0o777) == 0o600
    assert st.st_uid == os.getuid()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to fork a child with another uid")
def test_other_uid_refused(daemon):
    path = str(daemon["sock"])

    def attempt():
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(10)
        s.connect(path)
        try:
            send_frame(s, {"tool": "execute", "args": {"code": "x = 1"}})
        except BrokenPipeError:
            pass  # the daemon may refuse (and hang up) before the request is sent
        first = recv_frame(s)
        second = recv_frame(s)
        return json.dumps([first, second])

    # 1. the file mode keeps uid 65534 out
    code, msg = as_uid(65534, attempt)
    assert code == 1 and "PermissionError" in msg, msg
    # 2. with the mode opened up, SO_PEERCRED still refuses it
    os.chmod(path, 0o666)
    try:
        code, msg = as_uid(65534, attempt)
    finally:
        os.chmod(path, 0o600)
    assert code == 0, msg
    first, second = json.loads(msg)
    assert "permission denied" in first["error"] and second is None
    log = daemon["log"].read_text()
    assert re.search(r"event=refused reason=\"peer uid is not the daemon's\" peer_pid=\d+ peer_uid=65534", log), log
    # no session was made for it, and the daemon still serves its own user
    assert "ok" in daemon["first"].call("execute", {"code": "y = 2"})


def test_client_checks_the_daemon_uid(daemon):
    b = connect_backend(str(daemon["sock"]), required=True)
    assert b.info["server"] == "build123d-launcher" and b.info["pid"] == daemon["proc"].pid
    b.close()


def test_daemon_with_another_profile_is_not_used(daemon, tmp_path):
    other = tmp_path / "other.toml"
    other.write_text('extends = "default"\nname = "other"\n')
    with pytest.raises(SystemExit, match="runs profile .* not 'other'"):
        connect_backend(str(daemon["sock"]), required=True, profile=str(other))
    assert connect_backend(str(daemon["sock"]), required=False, profile=str(other)) is None
    b = connect_backend(str(daemon["sock"]), required=False, profile=TEST_PROFILE)
    assert b is not None
    b.close()


def test_no_daemon(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    assert connect_backend(None, required=False) is None
    with pytest.raises(SystemExit, match="no daemon answers"):
        connect_backend(str(tmp_path / "missing.sock"), required=True)
    # a stale socket file (nobody listening) counts as no daemon
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(str(tmp_path / "build123d-launcher.sock"))
    s.close()
    assert connect_backend(None, required=False) is None


# ------------------------------------------------------------------ sessions + protocol
def test_one_session_set_per_connection(daemon):
    a = DaemonBackend(str(daemon["sock"]))
    b = DaemonBackend(str(daemon["sock"]))
    try:
        assert a.call("execute", {"code": "secret = 41"})["ok"]
        r = b.call("execute", {"code": "print(secret)"})
        assert r["ok"] is False and r["error"]["type"] == "NameError"
        assert a.call("execute", {"code": "print(secret + 1)"})["stdout"] == "42\n"
        assert a.call("save_snapshot", {"name": "s"}) ["snapshots"] == ["s"]
        assert b.call("list_snapshots", {}) == {"snapshots": []}
    finally:
        a.close()
        b.close()


def test_malformed_requests_get_errors(daemon):
    s = raw_connect(daemon["sock"])
    try:
        for payload, msg in [(b"not json", "not UTF-8 JSON"), (b"\xff\xfe", "not UTF-8 JSON"),
                             (b"[1, 2]", "expected"), (b'{"args": {}}', "expected"),
                             (b'{"tool": "execute", "args": [1]}', "expected"),
                             (b'{"tool": 3}', "expected"), (b"[" * 100000, "not UTF-8 JSON")]:
            s.sendall(HEADER.pack(len(payload)) + payload)
            r = recv_frame(s)
            assert msg in r["error"], (payload[:20], r)
        send_frame(s, {"tool": "nope", "args": {}})
        assert "unknown tool" in recv_frame(s)["error"]
        send_frame(s, {"tool": "execute", "args": {"code": 1, "extra": 2}})
        assert "bad arguments" in recv_frame(s)["error"]
        send_frame(s, {"tool": "execute", "args": {"code": 5}})
        assert "code must be of type string" in recv_frame(s)["error"]  # the declared schema (launcher/tools)
        # oversize: read and dropped, an error, and the connection goes on
        info = DaemonBackend(str(daemon["sock"])).info
        cap = info["max_request_bytes"]
        big = json.dumps({"tool": "execute", "args": {"code": "#" * cap}}).encode()
        s.sendall(HEADER.pack(len(big)) + big)
        assert "exceeds the daemon's" in recv_frame(s)["error"]
        send_frame(s, {"tool": "execute", "args": {"code": "print('still here')"}})
        assert recv_frame(s)["stdout"] == "still here\n"
        # absurd length: an error, then the daemon closes this connection
        s.sendall(HEADER.pack(2 ** 31))
        assert "exceeds" in recv_frame(s)["error"]
        assert recv_frame(s) is None
    finally:
        s.close()
    # truncated frame, then hang-up
    s = raw_connect(daemon["sock"])
    s.sendall(HEADER.pack(100) + b"{")
    s.close()
    # the daemon is alive and serves new clients
    assert daemon["proc"].poll() is None
    b = DaemonBackend(str(daemon["sock"]))
    assert b.call("execute", {"code": "print(1)"})["stdout"] == "1\n"
    b.close()


def test_logs_are_key_value_lines_with_audit(daemon):
    b = DaemonBackend(str(daemon["sock"]))
    b.call("execute", {"code": "z = 3"})
    b.call("execute", {"code": "import subprocess"})
    b.close()
    wait_until(lambda: daemon["log"].read_text().count("event=disconnect") >= 1, 5)
    lines = daemon["log"].read_text().splitlines()
    assert lines
    kv = re.compile(r'^(ts=\S+ )?level=\w+ logger=[\w.]+( [\w.]+=("(\\.|[^"\\])*"|\S*))+$')
    bad = [l for l in lines if not kv.match(l)]
    assert not bad, bad[:5]
    text = "\n".join(lines)
    assert re.search(r"logger=build123d_launcher.audit event=execute session=s\d+ sha256=[0-9a-f]{16} "
                     r"outcome=ok duration_ms=[\d.]+ layer=-", text)
    assert re.search(r"logger=build123d_launcher.audit event=execute .*outcome=error", text)
    assert re.search(r"event=call conn=\d+ tool=execute session=s\d+ duration_ms=[\d.]+ result=ok", text)
    assert "event=ready" in text and "event=connect" in text


def test_export_through_the_daemon(daemon):
    b = DaemonBackend(str(daemon["sock"]))
    try:
        assert b.call("execute", {"code": "c = Cylinder(5, 10)"})["ok"]
        r = b.call("export", {"object_name": "c", "filename": "cyl/c.brep", "format": ""})
        assert Path(r["path"]) == daemon["out"].absolute() / "cyl" / "c.brep"
        assert abs(r["volume"] - 3.141592653589793 * 250) < 1e-6
        assert "'..' is refused" in b.call("export", {"object_name": "c", "filename": "../c.brep"})["error"]
    finally:
        b.close()


# ------------------------------------------------------------------ activation + SIGTERM
ACTIVATE = ("import os, sys; fd = int(sys.argv[1]); os.dup2(fd, 3); os.close(fd); "
            "os.environ['LISTEN_PID'] = str(os.getpid()); os.environ['LISTEN_FDS'] = '1'; "
            "os.execv(sys.argv[2], sys.argv[2:])")


def test_socket_activation_readiness_and_sigterm_leaves_nothing(tmp_path):
    d = _private_dir("b123d-act-")
    try:
        sock_path = d / "act.sock"
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(sock_path))
        listener.listen(8)
        notify_path = d / "notify"
        notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        notify.bind(str(notify_path))
        notify.settimeout(60)
        env = launcher_env(NOTIFY_SOCKET=str(notify_path))
        fd = listener.fileno()
        proc = start_daemon(sock_path, d / "out", d / "daemon.log",
                            wrapper=[sys.executable, "-c", ACTIVATE, str(fd)], env=env, pass_fds=(fd,))
        listener.close()  # the daemon holds it now, as under systemd
        try:
            msg = notify.recv(4096).decode()
            assert "READY=1" in msg and f"MAINPID={proc.pid}" in msg, msg
            a = DaemonBackend(str(sock_path))
            b = DaemonBackend(str(sock_path))
            assert a.info["pid"] == proc.pid
            assert a.call("execute", {"code": "x = Box(1, 1, 1)"})["ok"]
            assert b.call("execute", {"code": "y = 2"})["ok"]
            assert a.call("save_snapshot", {"name": "keep"})["snapshots"] == ["keep"]
            log = (d / "daemon.log").read_text()
            assert "activation=systemd" in log, log
            # one execution still running when SIGTERM arrives
            c = DaemonBackend(str(sock_path))
            import threading
            running = {}
            t = threading.Thread(target=lambda: running.setdefault(
                "r", c.call("execute", {"code": "while True:\n    pass\n"})))
            t.start()
            time.sleep(0.5)
            tree = [(p, proc_stat(p)[2]) for p in descendants(proc.pid) if proc_stat(p)]
            assert len(tree) >= 8, tree  # zygote + 3 sessions (keeper, init, head, next...) + snapshot
            t0 = time.monotonic()
            rc = stop(proc)
            assert rc == 0, (d / "daemon.log").read_text()
            assert time.monotonic() - t0 < 10
            msg = notify.recv(4096).decode()
            assert "STOPPING=1" in msg
            assert wait_until(lambda: not any(alive(p, st) for p, st in tree), 5), \
                [p for p, st in tree if alive(p, st)]
            t.join(10)
            for cl in (a, b, c):
                cl.close()
            # systemd owns an activated socket: the daemon must not remove it
            assert sock_path.exists()
            log = (d / "daemon.log").read_text()
            assert "event=stopping" in log and "event=stopped" in log
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            notify.close()
    finally:
        import shutil
        shutil.rmtree(d, ignore_errors=True)


def test_self_bound_socket_is_removed_on_sigterm_and_stale_one_replaced(tmp_path):
    d = _private_dir("b123d-bind-")
    try:
        sock = d / "s.sock"
        stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        stale.bind(str(sock))
        stale.close()  # a socket file nobody listens on (a crashed daemon)
        proc = start_daemon(sock, d / "out", d / "log")
        try:
            b = wait_ready(sock, proc)
            assert (os.lstat(sock).st_mode & 0o777) == 0o600
            # a second daemon on the same path refuses to start
            r = subprocess.run([sys.executable, "-m", "launcher", "serve", "--profile", TEST_PROFILE,
                                "--socket", str(sock)], env=launcher_env(), capture_output=True, text=True,
                               timeout=60, cwd=str(REPO))
            assert r.returncode != 0 and "another daemon" in r.stderr
            b.close()
        finally:
            assert stop(proc) == 0
        assert not sock.exists()
    finally:
        import shutil
        shutil.rmtree(d, ignore_errors=True)


# ------------------------------------------------------------------ mcp: daemon vs embedded
SCRIPT = [
    ("execute", {"code": "with BuildPart() as p:\n    Box(10, 20, 30)\n    Hole(4)\nprint('volume', round(p.part.volume, 3))\n"}),
    ("execute", {"code": "q = p.part.volume / 0"}),
    ("last_error", {}),
    ("session_state", {}),
    ("save_snapshot", {"name": "one"}),
    ("execute", {"code": "import subprocess"}),
    ("list_snapshots", {}),
    ("export", {"object_name": "p", "filename": "FILE", "format": ""}),
    ("export", {"object_name": "p", "filename": "/etc/passwd", "format": ""}),
    ("reset", {}),
    ("session_state", {}),
]


def _normalise(text: str) -> str:
    text = re.sub(r"\(\d+ ms\)", "(N ms)", text)
    text = re.sub(r'"(wall_ms|duration_ms|created)": [\d.e+-]+', r'"\1": N', text)
    text = re.sub(r'"session": "s\d+"', '"session": "sN"', text)
    text = re.sub(r'"path": "[^"]*"', '"path": "P"', text)
    text = re.sub(r'"sha256": "[0-9a-f]+"', '"sha256": "H"', text)
    text = re.sub(r"(mcp|daemon)\.brep", "X.brep", text)
    text = re.sub(r"\n\[launcher: this call waited [^\]]*\]", "", text)  # a first call that met the jail starting
    return text


def _run_mcp(args: list[str], out: Path, which: str) -> list[str]:
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-m", "launcher", "mcp", *args],
                                   env=launcher_env(), cwd=str(REPO))

    async def main():
        texts = []
        with open(out / f"{which}-stderr.log", "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    for tool, targs in SCRIPT:
                        targs = {k: (f"{which}.brep" if v == "FILE" else v) for k, v in targs.items()}
                        res = await session.call_tool(tool, targs)
                        texts.append("".join(c.text for c in res.content if c.type == "text"))
        return texts

    return anyio.run(main)


def test_mcp_via_daemon_and_embedded_agree(daemon, tmp_path):
    via_daemon = _run_mcp(["--socket", str(daemon["sock"]), "--profile", TEST_PROFILE], tmp_path, "daemon")
    assert "using the daemon on" in (tmp_path / "daemon-stderr.log").read_text()
    log = daemon["log"].read_text()
    assert "tool=save_snapshot" in log  # it really went through the daemon
    embedded = _run_mcp(["--embedded", "--profile", TEST_PROFILE, "--output-dir", str(daemon["out"])],
                        tmp_path, "mcp")
    assert "build123d-launcher mcp: embedded launcher" in (tmp_path / "mcp-stderr.log").read_text()
    assert len(via_daemon) == len(embedded) == len(SCRIPT)
    for (tool, _), a, b in zip(SCRIPT, via_daemon, embedded):
        assert _normalise(a) == _normalise(b), (tool, a, b)
    assert "volume 4492.036" in via_daemon[0]
    assert "ZeroDivisionError" in via_daemon[1] and "PolicyError" in via_daemon[5]
    assert "absolute paths are refused" in via_daemon[8]
    assert (daemon["out"] / "daemon.brep").is_file() and (daemon["out"] / "mcp.brep").is_file()
    assert (daemon["out"] / "daemon.brep").read_bytes() == (daemon["out"] / "mcp.brep").read_bytes()


# ------------------------------------------------------------------ fuzz
def test_fuzzed_requests_never_break_the_daemon(daemon):
    from hypothesis import HealthCheck, given, settings, strategies as st

    from launcher.tools import NAMES

    json_leaf = st.one_of(st.none(), st.booleans(), st.integers(-2 ** 70, 2 ** 70), st.floats(allow_nan=False),
                          st.text(max_size=40))
    json_val = st.recursive(json_leaf, lambda c: st.one_of(st.lists(c, max_size=4),
                                                           st.dictionaries(st.text(max_size=8), c, max_size=4)),
                            max_leaves=12)
    arg_names = st.sampled_from(["code", "name", "object_name", "filename", "format", "x", ""])
    request = st.one_of(
        st.fixed_dictionaries({"tool": st.sampled_from(list(NAMES) + ["_hello", "close", "__init__", ""]),
                               "args": st.dictionaries(arg_names, json_val, max_size=3)}),
        json_val,
    )
    s = raw_connect(daemon["sock"])
    try:
        @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
        @given(request)
        def one(req):
            if isinstance(req, dict) and req.get("tool") == "execute":
                req["args"]["code"] = "x = 1"  # keep executions short
            send_frame(s, req)
            r = recv_frame(s)
            assert isinstance(r, dict)

        one()
        send_frame(s, {"tool": "execute", "args": {"code": "print('alive')"}})
        assert recv_frame(s)["stdout"] == "alive\n"
    finally:
        s.close()
    assert daemon["proc"].poll() is None
    crashes = [l for l in daemon["log"].read_text().splitlines() if "event=tool_crashed" in l]
    assert not crashes, crashes[:3]

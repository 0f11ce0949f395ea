"""`mcp` names its backend (instructions, stderr) and a call made while the jail starts says so.

A fake daemon on a socket in tmp_path holds its greeting until the test releases it, so the
server's set-up is slow deterministically (no hook in the launcher): calls sent meanwhile wait in
the server, get progress notifications when they carry a progressToken, and come back with one
launcher line saying how long they waited. The other test runs the real embedded fallback.
"""
from __future__ import annotations

import os
import socket
import sys
import threading

import anyio
import anyio.from_thread
from mcp import StdioServerParameters

from launcher.daemon.client import recv_frame, send_frame
from launcher.mcp import warmup
from launcher.profile import load_profile
from tests.helpers.cli import REPO, TEST_PROFILE, launcher_env
from tests.helpers.proc import wait_until
from tests.integration.mcpclient import connect


class GatedDaemon:
    """Speaks the daemon protocol on ``path``; greets only once :attr:`release` is set."""

    def __init__(self, path: str, profile: str):
        self.path, self.profile = path, profile
        self.release = threading.Event()
        self.calls: list[dict] = []
        self.srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.srv.bind(path)
        self.srv.listen(4)
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        conn, _ = self.srv.accept()
        with conn:
            conn.settimeout(120)
            if recv_frame(conn) is None:
                return
            self.release.wait(120)
            send_frame(conn, {"server": "build123d-launcher", "version": "0", "conn": 1, "pid": os.getpid(),
                              "profile": self.profile, "output_dir": "/fake-out", "cancel_key": "k"})
            while (req := recv_frame(conn)) is not None:
                self.calls.append(req)
                send_frame(conn, {"input_dir": "/fake-in", "files": []})

    def close(self) -> None:
        self.release.set()
        self.srv.close()


def _params(*args: str, **env: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable,
                                 args=["-m", "launcher", "mcp", "--profile", TEST_PROFILE, *args],
                                 env=launcher_env(**env), cwd=str(REPO))


def test_calls_during_setup_get_progress_and_a_launcher_line(tmp_path):
    path = str(tmp_path / "d.sock")
    daemon = GatedDaemon(path, load_profile(TEST_PROFILE).name)
    progress: list[tuple[float, str | None]] = []

    async def on_progress(p, total, message):
        progress.append((p, message))
        if len(progress) >= 2:  # the server is demonstrably waiting: let the daemon greet
            daemon.release.set()

    async def scenario():
        with open(tmp_path / "err.log", "w") as errlog:
            async with connect(_params("--socket", path, "--output-dir", str(tmp_path / "out")), errlog) as (
                    session, init):
                assert f"Backend: daemon (socket {path}" in (init.instructions or "")
                results = {}

                async def call(key, **kw):
                    results[key] = await session.call_tool("list_inputs", {}, **kw)
                async with anyio.create_task_group() as tg:
                    tg.start_soon(call, "plain")  # sent first: waiting when the other one reports
                    await anyio.sleep(0)
                    tg.start_soon(lambda: call("tracked", progress_callback=on_progress))
                return results

    try:
        results = anyio.run(scenario)
    finally:
        daemon.close()
    assert len(progress) >= 2 and all(m == warmup.MESSAGE for _, m in progress), progress
    assert progress == sorted(progress), progress
    for key in ("plain", "tracked"):
        res = results[key]
        assert res.is_error is False, res
        text = res.content[-1].text
        assert "input directory /fake-in" in text, text
        assert text.count("[launcher: this call waited") == 1, text
    assert len(daemon.calls) == 2
    err = (tmp_path / "err.log").read_text()
    assert f"build123d-launcher mcp: using the daemon at {path}" in err, err


def test_embedded_fallback_is_named(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    errpath = tmp_path / "err.log"
    with open(errpath, "w") as errlog, anyio.from_thread.start_blocking_portal() as portal:
        cm = portal.wrap_async_context_manager(
            connect(_params("--output-dir", str(tmp_path / "out"), XDG_RUNTIME_DIR=str(run)), errlog))
        _session, init = cm.__enter__()
        try:
            sock = run / "build123d-launcher.sock"
            assert f"Backend: embedded (no daemon at {sock})" in (init.instructions or ""), init.instructions
            line = f"build123d-launcher mcp: embedded launcher, profile {load_profile(TEST_PROFILE).name} " \
                   f"(no daemon at {sock})"
            assert wait_until(lambda: line in errpath.read_text(), timeout=30), errpath.read_text()
        finally:
            cm.__exit__(None, None, None)

"""MCP conventions through the real SDK client (``mcp.client.stdio``), against a real server process:

* ``isError`` is true for every failed call and false for every successful one;
* ``notifications/cancelled`` for a running ``while True: pass`` kills its child at once: the next call
  answers, the session is as before the cancelled call (no timed assertion; the figure is in
  bench/bench_startup.py);
* ``initialize`` and ``tools/list`` are answered while the zygote is still starting (checked by ORDER:
  the zygote is SIGSTOPped before it is ready, the server answers anyway);
* a server whose profile has a required layer that fails still starts, lists its tools, and answers every
  call with the layer, the reason and where to look (``isError``).
"""
from __future__ import annotations

import os
import signal
import sys
from contextlib import asynccontextmanager

import anyio
import pytest

from tests.helpers.cli import REPO, TEST_PROFILE, launcher_env
from tests.helpers.proc import alive, children, live_descendants, proc_stat, wait_until

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from launcher import __version__
from launcher.tools.table import NAMES

LONG_PROFILE = f'extends = "{TEST_PROFILE}"\nname = "long_timeout"\n[limits]\ntimeout_s = 300\n'
EMPTY_SECCOMP = f'extends = "{TEST_PROFILE}"\nname = "empty_seccomp"\n[seccomp]\nallow = []\n'


def params(profile: str, out) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable,
                                 args=["-m", "launcher", "mcp", "--embedded", "--profile", profile,
                                       "--output-dir", str(out)],
                                 env=launcher_env(), cwd=str(REPO))


@asynccontextmanager
async def server(p: StdioServerParameters, errlog_path):
    with open(errlog_path, "w") as errlog:
        async with stdio_client(p, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                yield session


def text_of(res) -> str:
    return "".join(c.text for c in res.content if c.type == "text")


def cpu_ticks(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat") as f:
            rest = f.read().rsplit(")", 1)[1].split()
        return int(rest[11]) + int(rest[12])
    except (OSError, IndexError, ValueError):
        return 0


# ------------------------------------------------------------------ isError per case
def test_is_error_true_and_false_per_case(tmp_path):
    async def scenario():
        async with server(params(TEST_PROFILE, tmp_path / "out"), tmp_path / "err.log") as s:
            init = await s.initialize()
            assert init.server_info.name == "build123d-launcher"
            assert init.server_info.version == __version__
            cases = [
                ("execute", {"code": "part = Box(2, 3, 4)"}, False, "OK ("),
                ("execute", {"code": "1/0"}, True, "ZeroDivisionError"),
                ("execute", {"code": "import subprocess"}, True, "PolicyError"),
                ("execute", {}, True, "code"),                                    # missing argument
                ("execute", {"code": 5}, True, "code must be of type string"),    # wrong type
                ("execute", {"code": "x = 1", "timeout_s": -1}, True, "timeout_s"),
                ("execute", {"code": "x = 1", "bogus": 1}, True, "unknown argument"),
                ("session_state", {}, False, "part: Box"),
                ("last_error", {}, False, "PolicyError"),
                ("save_snapshot", {"name": "../x"}, True, "name"),
                ("save_snapshot", {"name": "base"}, False, "base"),
                ("restore_snapshot", {"name": "nope"}, True, "no snapshot named 'nope'"),
                ("restore_snapshot", {"name": "base"}, False, "restored"),
                ("export", {"object_name": "part", "filename": "/etc/x.step"}, True, "absolute"),
                ("export", {"object_name": "part", "filename": "p.step", "format": "obj"}, True, "format"),
                ("export", {"object_name": "nope", "filename": "n.step"}, True, "nope"),
                ("export", {"object_name": "part", "filename": "p.step"}, False, "p.step"),
                ("export", {"object_name": "part", "filename": "p.step"}, True, "already exists"),
                ("delete_snapshot", {"name": "base"}, False, "deleted"),
                ("no_such_tool", {}, True, "unknown tool"),
                ("reset", {}, False, "reset"),
            ]
            for tool, args, is_error, needle in cases:
                res = await s.call_tool(tool, args)
                assert res.is_error is is_error, (tool, args, res)
                assert needle in text_of(res), (tool, args, text_of(res))

    anyio.run(scenario)


def test_schemas_describe_every_parameter(tmp_path):
    async def scenario():
        async with server(params(TEST_PROFILE, tmp_path / "out"), tmp_path / "err.log") as s:
            await s.initialize()
            return {t.name: t for t in (await s.list_tools()).tools}

    tools = anyio.run(scenario)
    assert set(tools) == set(NAMES)
    for t in tools.values():
        assert t.description and t.input_schema.get("additionalProperties") is False, t
        for name, prop in t.input_schema["properties"].items():
            assert prop.get("description"), (t.name, name)
        assert t.annotations is not None and t.annotations.read_only_hint is not None
    ex = tools["execute"]
    assert "Allowed imports: build123d, math, numpy" in ex.description
    assert "show_object() (where allowed) add a picture" in ex.description and "no network" in ex.description
    assert "delivered to the output directory under export's rules" in ex.description
    assert " 2 s wall clock" in ex.description  # the profile's limit (sessions_fast: 2 s)
    from launcher.files.exports import FORMATS
    assert tools["export"].input_schema["properties"]["format"]["enum"] == ["", *FORMATS]
    assert {"step", "stl", "brep", "svg", "dxf", "3mf"} <= set(FORMATS)
    assert tools["save_snapshot"].input_schema["properties"]["name"]["pattern"].startswith("^[A-Za-z0-9]")
    assert tools["session_state"].annotations.read_only_hint is True
    assert tools["execute"].annotations.read_only_hint is False
    # the hints as declared (tests/unit/test_tool_annotations.py pins them all): export writes files,
    # never over an existing one; a snapshot destroys nothing
    assert tools["export"].annotations.read_only_hint is False and tools["export"].annotations.destructive_hint is False
    assert tools["save_snapshot"].annotations.destructive_hint is False
    assert all(t.annotations.idempotent_hint is not None and t.annotations.open_world_hint is False
               for t in tools.values())


# ------------------------------------------------------------------ cancellation
def _cancel_scenario(p: StdioServerParameters, errlog, session_root):
    """``session_root()`` -> the pid whose descendants are the session's processes."""
    async def scenario():
        async with server(p, errlog) as s:
            await s.initialize()
            r = await s.call_tool("execute", {"code": "kept = 41"})
            assert not r.is_error, r
            root = session_root()
            # the CPU each process had before the call: the next that will run it may already exist
            # (the head forks it right after the last call, often before this line under load)
            base = {q: cpu_ticks(q) for q in live_descendants(root)}
            busy: list[int] = []

            def spinning():  # a process of the session runs and has burnt 0.2 s of CPU since: the loop
                busy[:] = [q for q in live_descendants(root)
                           if cpu_ticks(q) - base.get(q, 0) >= 20 and (proc_stat(q) or "?")[0] == "R"]
                return busy

            result = {}
            async with anyio.create_task_group() as tg:
                scope = anyio.CancelScope()

                async def run():
                    with scope:
                        result["res"] = await s.call_tool("execute", {"code": "kept = 0\nwhile True: pass"})
                tg.start_soon(run)
                ok = await anyio.to_thread.run_sync(lambda: wait_until(spinning, 120, 0.02))
                assert ok, "the call never started running"
                scope.cancel()  # the SDK sends notifications/cancelled for the request
            assert "res" not in result  # the spec: a cancelled request is not answered
            # the spinning child is killed (from outside, by the launcher): poll with a deadline
            assert await anyio.to_thread.run_sync(lambda: wait_until(
                lambda: not [q for q in busy if alive(q)], 60)), f"still running: {busy}"
            r = await s.call_tool("execute", {"code": "print(kept + 1)"})
            assert not r.is_error and "42" in text_of(r), r  # the state before the cancelled call
            r = await s.call_tool("last_error", {})
            assert "Cancelled" in text_of(r), text_of(r)  # cancelled, not timed out (limit 300 s)

    anyio.run(scenario)


def test_cancel_kills_the_running_call_and_keeps_the_state(tmp_path):
    prof = tmp_path / "long_timeout.toml"
    prof.write_text(LONG_PROFILE)
    kids_before = set(children(os.getpid()))

    def server_pid():
        (pid,) = set(children(os.getpid())) - kids_before
        return pid

    _cancel_scenario(params(str(prof), tmp_path / "out"), tmp_path / "err.log", server_pid)


def test_cancel_through_the_daemon(tmp_path):
    """``mcp --socket``: the cancel reaches the daemon on a second connection; the session stays."""
    import subprocess
    import tempfile
    from pathlib import Path
    from launcher.daemon.client import DaemonBackend

    d = Path(tempfile.mkdtemp(prefix="b123d-cancel-", dir="/tmp"))
    d.chmod(0o755)
    prof = d / "long_timeout.toml"
    prof.write_text(LONG_PROFILE)
    sock = d / "d.sock"
    with open(d / "daemon.log", "w") as log:
        daemon = subprocess.Popen([sys.executable, "-m", "launcher", "serve", "--profile", str(prof), "--socket",
                                   str(sock), "--output-dir", str(d / "out")], cwd=str(REPO), env=launcher_env(),
                                  stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    try:
        def ready():
            try:
                DaemonBackend(str(sock), hello_timeout=60).close()
                return True
            except Exception:  # noqa: BLE001
                assert daemon.poll() is None, (d / "daemon.log").read_text()
                return False
        assert wait_until(ready, 120, 0.05), (d / "daemon.log").read_text()
        p = StdioServerParameters(command=sys.executable,
                                  args=["-m", "launcher", "mcp", "--socket", str(sock), "--profile", str(prof)],
                                  env=launcher_env(), cwd=str(REPO))
        _cancel_scenario(p, d / "mcp.log", lambda: daemon.pid)
        import re
        assert re.search(r"event=cancel conn=\d+ seq=\d+", (d / "daemon.log").read_text())
    finally:
        daemon.terminate()
        daemon.wait(60)
        import shutil
        shutil.rmtree(d, ignore_errors=True)


# ------------------------------------------------------------------ start-up order
def test_tools_list_is_answered_before_the_zygote_is_ready(tmp_path):
    errlog = tmp_path / "err.log"

    def zygote_of(server_pid):
        for p in live_descendants(server_pid):
            try:
                if b"jail.proc.zygote" in open(f"/proc/{p}/cmdline", "rb").read():
                    return p
            except OSError:
                pass
        return None

    async def scenario():
        kids_before = set(children(os.getpid()))
        async with server(params(TEST_PROFILE, tmp_path / "out"), errlog) as s:
            (server_pid,) = await anyio.to_thread.run_sync(
                lambda: wait_until(lambda: list(set(children(os.getpid())) - kids_before), 30))
            zpid = await anyio.to_thread.run_sync(lambda: wait_until(lambda: zygote_of(server_pid), 30, 0.001))
            assert zpid, "no zygote started"
            os.kill(zpid, signal.SIGSTOP)  # it cannot become ready now
            try:
                if "zygote ready" in errlog.read_text():
                    pytest.skip("the zygote was ready before the test could stop it")
                init = await s.initialize()
                tools = (await s.list_tools()).tools
                assert init.server_info.name == "build123d-launcher" and {t.name for t in tools} == set(NAMES)
                # ORDER: both answered while the zygote is stopped, before it said ready
                assert open(f"/proc/{zpid}/stat").read().rsplit(")", 1)[1].split()[0] == "T"
                assert "zygote ready" not in errlog.read_text()
            finally:
                os.kill(zpid, signal.SIGCONT)
            r = await s.call_tool("execute", {"code": "b = Box(1, 1, 1)"})  # the first call waits for it
            assert not r.is_error, r
            assert "zygote ready" in errlog.read_text()

    anyio.run(scenario)


# ------------------------------------------------------------------ a jail that cannot start
def test_server_with_a_failing_required_layer_answers_with_the_layer(tmp_path):
    prof = tmp_path / "empty_seccomp.toml"
    prof.write_text(EMPTY_SECCOMP)

    async def scenario():
        async with server(params(str(prof), tmp_path / "out"), tmp_path / "err.log") as s:
            await s.initialize()
            assert {t.name for t in (await s.list_tools()).tools} == set(NAMES)
            for tool, args in (("execute", {"code": "b = Box(1, 1, 1)"}), ("session_state", {}),
                               ("execute", {"code": "print(1)"})):
                r = await s.call_tool(tool, args)
                t = text_of(r)
                assert r.is_error, r
                assert "jail layer 'seccomp'" in t and "no code runs" in t and "doctor" in t, t

    anyio.run(scenario)


@pytest.mark.skipif(os.geteuid() != 0, reason="the jail user is only used as root")
def test_server_whose_zygote_cannot_start_answers_every_call(tmp_path):
    """A start-up failure (here: a jail user that does not exist) does not end the server: initialize and
    tools/list work, every call has isError and says what failed and how to go on."""
    p = StdioServerParameters(command=sys.executable,
                              args=["-m", "launcher", "mcp", "--embedded", "--profile", TEST_PROFILE,
                                    "--jail-uid", "no_such_user_b123d", "--output-dir", str(tmp_path / "out")],
                              env=launcher_env(), cwd=str(REPO))

    async def scenario():
        async with server(p, tmp_path / "err.log") as s:
            await s.initialize()
            assert {t.name for t in (await s.list_tools()).tools} == set(NAMES)
            for tool, args in (("execute", {"code": "b = Box(1, 1, 1)"}), ("list_snapshots", {}), ("reset", {})):
                r = await s.call_tool(tool, args)
                assert r.is_error, r
                t = text_of(r)
                assert "jail layer 'userns'" in t and "no_such_user_b123d" in t and "doctor" in t, t
                assert "Fix: pass --jail-uid with an existing user" in t, t

    anyio.run(scenario)


def test_tools_list_does_not_wait_for_a_daemon_that_has_not_greeted(tmp_path):
    """``mcp --socket S`` where S accepts but never greets (a socket-activated daemon still starting):
    initialize and tools/list are answered anyway - by ORDER, the greeting never comes."""
    import socket as socketmod
    import tempfile
    from pathlib import Path
    d = Path(tempfile.mkdtemp(prefix="b123d-mute-", dir="/tmp"))
    path = d / "mute.sock"
    mute = socketmod.socket(socketmod.AF_UNIX, socketmod.SOCK_STREAM)
    mute.bind(str(path))
    mute.listen(8)  # connections complete in the backlog; nothing is ever read or sent
    p = StdioServerParameters(command=sys.executable,
                              args=["-m", "launcher", "mcp", "--socket", str(path), "--profile", TEST_PROFILE],
                              env=launcher_env(), cwd=str(REPO))

    async def scenario():
        async with server(p, tmp_path / "err.log") as s:
            init = await s.initialize()
            tools = (await s.list_tools()).tools
            assert init.server_info.name == "build123d-launcher" and {t.name for t in tools} == set(NAMES)

    try:
        anyio.run(scenario)
    finally:
        mute.close()
        import shutil
        shutil.rmtree(d, ignore_errors=True)

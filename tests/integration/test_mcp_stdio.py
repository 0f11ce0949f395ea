"""End to end over MCP stdio, with the real ``mcp`` SDK client.

``python -m launcher mcp --embedded --profile sessions_fast`` is spawned by
``mcp.client.stdio.stdio_client``; one server (one zygote) serves the module.
The client runs in an anyio blocking portal, so the tests stay synchronous.
"""
from __future__ import annotations

import math
import os
import time

import anyio
import anyio.from_thread
import pytest

from tests.helpers.proc import alive, children, proc_stat, settled_tree, wait_until

from mcpclient import connect, running, server_params

from launcher.tools import NAMES

PLATE = """\
length, width, thickness = 80.0, 60.0, 10.0
with BuildPart() as plate:
    Box(length, width, thickness)
    with GridLocations(length - 20, width - 20, 2, 2):
        Hole(radius=4)
part = plate.part
print(f"faces={len(part.faces())} volume={part.volume:.3f}")
"""
PLATE_VOLUME = 80 * 60 * 10 - 4 * math.pi * 4 ** 2 * 10


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    d = tmp_path_factory.mktemp("mcp")
    with running(d / "out", d / "server-stderr.log") as c:
        yield c


def test_initialize_and_list_tools(client):
    assert client.init.server_info.name == "build123d-launcher"
    assert "sandboxed" in (client.init.instructions or "")
    tools = {t.name: t for t in client.list_tools().tools}
    assert set(tools) == set(NAMES)
    assert tools["execute"].input_schema["required"] == ["code"]
    assert set(tools["export"].input_schema["properties"]) == {"object_name", "filename", "format"}
    for t in tools.values():
        assert t.description


def test_execute_plate_with_holes(client):
    text = client.text("execute", {"code": PLATE})
    assert text.startswith("OK (")
    assert f"faces=10 volume={PLATE_VOLUME:.3f}" in text, text
    assert f"+ part: Part  volume {PLATE_VOLUME:.6g}  bbox 80x60x10" in text, text  # names this call added
    state = client.text("session_state")
    assert state.startswith("objects:") and "part: Part" in state and "plate: BuildPart" in state


def test_error_then_state_survives(client):
    assert client.text("execute", {"code": "w = 5\nlabel = 'keep'"}).startswith("OK")
    text = client.error("execute", {"code": "w = 6\nlabel = 'lost'\nraise ValueError('bad dimension')"})
    assert text.splitlines() == ["ValueError at line 3: bad dimension", "    1 | w = 6", "    2 | label = 'lost'",
                                 "  > 3 | raise ValueError('bad dimension')", "The session is unchanged."], text
    assert client.text("last_error") == "\n".join(text.splitlines()[:4])
    text = client.text("execute", {"code": "print(w, label, round(part.volume, 3))"})
    assert f"5 keep {PLATE_VOLUME:.3f}" in text


def test_policy_error_over_mcp(client):
    text = client.error("execute", {"code": "import socket\nsocket.socket()"})
    assert text.startswith("PolicyError at line 1:"), text
    assert "socket" in text and "unchanged" in text


def test_timeout_over_mcp(client):
    t0 = time.monotonic()
    text = client.error("execute", {"code": "w = 99\nwhile True: pass"})
    took = time.monotonic() - t0
    # the first line is the launcher's words only; where it was is the session's report, labelled
    assert text.startswith("ExecutionTimeout: execution exceeded the 2s wall-clock limit"), text
    assert "The session's own report" in text and "it was at line 2" in text, text
    assert 1.9 < took < 8
    le = client.text("last_error")
    assert le.startswith("ExecutionTimeout: ") and "it was at line 2" in le, le
    assert "5 keep" in client.text("execute", {"code": "print(w, label)"})


def test_snapshots_over_mcp(client):
    assert client.text("list_snapshots") == "snapshots: none"
    assert "a" in client.text("save_snapshot", {"name": "a"})
    assert client.text("execute", {"code": "w = 100\npart = Sphere(1)"}).startswith("OK")
    assert "100" in client.text("execute", {"code": "print(w)"})
    assert client.text("restore_snapshot", {"name": "a"}).startswith("restored snapshot 'a'")
    text = client.text("execute", {"code": "print(w, round(part.volume, 3))"})
    assert f"5 {PLATE_VOLUME:.3f}" in text
    assert client.text("list_snapshots") == "snapshots: a"
    assert client.error("restore_snapshot", {"name": "nope"}) == "Error: no snapshot named 'nope' (have: a)"
    assert client.text("delete_snapshot", {"name": "a"}).startswith("deleted snapshot 'a'")
    assert client.text("list_snapshots") == "snapshots: none"
    for i in range(3):
        client.text("save_snapshot", {"name": f"s{i}"})
    text = client.error("save_snapshot", {"name": "s3"})
    assert text.startswith("Error: ") and "max_snapshots" in text


def test_bad_arguments_over_mcp(client):
    res = client.call("execute", {})
    assert res.is_error, res  # schema validation by the SDK server: a tool error, not a crash
    assert "5 keep" in client.text("execute", {"code": "print(w, label)"})


def test_reset_over_mcp(client):
    assert client.text("execute", {"code": "print(w)"}).startswith("OK")
    assert client.text("reset").startswith("reset: a new, empty session")
    text = client.error("execute", {"code": "print(w)"})
    assert text.startswith("NameError at line 1: name 'w' is not defined"), text
    assert client.text("list_snapshots") == "snapshots: none"


def test_server_exit_leaves_no_process(tmp_path):
    """Closing the client (stdin EOF) ends the server, its zygote and every session."""
    kids_before = set(children(os.getpid()))
    errlog_path = tmp_path / "stderr.log"

    async def scenario():
        with open(errlog_path, "w") as errlog:
            async with connect(server_params(tmp_path / "out"), errlog) as (session, _init):
                res = await session.call_tool("execute", {"code": "b = Box(1, 1, 1)"})
                assert res.content[0].text.startswith("OK"), res
                (server,) = set(children(os.getpid())) - kids_before
                pids = [server] + settled_tree(server, 6)
                tree = {p: proc_stat(p)[2] for p in pids if proc_stat(p)}
                t0 = time.monotonic()
            return tree, time.monotonic() - t0

    tree, took = anyio.run(scenario)
    # server, zygote, keeper, init, head, next (+ any spare session)
    assert len(tree) >= 6, tree
    assert wait_until(lambda: not [p for p, st in tree.items() if alive(p, st)], 3), \
        f"still alive after the client closed: {[p for p, st in tree.items() if alive(p, st)]}"
    print(f"\nclient close -> server gone in {took:.2f}s")
    # the SDK waits 2 s for a clean exit after stdin EOF before it kills the process group
    assert took < 2.0, f"the server did not exit by itself on stdin EOF ({took:.2f}s): {errlog_path.read_text()}"

"""Hostile MCP / JSON-RPC input to ``python -m launcher mcp --embedded`` over raw stdio.

One server process for the module. Each malformed or oversized message is
followed by a ``ping``: the server must keep answering, and requests that
carry an id must get a JSON-RPC response (an error, or a tool result with
``isError``): unparsable text gets -32700, a request with an id but a wrong
shape gets -32602/-32600 with that id (launcher/stdio_transport.py).
"""
from __future__ import annotations

import json
import time

import pytest

from tests.helpers.faults import Stdio


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    s = Stdio(tmp_path_factory.mktemp("mcp"))
    s.initialize()
    yield s
    s.close()
    assert s.p.returncode == 0, f"the MCP server exited with {s.p.returncode}"


def _tool(server, name, args, timeout=60):
    return server.request("tools/call", {"name": name, "arguments": args}, timeout=timeout)


MALFORMED = [
    b"not json",
    b"{",
    b'{"jsonrpc": "2.0", "id": 1, "method": ',
    b"[]",
    b"[1, 2, 3]",
    b"null",
    b"42",
    b'"just a string"',
    b'{"foo": 1}',
    b'{"jsonrpc": "1.0", "id": 77, "method": "ping"}',
    b'{"jsonrpc": "2.0", "id": {"nested": true}, "method": "ping"}',
    b'{"jsonrpc": "2.0", "method": 5}',
    b'{"jsonrpc": "2.0", "id": 78, "method": "tools/call", "params": "x"}',
    b'{"jsonrpc": "2.0", "id": 79, "method": "tools/call", "params": {"name": 5}}',
    b'{"jsonrpc": "2.0", "id": 80, "method": "initialize", "params": {}}',
    b'{"jsonrpc": "2.0", "result": {}, "id": 999999}',
    b'{"jsonrpc": "2.0", "error": {"code": 1, "message": "x"}, "id": 999998}',
    b"\xff\xfe\x00garbage",
    b"\x00" * 1000,
    b'{"jsonrpc": "2.0", "id": 81, "method": "ping", "params": {"_meta": ' + b"[" * 5000 + b"]" * 5000 + b"}}",
    b"{" * 100_000,
]


@pytest.mark.parametrize("line", MALFORMED, ids=[repr(m[:30]) for m in MALFORMED])
def test_malformed_message_keeps_server_answering(server, line):
    server.send_raw(line)
    server.drain(0.2)
    assert server.alive_and_answering(), f"no answer to ping after {line[:60]!r}"


def test_unknown_method_gets_jsonrpc_error(server):
    r = server.request("no/such/method", {})
    assert r["error"]["code"] == -32601


@pytest.mark.parametrize("name,args", [
    ("execute", {"code": 123}),
    ("execute", {}),
    ("execute", {"code": "x = 1", "extra": [1, 2]}),
    ("bogus_tool", {}),
    ("export", {"object_name": "nope", "filename": "../../etc/passwd"}),
    ("restore_snapshot", {"name": "../x"}),
    ("save_snapshot", {"name": "a" * 10_000}),
])
def test_bad_tool_calls_get_error_results(server, name, args):
    r = _tool(server, name, args)
    assert r is not None, "no response"
    assert "error" in r or r["result"].get("isError") or "Error" in json.dumps(r["result"]), r
    assert server.alive_and_answering()


def test_oversized_requests(server):
    # code over the profile's max_code_bytes: refused before it reaches a child
    r = _tool(server, "execute", {"code": "x = 1\n" + "#" * 400_000})
    text = json.dumps(r)
    assert "larger than" in text, text[:300]
    # a 16 MB JSON-RPC line
    r = _tool(server, "execute", {"code": "s = '" + "a" * (16 << 20) + "'"}, timeout=120)
    assert r is not None and "larger than" in json.dumps(r)[:2000]
    # a huge string argument to a tool that does not take code
    r = _tool(server, "save_snapshot", {"name": "b" * (4 << 20)}, timeout=120)
    assert r is not None
    assert server.alive_and_answering()
    r = _tool(server, "execute", {"code": "print(6 * 7)"})
    assert "42" in json.dumps(r), r


def test_many_pipelined_requests(server):
    ids = []
    for i in range(200):
        rid = 500_000 + i
        ids.append(rid)
        server.send({"jsonrpc": "2.0", "id": rid, "method": "ping"})
        if i % 20 == 0:
            server.send_raw(b"garbage between pipelined requests")
    seen = set()
    deadline = time.monotonic() + 60
    while len(seen) < len(ids) and time.monotonic() < deadline:
        m = server.recv(5)
        if m is None:
            break
        if m.get("id") in ids:
            seen.add(m["id"])
    assert len(seen) == len(ids), f"{len(ids) - len(seen)} pipelined pings got no answer"


def test_parse_error_gets_jsonrpc_reply(server):
    server.drain(0.2)
    server.send_raw(b"this is not json")
    got = server.drain(2)
    assert any(m.get("error", {}).get("code") == -32700 for m in got), got


def test_invalid_params_request_gets_reply(server):
    server.drain(0.2)
    server.send_raw(b'{"jsonrpc": "2.0", "id": 4242, "method": "tools/call", "params": "x"}')
    r = server.wait_id(4242, 3)
    assert r is not None and "error" in r, r

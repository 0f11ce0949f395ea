"""MCP over stdio, answering malformed input the way JSON-RPC 2.0 says.

The SDK's ``stdio_server`` drops a line it cannot validate (it hands the error to
the session, which only logs it), so a client gets no ``-32700 Parse error`` for
text that is not JSON, and no reply at all to a request with an ``id`` whose shape
is wrong — a client waiting on that id hangs. This module puts a filter in front of
the SDK's reader: lines that validate go through unchanged; for the others it sends
the JSON-RPC error itself, through the SDK's own writer.

Blocks: nothing (this is protocol hygiene); the launcher never crashes on any input.
"""
from __future__ import annotations

import io
import json
import sys

import anyio
import mcp_types as types
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

class _FilteredLines:
    """Async iterator over stdin lines that answers the invalid ones via ``write``."""

    def __init__(self, stdin):
        self.stdin = stdin
        self.write = None  # the SDK's write stream, set once stdio_server has made it

    def __aiter__(self):
        return self

    async def __anext__(self) -> str:
        while True:
            line = await self.stdin.readline()
            if not line:
                raise StopAsyncIteration
            if not line.strip():
                continue
            error = self._check(line)
            if error is None:
                return line
            if self.write is not None:
                await self.write.send(SessionMessage(error))

    @staticmethod
    def _check(line: str) -> types.JSONRPCError | None:
        def err(id_, code, message):
            return types.JSONRPCError(jsonrpc="2.0", id=id_, error=types.ErrorData(code=code, message=message))

        try:
            obj = json.loads(line)
        except (ValueError, RecursionError) as e:  # RecursionError: nested deeper than the parser goes
            return err(None, types.PARSE_ERROR, f"Parse error: {e}"[:500])
        try:
            types.jsonrpc_message_adapter.validate_python(obj, by_name=False)
            return None
        except Exception as e:  # noqa: BLE001 - any validation failure
            id_ = obj.get("id") if isinstance(obj, dict) else None
            if not isinstance(id_, (str, int)) or isinstance(id_, bool):
                id_ = None
            if isinstance(obj, dict) and "method" in obj and id_ is not None:
                code = types.INVALID_PARAMS if "params" in obj else types.INVALID_REQUEST
            elif isinstance(obj, dict) and "method" not in obj and id_ is not None:
                return None  # a malformed *response* from the client: nobody waits for a reply
            else:
                code = types.INVALID_REQUEST
            first = str(e).splitlines()[0] if str(e) else type(e).__name__
            return err(id_, code, f"Invalid request: {first}"[:500])


async def run_stdio(server) -> None:
    """``Server.run`` over stdio with the filtered reader."""
    lowlevel = getattr(server, "_lowlevel_server", server)  # an MCPServer or a low-level Server
    stdin = _FilteredLines(anyio.wrap_file(io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8",
                                                            errors="replace")))
    async with stdio_server(stdin=stdin) as (read_stream, write_stream):
        stdin.write = write_stream
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())

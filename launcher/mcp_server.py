"""The MCP stdio server: the tools an assistant calls, over a backend.

The backend is either an embedded :class:`~launcher.tools.ToolSet` (the
launcher runs in this process) or a client of the daemon's unix socket; both
expose ``call(tool, args) -> dict``, so results are the same either way.
Blocking calls run in a worker thread so the stdio loop stays responsive.
"""
from __future__ import annotations

import anyio
from mcp.server import MCPServer

from .tools import render

INSTRUCTIONS = """Run build123d (Python CAD) code in a sandboxed, persistent session.
`execute(code)` runs code; top-level names persist between calls (`from build123d import *` is
pre-loaded). A call that raises, times out or crashes leaves the session exactly as it was.
Allowed imports: build123d, math, numpy, typing, collections, itertools, functools, copy.
No file, network or process access: use `export` to write STEP/STL/BREP/SVG/DXF/3MF files.
Use `save_snapshot`/`restore_snapshot` to branch designs cheaply."""


def build_server(backend) -> MCPServer:
    mcp = MCPServer("build123d-launcher", instructions=INSTRUCTIONS)

    async def call(tool: str, **args) -> str:
        result = await anyio.to_thread.run_sync(backend.call, tool, args)
        return render(tool, result)

    @mcp.tool(description="Run build123d Python code in the session. Top-level names persist. "
                          "Returns stdout/stderr and a summary (type, volume, bounding box) of the "
                          "build123d objects bound to top-level names, or the error with its line. "
                          "timeout_s (optional) shortens the wall-clock limit (the profile caps it).")
    async def execute(code: str, timeout_s: float | None = None) -> str:
        args = {"code": code} if timeout_s is None else {"code": code, "timeout_s": timeout_s}
        return await call("execute", **args)

    @mcp.tool(description="List the session's top-level names: type, volume, bounding box, validity.")
    async def session_state() -> str:
        return await call("session_state")

    @mcp.tool(description="The last error in this session: type, message, line and source line.")
    async def last_error() -> str:
        return await call("last_error")

    @mcp.tool(description="Save the whole session state (variables, functions, shapes) under a name. O(1).")
    async def save_snapshot(name: str) -> str:
        return await call("save_snapshot", name=name)

    @mcp.tool(description="Restore the session to a saved snapshot (the snapshot itself is kept).")
    async def restore_snapshot(name: str) -> str:
        return await call("restore_snapshot", name=name)

    @mcp.tool(description="List saved snapshots.")
    async def list_snapshots() -> str:
        return await call("list_snapshots")

    @mcp.tool(description="Delete a saved snapshot.")
    async def delete_snapshot(name: str) -> str:
        return await call("delete_snapshot", name=name)

    @mcp.tool(description="Discard the session and start a new, empty one (snapshots are discarded too).")
    async def reset() -> str:
        return await call("reset")

    @mcp.tool(description="Export a top-level object to a file in the output directory. format: step, stl, "
                          "brep, svg, dxf or 3mf (default: from the filename's extension). The filename "
                          "must be relative; existing files are never overwritten.")
    async def export(object_name: str, filename: str, format: str = "") -> str:
        return await call("export", object_name=object_name, filename=filename, format=format)

    return mcp


def serve_stdio(backend) -> None:
    from .stdio_transport import run_stdio
    anyio.run(run_stdio, build_server(backend))

"""The MCP stdio server: the tools an assistant calls, over a backend.

The tools (names, schemas, annotations, renderers) come from :mod:`launcher.tools.table`. The
backend is an embedded :class:`~launcher.tools.toolset.ToolSet` or a client of the daemon's unix
socket; both expose ``call(tool, args, call_id) -> dict`` and ``cancel(call_id)``, so results are
the same either way. ``initialize`` and ``tools/list`` never wait for the jail; every failed call
(refused arguments, errors in the user's code, timeouts, crashes, refused exports, a jail that
cannot start) has ``isError: true``; ``notifications/cancelled`` for a running call kills its
child at once (the session is left as before the call). A tool with an ``output_schema`` lists it
as ``outputSchema`` and returns, on success, ``structuredContent`` that conforms to it (checked
here once more) beside its text (MCP 2025-06-18). Blocking calls run in worker threads so
the stdio loop stays responsive. The instructions name the backend (``backend_note``); a call that
arrives while the jail is starting waits visibly (launcher/mcp/warmup.py).
"""
from __future__ import annotations

import logging

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server

from launcher import __version__
from launcher.mcp import quickref, warmup
from launcher.mcp.stdio import run_stdio
from launcher.tools import content, table

log = logging.getLogger("build123d_launcher.mcp")

INSTRUCTIONS = """Run build123d (Python CAD) code in a sandboxed, persistent session.
`execute(code)` runs code; top-level names persist between calls (`from build123d import *` is
pre-loaded). A call that raises, times out or crashes leaves the session exactly as it was.
Allowed imports: {allowed_imports}.
The code has no file, network or process access and no GUI viewer: use `render` to see the model
(PNG), `session_state`/`measure` to inspect objects, `import_file` to read the input directory and
`export` to write STEP/STL/BREP/SVG/DXF/3MF files into the output directory.
The user's own files: `list_inputs` and `import_file(filename, name)` (from the input directory the user
set with --input-dir); `script` returns the session's successful code as one runnable .py.
Use `save_snapshot`/`restore_snapshot` to branch designs cheaply.
build123d {b3d_version}, OCP {ocp_version}. Look the API up with the `api` tool (dir/help/__doc__ are
refused in code); a short quick reference is the resource build123d://quickref."""


def _content(blocks: list[dict]) -> list:
    out = []
    for b in blocks:
        if b.get("type") == "image":
            out.append(types.ImageContent(type="image", data=b["data"], mime_type=b.get("mimeType", "image/png")))
        else:
            out.append(types.TextContent(type="text", text=str(b.get("text", ""))))
    return out


def list_tools(profile=None) -> list[types.Tool]:
    return [types.Tool(name=t.name, title=t.title or None, description=t.describe(profile),
                       input_schema=t.input_schema(profile), output_schema=t.output_schema,
                       annotations=types.ToolAnnotations.model_validate({"title": t.title or None, **t.annotations}))
            for t in table.TOOLS]


def build_server(backend, profile=None, backend_note: str | None = None) -> Server:
    """The low-level MCP server for ``backend``; ``profile`` fills limits into the descriptions;
    ``backend_note`` (which backend serves the calls) ends the instructions."""
    tools = list_tools(profile)

    async def on_list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        name, args = params.name, dict(params.arguments or {})
        tool = table.get(name)
        call_id = object()
        waited = None
        try:
            waited = await warmup.wait_for_jail(ctx, backend)
            result = await anyio.to_thread.run_sync(backend.call, name, args, call_id, abandon_on_cancel=True)
        except anyio.get_cancelled_exc_class():
            # notifications/cancelled (or shutdown): kill the running child; the worker thread
            # returns a "cancelled" result that nobody reads, the session is as before the call
            try:
                backend.cancel(call_id)
            except Exception:  # noqa: BLE001
                log.exception("cancel failed")
            raise
        except Exception as e:  # noqa: BLE001 - a bug must not end the server
            log.exception("tool %s crashed", name)
            result = {"error": f"internal error in {name}: {type(e).__name__}: {e}"}
        structured = None
        if tool is None:
            blocks = [content.text(f"Error: {result.get('error', 'unknown tool')}")]
        else:
            try:  # a tool with an outputSchema: structuredContent that conforms, or an error
                structured = tool.structured(result)
            except ValueError as e:
                result = {"error": str(e)}
            blocks = tool.content(result)
        blocks = warmup.add_note(blocks, waited)
        return types.CallToolResult(content=_content(blocks), structured_content=structured,
                                    is_error=content.is_error(result))

    ver = quickref.versions()

    async def on_list_resources(ctx, params) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[types.Resource(
            uri=quickref.URI, name=quickref.NAME, mime_type="text/markdown",
            description="build123d in a page: builder and algebra modes, selectors, and which tool replaces "
                        "what session code cannot do (files, viewers, introspection)")])

    async def on_read_resource(ctx, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        if str(params.uri) != quickref.URI:
            raise ValueError(f"unknown resource {str(params.uri)[:200]!r}")
        return types.ReadResourceResult(contents=[types.TextResourceContents(
            uri=quickref.URI, mime_type="text/markdown", text=quickref.text())])

    instructions = INSTRUCTIONS.format(
        b3d_version=ver["build123d"], ocp_version=ver["OCP"],
        allowed_imports=", ".join(profile.allowed_imports) if profile is not None
        else "build123d, math, numpy, typing, collections, itertools, functools, copy")
    if backend_note:
        instructions += "\nBackend: " + backend_note
    return Server("build123d-launcher", version=__version__, title="build123d launcher",
                  instructions=instructions, on_list_tools=on_list_tools, on_call_tool=on_call_tool,
                  on_list_resources=on_list_resources, on_read_resource=on_read_resource)


def serve_stdio(backend, profile=None, backend_note: str | None = None) -> None:
    anyio.run(run_stdio, build_server(backend, profile, backend_note))

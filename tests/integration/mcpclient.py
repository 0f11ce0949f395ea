"""A real MCP stdio client for the integration tests (the ``mcp`` SDK's ``stdio_client``), with a
synchronous face: the session lives in an anyio blocking portal's event loop.

``running(out_dir, errlog_path, *extra_args)`` starts ``build123d-launcher mcp --embedded`` on the
test profile and yields a :class:`Client`; test modules subclass it for their own helpers.
"""
from __future__ import annotations

import sys
from contextlib import asynccontextmanager, contextmanager

import anyio.from_thread
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.helpers.cli import REPO, TEST_PROFILE, launcher_env


def server_params(out_dir, *extra_args: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "launcher", "mcp", "--embedded", "--profile", TEST_PROFILE, "--output-dir", str(out_dir),
              *extra_args],
        env=launcher_env(), cwd=str(REPO))


@asynccontextmanager
async def connect(params, errlog):
    async with stdio_client(params, errlog=errlog) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            yield session, init


class Client:
    """Synchronous face of an MCP ClientSession living in a portal's event loop."""

    def __init__(self, portal, session, init):
        self.portal, self.session, self.init = portal, session, init

    def list_tools(self):
        return self.portal.call(self.session.list_tools)

    def call(self, name: str, args: dict | None = None):
        return self.portal.call(lambda: self.session.call_tool(name, args or {}))

    def text(self, name: str, args: dict | None = None, *, error: bool = False) -> str:
        """The reply's one text block; asserts ``isError`` is ``error`` (a failed call must say so)."""
        res = self.call(name, args)
        assert res.is_error is error, res
        assert len(res.content) == 1 and res.content[0].type == "text", res
        return res.content[0].text

    def error(self, name: str, args: dict | None = None) -> str:
        return self.text(name, args, error=True)


@contextmanager
def running(out_dir, errlog_path, *extra_args: str, cls=Client, params=None):
    """An MCP server started for the block, and a ``cls`` client connected to it."""
    with open(errlog_path, "w") as errlog:
        with anyio.from_thread.start_blocking_portal() as portal:
            cm = portal.wrap_async_context_manager(connect(params or server_params(out_dir, *extra_args), errlog))
            session, init = cm.__enter__()
            try:
                yield cls(portal, session, init)
            finally:
                cm.__exit__(None, None, None)

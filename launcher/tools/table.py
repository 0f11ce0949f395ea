"""Every tool, in the order clients list them: the one place that names them all.

Each tool is declared once, in its family module, with one naming scheme: tool ``x`` is the
declaration ``X = Tool("x", ...)``, its handler ``x(ctx, session, **args)`` and, when it has one,
its content renderer ``x_content(result)``. Families: session.py (execute, session_state,
last_error, reset), snapshots.py, cad.py (render, measure, distance, validate, api, features), files.py
(export, list_inputs, import_file, script). Adding a tool = one ``Tool(...)`` in a family and
one line here (and, when it needs the jail, one op in jail/proc/ops.py).

The MCP server lists ``TOOLS``; :class:`~launcher.tools.toolset.ToolSet` (embedded server,
daemon, CLI) checks arguments and dispatches with :func:`get`; :func:`render_text` prints a
result for the CLI.
"""
from __future__ import annotations

from launcher.tools import cad, content, files, session, snapshots
from launcher.tools.tool import Tool

TOOLS: tuple[Tool, ...] = (
    session.EXECUTE, session.SESSION_STATE, session.LAST_ERROR,
    snapshots.SAVE_SNAPSHOT, snapshots.RESTORE_SNAPSHOT, snapshots.LIST_SNAPSHOTS, snapshots.DELETE_SNAPSHOT,
    session.RESET,
    files.EXPORT,
    cad.API, cad.RENDER, cad.MEASURE, cad.DISTANCE, cad.VALIDATE, cad.FEATURES,
    files.LIST_INPUTS, files.IMPORT_FILE, files.SCRIPT,
)

BY_NAME: dict[str, Tool] = {t.name: t for t in TOOLS}
NAMES: tuple[str, ...] = tuple(BY_NAME)


def get(name) -> Tool | None:
    return BY_NAME.get(name) if isinstance(name, str) else None


def render_text(tool: str, result) -> str:
    """A result as plain text (CLI, tests): the text blocks of its content, images summarised."""
    t = get(tool)
    if t is not None:
        return content.as_text(t.content(result))
    blocks = content.error(result)
    return content.as_text(blocks if blocks is not None else content.as_json(result))

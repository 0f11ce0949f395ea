"""build123d-launcher: the unjailed daemon side (MCP server, sessions, timers, exports)."""
__version__ = "0.1.0"

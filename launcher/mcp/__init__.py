"""The MCP front end: the stdio server, its transport, the deferred backend, the quick-reference resource."""

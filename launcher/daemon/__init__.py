"""The daemon: the unix-socket server, its client (used by `mcp`), and the systemd user-unit installer."""

"""Read one request frame from a daemon client, whatever the client sends.

A request is ``{"tool": str, "args": {str: ...}}`` (optionally ``"seq": int``) in one frame (see
:mod:`launcher.daemon.client`). A frame over the limit (the profile's ``max_code_bytes`` + 64 KiB)
is read and dropped up to :data:`DISCARD_LIMIT` and answered with an error; beyond that the
connection is cut. Malformed JSON or a wrong shape is an error reply, never an exception.
"""
from __future__ import annotations

import json
import socket

from launcher.daemon.client import HEADER, recv_exact

DISCARD_LIMIT = 64 * 1024 * 1024  # oversize requests up to this are read and dropped; beyond, the connection is cut


def read_request(conn: socket.socket, max_request: int):
    """('ok', obj) | ('error', message) | ('eof', None) | ('fatal', message). OSError passes."""
    head = recv_exact(conn, HEADER.size)
    if head is None:
        return "eof", None
    (n,) = HEADER.unpack(head)
    if n > max_request:
        if n > DISCARD_LIMIT:
            return "fatal", f"request of {n} bytes exceeds the {max_request}-byte limit; closing"
        left = n
        while left:
            chunk = conn.recv(min(left, 1 << 20))
            if not chunk:
                return "eof", None
            left -= len(chunk)
        return "error", (f"request of {n} bytes exceeds the daemon's {max_request}-byte limit "
                         "(the profile's max_code_bytes + 64 KiB)")
    body = recv_exact(conn, n)
    if body is None:
        return "eof", None
    try:
        obj = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
        return "error", f"malformed request: not UTF-8 JSON ({type(e).__name__})"
    if not isinstance(obj, dict) or not isinstance(obj.get("tool"), str) \
            or not isinstance(obj.get("args", {}), dict):
        return "error", 'malformed request: expected {"tool": name, "args": {...}}'
    if not all(isinstance(k, str) for k in obj.get("args", {})):
        return "error", "malformed request: argument names must be strings"
    return "ok", obj

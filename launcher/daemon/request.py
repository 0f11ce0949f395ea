"""Read one request frame from a daemon client, whatever the client sends, in bounded time.

A request is ``{"tool": str, "args": {str: ...}}`` (optionally ``"seq": int``) in one frame (see
:mod:`launcher.daemon.client`). A frame over the limit (the profile's ``max_code_bytes`` + 64 KiB)
is read and dropped up to :data:`DISCARD_LIMIT` and answered with an error; beyond that the
connection is cut. Malformed JSON or a wrong shape is an error reply, never an exception.

Time: a frame whose first byte has been read must be whole within :data:`FRAME_S` (the total
time of the frame, not the gap between bytes: a client trickling a byte a second is cut), and
``deadline`` bounds the whole read, first byte included (a connection before its first request).
Without ``deadline`` the wait for a frame's first byte has no bound: an established client may
stay silent between requests for hours. The socket is left blocking (its ``SO_SNDTIMEO`` applies
to replies again) whatever happens.
"""
from __future__ import annotations

import json
import socket
import time

from launcher.daemon.client import HEADER

DISCARD_LIMIT = 64 * 1024 * 1024  # oversize requests up to this are read and dropped; beyond, the connection is cut
FRAME_S = 10.0  # a frame that has started must be whole within this many seconds (64 MiB locally: < 1 s)


class _Late(Exception):
    """A deadline passed before the bytes arrived."""


def _recv(conn: socket.socket, n: int, until: float | None) -> bytes | None:
    """Exactly ``n`` bytes, None at EOF; :class:`_Late` once ``until`` (monotonic) has passed."""
    buf = bytearray()
    while len(buf) < n:
        if until is None:
            conn.settimeout(None)
        else:
            left = until - time.monotonic()
            if left <= 0:
                raise _Late
            conn.settimeout(left)
        try:
            chunk = conn.recv(min(n - len(buf), 1 << 20))
        except TimeoutError:
            raise _Late from None
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


def read_request(conn: socket.socket, max_request: int, *, deadline: float | None = None,
                 frame_s: float = FRAME_S):
    """('ok', obj) | ('error', message) | ('eof', None) | ('fatal', message) | ('late', started).

    ``late``: ``deadline`` or the frame's own bound passed; ``started`` says whether a byte of the
    frame had arrived. OSError (the connection broke) passes.
    """
    started = False
    try:
        first = _recv(conn, 1, deadline)
        if first is None:
            return "eof", None
        started = True
        until = time.monotonic() + frame_s
        if deadline is not None:
            until = min(until, deadline)
        rest = _recv(conn, HEADER.size - 1, until)
        if rest is None:
            return "eof", None
        (n,) = HEADER.unpack(first + rest)
        if n > max_request:
            if n > DISCARD_LIMIT:
                return "fatal", f"request of {n} bytes exceeds the {max_request}-byte limit; closing"
            left = n
            while left:
                chunk = _recv(conn, min(left, 1 << 20), until)
                if chunk is None:
                    return "eof", None
                left -= len(chunk)
            return "error", (f"request of {n} bytes exceeds the daemon's {max_request}-byte limit "
                             "(the profile's max_code_bytes + 64 KiB)")
        body = _recv(conn, n, until)
        if body is None:
            return "eof", None
    except _Late:
        return "late", started
    finally:
        try:
            conn.settimeout(None)
        except OSError:
            pass
    return _parse(body)


def _parse(body: bytes):
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

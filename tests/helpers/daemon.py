"""Raw access to a daemon's socket for the daemon tests: a plain connection, and a forked child as
another uid (the daemon admits its own uid only; the socket file is 0600).

Frames go through ``launcher.daemon.client.send_frame``/``recv_frame``; nothing here starts a daemon.
"""
from __future__ import annotations

import os
import socket


def raw_connect(path, timeout: float = 60.0) -> socket.socket:
    """A connected AF_UNIX stream socket, ``timeout`` on every later operation. The connect itself
    blocks: a full listen backlog makes it wait, not fail with EAGAIN."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(str(path))
    s.settimeout(timeout)
    return s


def as_uid(uid: int, fn) -> tuple[int, str]:
    """``fn()`` (returning text) in a forked child running as ``uid`` (uid and gid, no groups):
    (exit code: 0 when fn returned, 1 when it raised; its text or the exception, at most 8000 bytes)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        code = 1
        try:
            if os.getuid() != uid:
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
            msg = fn()
            code = 0
        except BaseException as e:  # noqa: BLE001
            msg = f"{type(e).__name__}: {e}"
        os.write(w, msg.encode()[:8000])
        os._exit(code)
    os.close(w)
    data = b""
    while chunk := os.read(r, 4096):
        data += chunk
    os.close(r)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), data.decode()

"""Connections before their first request, and hanging up: bounded in time and in number.

A connection is *pending* from accept until its first request (``_hello`` or a tool call) has
arrived whole; only then does it take one of the daemon's ``max_sessions`` slots. ``_cancel`` and
bad frames are answered while pending and promote nothing. Blocks: silent or trickling
connections holding the slots (a pending connection is dropped :data:`HANDSHAKE_S` after accept,
its whole first request included), and a connect-and-hold flood (at most :data:`MAX_PENDING`
wait; one more drops the oldest, so the user's real client, which sends its hello at once, is
admitted). A refusal or a farewell (one error frame, then a drain so the peer reads it instead of
a reset) lasts at most :data:`REFUSE_S`, at most :data:`MAX_REFUSING` at once (beyond: closed
without a word), so hanging up never holds a thread either.
Does not block: a same-uid client that says hello and then stays silent; it is indistinguishable
from the user's idle chat, which keeps its session (only the daemon's own uid is admitted).
"""
from __future__ import annotations

import socket
import threading
import time

from launcher.daemon.client import send_frame

HANDSHAKE_S = 5.0   # from accept to the first whole request (the real client sends it at once)
MAX_PENDING = 32    # connections waiting for their first request; one more drops the oldest
REFUSE_S = 2.0      # a refusal's error frame plus the drain after it, at most
MAX_REFUSING = 16   # refusals in flight at once; beyond, a refused connection is closed without a word


def hang_up(conn: socket.socket) -> None:
    """Wake whatever thread reads ``conn`` (its recv returns EOF); closing is that thread's job."""
    try:
        conn.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


class Pending:
    """The connections accepted and not yet admitted to a slot, oldest first."""

    def __init__(self, limit: int = MAX_PENDING):
        self.limit = max(1, limit)
        self.lock = threading.Lock()
        self.conns: dict[int, socket.socket] = {}  # insertion order = age

    def add(self, cid: int, conn: socket.socket) -> list[int]:
        """Register ``cid``; the ids of the oldest connections dropped to stay within the limit."""
        with self.lock:
            self.conns[cid] = conn
            dropped = []
            while len(self.conns) > self.limit:
                old = next(iter(self.conns))
                dropped.append((old, self.conns.pop(old)))
        for _old, c in dropped:
            hang_up(c)
        return [old for old, _c in dropped]

    def take(self, cid: int) -> bool:
        """Remove ``cid``; False if it was no longer pending (dropped to make room)."""
        with self.lock:
            return self.conns.pop(cid, None) is not None

    def sockets(self) -> list[socket.socket]:
        with self.lock:
            return list(self.conns.values())

    def __len__(self) -> int:
        with self.lock:
            return len(self.conns)


class Refuser:
    """Sends one error frame and hangs up, each in a short-lived thread (never blocks the caller)."""

    def __init__(self, limit: int = MAX_REFUSING, seconds: float = REFUSE_S):
        self.slots = threading.BoundedSemaphore(limit)
        self.seconds = seconds

    def refuse(self, conn: socket.socket, message: str) -> None:
        """The peer's unread data is drained after the frame: closing a unix socket with unread data
        resets the connection and the peer would not see the error. All of it within ``seconds``."""
        if not self.slots.acquire(blocking=False):
            _close(conn)
            return

        def run():
            try:
                until = time.monotonic() + self.seconds
                conn.settimeout(self.seconds)
                send_frame(conn, {"error": message})
                conn.shutdown(socket.SHUT_WR)
                got = 0
                while got < (1 << 20):
                    left = until - time.monotonic()
                    if left <= 0:
                        break
                    conn.settimeout(left)
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    got += len(chunk)
            except OSError:
                pass
            finally:
                _close(conn)
                self.slots.release()
        try:
            threading.Thread(target=run, name="refuse", daemon=True).start()
        except RuntimeError:  # no thread to spare: hang up without a word
            _close(conn)
            self.slots.release()


def _close(conn: socket.socket) -> None:
    try:
        conn.close()
    except OSError:
        pass

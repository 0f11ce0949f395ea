"""Cancelling the call that runs now, from any thread, without the session lock.

While a call waits for its next's reply the next is armed here; ``cancel()`` (the client) or
``abort()`` (the launcher's watchdog, a session-wide bound) SIGKILLs it through its pidfd, and the
wait then raises ``CallCancelled`` even if the reply came meanwhile. The lock is per session and
held for a few instructions only.

Blocks: a call outliving its cancellation. Does not: interrupt the launcher's own work between
two waits (the call is cancelled when it next waits, or its reply is discarded).
"""
from __future__ import annotations

import threading

from jail.wire import protocol
from launcher.contain.procs import Proc
from launcher.session.channel import Channel
from launcher.session.errors import CallCancelled, SessionDead


class Cancellation:
    """The next a cancellable call waits on, and whether cancel()/abort() killed it."""

    def __init__(self, channel: Channel):
        self.channel = channel
        self._lock = threading.Lock()  # held for a few instructions only
        self._busy: Proc | None = None  # the next a cancellable call waits on
        self._hit: Proc | None = None  # the next cancel() killed
        self.aborted: tuple[str, str] | None = None  # (error type, message) of a call the watchdog killed

    def running(self) -> Proc | None:
        """The process of the call running now (None between calls); read without the lock."""
        return self._busy

    def cancel(self) -> bool:
        """SIGKILL the running call's next; False when no cancellable call runs."""
        with self._lock:
            nxt = self._busy
            if nxt is None:
                return False
            self._hit = nxt
            nxt.kill()
            return True

    def abort(self, kind: str, message: str) -> bool:
        """Like cancel(); the call then fails with ``kind`` and ``message`` (see ``aborted``)."""
        with self._lock:
            nxt = self._busy
            if nxt is None or self._hit is nxt:
                return False
            self.aborted = (kind, message)
            self._hit = nxt
            nxt.kill()
            return True

    def wait(self, types, nxt: Proc, deadline, *, sender: Proc | None = None, accept=None, **kw):
        """``Channel.wait`` for ``nxt``'s reply; CallCancelled if cancel() hit it (even after the reply came).
        ``sender``: the reply comes from that process (a child of ``nxt`` serving a read-only op),
        watched with ``nxt``; ``accept``: from any sender it accepts. cancel() kills ``nxt`` either way."""
        with self._lock:
            self._busy, self._hit, self.aborted = nxt, None, None
        try:
            if accept is not None:
                got = self.channel.wait(types, None, deadline, watch=nxt, accept=accept, **kw)
            elif sender is not None:
                got = self.channel.wait(types, sender.pid, deadline, watch=(nxt, sender), **kw)
            else:
                got = self.channel.wait(types, nxt.pid, deadline, watch=nxt, **kw)
        except (TimeoutError, SessionDead, protocol.ProtocolError):
            if self._disarm(nxt):
                raise CallCancelled() from None
            raise
        if self._disarm(nxt):
            raise CallCancelled()
        return got

    def _disarm(self, nxt: Proc) -> bool:
        with self._lock:
            self._busy = None
            hit, self._hit = self._hit is nxt, None
            return hit

"""Clients that go away during a call: their session is killed at once.

While a call runs, the watcher thread polls its connection for POLLHUP (the peer is gone, not a
half-close). Then it SIGKILLs (pidfd) the session's init and keeper, so the whole session pid
namespace dies, snapshots included, whatever the call is doing; any session the unwinding call
makes meanwhile (e.g. ``reset``) is killed too, until the call returns. The connection's thread
then sends no reply and closes the slot. It does not watch idle connections: their end is seen
by the connection's own read.
"""
from __future__ import annotations

import logging
import os
import select
import socket
import threading

from launcher.daemon.logfmt import event


def kill_session(s) -> None:
    """SIGKILL (pidfd) ``s``'s init and keeper. Takes no lock (a running call holds the session's)."""
    for p in (getattr(s, "init", None), getattr(s, "keeper", None)):
        if p is not None:
            try:
                p.kill()
            except Exception:  # noqa: BLE001 - already gone
                pass


def _kill_session_of(ts) -> object | None:
    """Kill the session of ToolSet ``ts`` if it has a live one; that session, else None. The call in
    progress then sees its process die and returns."""
    s = getattr(ts, "session", None)
    if s is None or getattr(s, "closed", True):
        return None
    kill_session(s)
    return s


class DisconnectWatcher:
    """Registers running calls (:meth:`call_started`, :meth:`call_ended`) and watches their connections."""

    def __init__(self, stopping: threading.Event):
        self.stopping = stopping
        self.lock = threading.Lock()
        self.busy: dict[int, tuple[socket.socket, object]] = {}  # conns with a call running
        self.abandoned: dict[int, set[int]] = {}  # conn id -> id()s of the sessions killed for it
        self.watch_r, self.watch_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self.thread = threading.Thread(target=self._watch, name="disconnect-watcher", daemon=True)
        self.thread.start()

    def _poke(self) -> None:
        try:
            os.write(self.watch_w, b"x")
        except OSError:  # pipe full: the watcher is awake anyway
            pass

    def call_started(self, cid: int, conn: socket.socket, ts) -> None:
        with self.lock:
            self.busy[cid] = (conn, ts)
        self._poke()

    def call_ended(self, cid: int) -> bool:
        """Unregister the call; True if its client went away meanwhile (then no reply is sent)."""
        with self.lock:
            self.busy.pop(cid, None)
            gone = cid in self.abandoned
        self._poke()
        return gone

    def forget(self, cid: int) -> None:
        """The connection is closed: drop what is known about it."""
        with self.lock:
            self.abandoned.pop(cid, None)

    def close(self, timeout: float = 2.0) -> None:
        """Stop the thread (``stopping`` must be set) and close the wake-up pipe."""
        self._poke()
        self.thread.join(timeout=timeout)
        for fd in (self.watch_r, self.watch_w):
            try:
                os.close(fd)
            except OSError:
                pass

    def _watch(self) -> None:
        while not self.stopping.is_set():
            poller = select.poll()
            poller.register(self.watch_r, select.POLLIN)
            with self.lock:
                busy = dict(self.busy)
                abandoned = {c: set(v) for c, v in self.abandoned.items()}
            fds = {}
            for cid, (conn, _ts) in busy.items():
                if cid in abandoned:
                    continue
                try:
                    fd = conn.fileno()
                except OSError:
                    continue
                if fd >= 0:
                    fds[fd] = cid
                    poller.register(fd, 0)  # only POLLHUP / POLLERR / POLLNVAL are reported
            lingering = [c for c in abandoned if c in busy]
            try:
                ready = poller.poll(50 if lingering else None)
            except InterruptedError:
                continue
            for fd, ev in ready:
                if fd == self.watch_r:
                    self._drain()
                    continue
                cid = fds.get(fd)
                if cid is not None and ev & (select.POLLHUP | select.POLLERR | select.POLLNVAL):
                    self._client_gone(cid)
            for cid in lingering:  # the call is still unwinding: kill what it makes meanwhile
                self._kill_new_session(cid, abandoned.get(cid, ()))

    def _drain(self) -> None:
        try:
            while os.read(self.watch_r, 4096):
                pass
        except OSError:
            pass

    def _client_gone(self, cid: int) -> None:
        with self.lock:
            entry = self.busy.get(cid)
            if entry is None:
                return
            self.abandoned.setdefault(cid, set())
        s = _kill_session_of(entry[1])
        event("client_gone", logging.WARNING, conn=cid, note="disconnected during a call; "
              "its session is killed", session=getattr(s, "id", "-"))
        with self.lock:
            if s is not None and cid in self.abandoned:
                self.abandoned[cid].add(id(s))

    def _kill_new_session(self, cid: int, killed: set[int]) -> None:
        with self.lock:
            entry = self.busy.get(cid)
        if entry is None:
            return
        s = getattr(entry[1], "session", None)
        if s is not None and id(s) not in killed and not getattr(s, "closed", True):
            _kill_session_of(entry[1])
            with self.lock:
                if cid in self.abandoned:
                    self.abandoned[cid].add(id(s))

"""A next's spare: a child forked while the next is idle, which serves one read-only op and exits.

A read-only (DISPOSABLE) op runs in the next's spare when it has one, so the next stays untouched
and warm for the following call. Forking costs milliseconds (page tables) plus copy-on-write faults;
a spare pays them while the next waits idle (``IDLE_S`` with no request, so never between
back-to-back calls). It says ``spare`` to the launcher (which then counts it as one of the session's
sanctioned processes), warms, and waits on a private pipe. The next hands it a request, which it
acknowledges (a spare killed meanwhile costs nothing: the next then serves the op itself and exits,
as without a spare); it says ``serving`` and replies on the session socket. Before a snapshot the
next lets it go (without waiting for its teardown; the launcher knows it as dying); during a
transaction it holds it (``hold``: no warm-up, no request) and lets it go after the reply, so the
spare's exit does not share a core with a short call; held, it leaves by itself ``HOLD_S`` into a
long call (decision 0029).

A next with no request for ``IDLE_EXIT_S`` kills its spare and leaves (jail/proc/chain.py, decision
0026): a session left idle gives back the ~27 MB a spare holds (its warm-up's pages and the buffers malloc
keeps) and the next's own warm-up copies.

Blocks: nothing by itself (every process here is in the same jail; the launcher takes a reply only
from a child of the next and SIGKILLs it after). Does not: survive the launcher's sweeps when it is
not the next's announced spare (the next then serves the op itself).
"""
from __future__ import annotations

import json
import os
import signal
import struct

from jail.wire import protocol

HEADER = struct.Struct("!QQ")  # JSON length, blob length
IDLE_S = 0.1  # a next idle this long forks its spare
IDLE_EXIT_S = 60.0  # a next with no request for this long leaves, with its spare (decision 0026)
HOLD_S = 0.25  # a spare held through a transaction leaves about this far into the call (decision 0029)
HELD = b"h"  # what ``hold`` writes: never a header's first byte (a length's top byte, 0 below 2**56)


def _read_exact(fd: int, n: int) -> bytes | None:
    parts, got = [], 0
    while got < n:
        try:
            b = os.read(fd, min(n - got, 1 << 20))
        except InterruptedError:
            continue
        if not b:
            return None
        parts.append(b)
        got += len(b)
    return b"".join(parts)


class Spare:
    """At most one pre-forked child of this next; ``serve(msg, blob)`` runs in it (and never returns)."""

    def __init__(self, serve, close_fds=()):
        self.serve = serve
        self.close_fds = tuple(close_fds)  # the next's fds a spare must not hold (the head's pipe)
        self.pid = 0
        self.w = self.ack = -1

    def start(self, announce, warm=None) -> None:
        """Fork the spare (nothing if one is held, or the fork fails: the next then serves ops itself)."""
        if self.pid:
            return
        reap_dead()  # spares that served or were killed since
        req_r, req_w = os.pipe()  # requests, next -> spare
        ack_r, ack_w = os.pipe()  # "taken", spare -> next
        try:
            pid = os.fork()
        except OSError:
            for fd in (req_r, req_w, ack_r, ack_w):
                os.close(fd)
            return
        if pid == 0:
            try:
                os.close(req_w)
                os.close(ack_r)
                self._child(req_r, ack_w, announce, warm)
            finally:
                os._exit(0)
        os.close(req_r)
        os.close(ack_w)
        self.pid, self.w, self.ack = pid, req_w, ack_r

    def _child(self, r: int, ack: int, announce, warm) -> None:
        for fd in self.close_fds:
            try:
                os.close(fd)
            except OSError:
                pass
        announce()
        try:
            if warm is not None:
                warm(lambda: protocol.waiting(r))  # stops once a request is waiting
        except Exception:  # noqa: BLE001 - an optimisation only
            pass
        first = _read_exact(r, 1)
        if first is None or first == HELD:
            # held through a transaction: leave when let go, or HOLD_S after the hold
            protocol.waiting(r, HOLD_S)
            return
        rest = _read_exact(r, HEADER.size - 1)
        if rest is None:
            return
        n_json, n_blob = HEADER.unpack(first + rest)
        raw = _read_exact(r, n_json)
        blob = _read_exact(r, n_blob) if n_blob else b""
        if raw is None or blob is None:
            return
        os.write(ack, b"k")  # taken: from now on this process answers the launcher
        os.close(ack)
        os.close(r)
        self.serve(json.loads(raw), blob)

    def hand(self, msg: dict, blob: bytes) -> bool:
        """Give the request to the spare; True once it has taken it (it replies, and the launcher
        kills it). False when it could not take it (it is gone): the caller serves the op."""
        if not self.pid:
            return False
        raw = json.dumps(msg).encode()
        try:
            for chunk in (HEADER.pack(len(raw), len(blob)), raw, blob):
                view = memoryview(chunk)
                while view:
                    view = view[os.write(self.w, view):]
            taken = _read_exact(self.ack, 1) == b"k"  # None (EOF): it died (a sweep killed it) first
        except OSError:
            taken = False
        if not taken:  # nothing it said counts: the caller serves the op
            self.kill()
            return False
        # taken: back to the socket at once (the launcher sends nothing more before it has killed
        # the spare after its reply); its teardown is not waited for, it is reaped later
        self._close()
        self.pid = 0
        return True

    def hold(self) -> None:
        """Before a transaction: stop its warm-up (a byte is waiting on its request pipe) and have it
        leave when ``kill`` lets it go, or about ``HOLD_S`` into the call (it takes no request
        after ``HELD``). Its exit, ~15 ms of the kernel unmapping its copy of the session, then runs
        after the reply of a short call instead of beside its code, and a long call gets the spare's
        memory back early (decision 0029). ``hand`` is never called again for this spare."""
        if not self.pid:
            return
        try:
            os.write(self.w, HELD)
        except OSError:
            pass

    def kill(self) -> None:
        """Let it go, without waiting for its teardown (reaped later, by this process or its heir; the
        launcher counts it as dying and SIGKILLs it, ``Chain.bury_spare``): closing its pipes ends it
        (the jail's seccomp refuses ``kill()``; without that layer, SIGKILL too)."""
        if not self.pid:
            return
        try:
            os.kill(self.pid, signal.SIGKILL)
        except OSError:
            pass
        self._close()
        self.pid = 0

    def _close(self) -> None:
        for fd in (self.w, self.ack):
            if fd >= 0:
                os.close(fd)
        self.w = self.ack = -1


def reap_dead() -> None:
    """Reap this process's dead children (its former spares) without waiting."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        except InterruptedError:
            continue
        if pid == 0:
            return

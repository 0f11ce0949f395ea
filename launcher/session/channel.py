"""The session's socket, seen from the launcher: sends with a deadline, receives by kernel-stamped sender.

Every wait has a deadline, and so has every send (a session that stops reading gets
``SessionNotReading``). A message is taken only from the process expected to send it (the pid the
kernel stamped on the datagram, ``SO_PASSCRED``); anyone else's is dropped and counted, or filed:
a ``ready`` that came early, a ``spare`` offer, the head's ``next_exit`` report. Every reply is bounded while it is read
(``jail.wire.protocol.Receiver``: per expected sender, per other sender, per session, process-wide).

Blocks: forged senders, oversized or garbled replies, a session that never answers or never reads.
Does not: judge a reply's content (``launcher.replies.validate`` rebuilds it field by field).
"""
from __future__ import annotations

import select
import time

from jail.wire import protocol
from launcher.contain.procs import Proc
from launcher.session.errors import SessionDead, SessionNotReading

SMALL_REPLY = 1 << 20  # cap of a message nobody in particular is expected to send (ready, restored, ...)
SEND_TIMEOUT = 5.0
EARLY_READY_CAP = 16


def nonce_of(msg: dict) -> str:
    n = msg.get("nonce")
    return n if isinstance(n, str) and len(n) <= 64 else ""


class Channel:
    """One session's socket: ``wait`` for a message, ``send`` a request, ``pump`` what arrives."""

    def __init__(self, sock, limits):
        self.sock = sock
        self.limits = limits
        self.rx = protocol.Receiver(sock, limits.max_export_bytes + 65536,
                                    max_json=max(limits.max_result_bytes, 1 << 20))
        self.tx = protocol.Sender(sock)
        self.head: Proc | None = None  # whose next_exit reports are filed (kept up to date by the Chain)
        self.last_next_exit: dict | None = None
        self.early_ready: list[tuple[int, str]] = []  # (pid, nonce) of readies that came early
        self.spare_offers: list[int] = []  # senders of "spare" (a next's idle child, jail/proc/spare.py)
        self.ignored_messages = 0

    def wait(self, types, pid_expected, deadline, *, watch: Proc | tuple | None = None, accept=None,
             cap: int | None = None):
        """Next valid message of one of ``types`` from the expected sender.

        Raises TimeoutError at the deadline, SessionDead if ``watch`` (a Proc or a tuple of them) dies first.
        Messages from anyone else are dropped (and counted). ``pid_expected``'s message may be up
        to ``cap`` bytes (default: the profile's ``max_result_bytes``); anyone else's only a small
        one (the Receiver drops the rest as it arrives).
        """
        if pid_expected is not None and pid_expected > 0:
            # its JSON is a reply (max_result_bytes); only a blob (a file's bytes) may make it bigger
            self.rx.expect(pid_expected, cap or self.limits.max_result_bytes, self.limits.max_result_bytes)
        else:
            self.rx.expect(None if accept is not None else -1, SMALL_REPLY)
        watches = tuple(w for w in (watch if isinstance(watch, tuple) else (watch,)) if w is not None)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            fds = [self.sock] + [w.fd for w in watches if w.fd >= 0]
            r, _, _ = select.select(fds, [], [], left)
            if not r:
                continue
            if self.sock in r:
                try:
                    got = self.rx.read_one()
                except OSError as e:
                    raise SessionDead(f"the session's socket failed: {e}") from None
                if got is None:
                    raise SessionDead("the session's socket closed")
                pid, msg, blob, err = got
                ok_sender = (pid == pid_expected) if pid_expected is not None else bool(accept and accept(pid))
                if pid_expected is None and accept is None:
                    ok_sender = True
                if msg is None and err is None:
                    continue  # more datagrams to come
                if err is not None:
                    if ok_sender and "ready" not in types:  # garbage is only fatal from the process asked
                        raise protocol.ProtocolError(err)
                    self.ignored_messages += 1
                    continue
                if msg["t"] == "next_exit" and self.head is not None and pid == self.head.pid:
                    self.last_next_exit = msg
                    continue
                if ok_sender and msg["t"] in types:
                    return pid, msg, blob
                if msg["t"] == "ready" and len(self.early_ready) < EARLY_READY_CAP:
                    # a next that got ready while we waited for something else
                    self.early_ready.append((pid, nonce_of(msg)))
                    continue
                if msg["t"] == "spare" and len(self.spare_offers) < EARLY_READY_CAP:
                    self.spare_offers.append(pid)  # Chain.take_spare decides
                    continue
                self.ignored_messages += 1
                continue
            dead = next((w for w in watches if not w.alive()), None)
            if dead is not None:
                # drain what it may have sent just before dying (bounded: others may keep sending)
                for _ in range(1024):
                    if not select.select([self.sock], [], [], 0)[0]:
                        break
                    try:
                        got = self.rx.read_one()
                    except OSError:
                        break
                    if got is None:
                        break
                    pid, msg, blob, err = got
                    if msg is not None and msg["t"] in types and (pid == pid_expected):
                        return pid, msg, blob
                    if msg is not None and msg["t"] == "next_exit" and self.head and pid == self.head.pid:
                        self.last_next_exit = msg
                    elif msg is not None and msg["t"] == "ready" and len(self.early_ready) < EARLY_READY_CAP:
                        self.early_ready.append((pid, nonce_of(msg)))
                    elif msg is not None and msg["t"] == "spare" and len(self.spare_offers) < EARLY_READY_CAP:
                        self.spare_offers.append(pid)
                raise SessionDead(f"process {dead.pid} died")

    def pump(self, until: float) -> None:
        """Read (and file: next_exit, early readies) whatever arrives until ``until``."""
        try:
            self.wait((), -1, until)
        except (TimeoutError, SessionDead, protocol.ProtocolError):
            pass

    def send(self, obj: dict, deadline: float | None = None, blob: bytes = b"") -> None:
        """``obj`` (plus raw ``blob`` bytes, e.g. a file's) to the session before ``deadline``."""
        deadline = deadline if deadline is not None else time.monotonic() + SEND_TIMEOUT
        try:
            self.tx.send(obj, max(deadline, time.monotonic() + 0.5), blob)
        except protocol.SendTimeout:
            raise SessionNotReading(
                "the session's process did not take the request (its socket stayed full): code run by an "
                "earlier successful call has stopped this session's processes from reading. Nothing ran; the "
                "session is unchanged. Restore a snapshot taken before that call, or reset") from None
        except OSError as e:
            raise SessionDead(f"cannot reach the session: {e}") from None

    def close(self) -> None:
        self.rx.close()  # gives back what it held to the launcher-wide budget
        try:
            self.sock.close()
        except OSError:
            pass

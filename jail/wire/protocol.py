"""The wire format between the launcher and jailed processes.

Transport: ``AF_UNIX``/``SOCK_SEQPACKET`` socket pairs made by the launcher before anything is
jailed (the jailed side can create no socket). One message is one or more datagrams, each
starting with a flag byte, ``M`` (more follows) or ``E`` (end); the payload is a 4-byte big-endian
JSON length, the UTF-8 JSON object, then optional raw bytes (exports). Nothing is ever unpickled.

Blocks, on the launcher's side: senders not stamped by the kernel (``SO_PASSCRED`` pids), passed
file descriptors (closed), messages over their caps while they still arrive (:class:`Receiver`:
per message, per receiver, and across all sessions through :data:`HELD`), anything but strict
JSON (:func:`decode`), and a session that stops reading (:class:`Sender`: a deadline per
datagram, framing kept). Does not block: a sender lying within a valid message; callers check
the sender pid and validate every field they use (launcher/replies/).
"""
from __future__ import annotations

import array
import json
import os
import select
import signal
import socket
import struct
import threading
import time

CHUNK = 32 * 1024
# Signals the launcher sends a snapshot through its pidfd (jail/proc/chain.py says what they do):
# RESTORE makes it serve as the head; PARK lets a restored one go back to waiting. A real-time
# signal queues each sending with its own sender, so one the session sent cannot hide the
# launcher's (unless the session fills the queue: possible only with seccomp off, decision 0024);
# a snapshot ignores either when it comes from inside the session (si_pid != 0).
RESTORE_SIGNAL = signal.SIGUSR1
PARK_SIGNAL = signal.SIGRTMIN + 2
_UCRED = struct.Struct("3i")


class ProtocolError(RuntimeError):
    """A peer sent something that is not a valid message (or too much of it)."""


class SendTimeout(TimeoutError):
    """The peer did not take a datagram before the deadline (its socket buffer stayed full)."""

    def __init__(self, message: str, *, partial: bool):
        super().__init__(message)
        self.partial = partial  # some datagrams of the message were sent, not all


# ------------------------------------------------------------------ encoding
def frames(obj: dict, blob: bytes = b""):
    """The datagrams of one message, made one at a time: the blob (a file of tens of MB) is
    sliced through a memoryview, never copied whole (only one CHUNK at a time)."""
    try:
        body = json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()
    except UnicodeEncodeError:  # lone surrogates: send them \u-escaped (the reader decides what they mean)
        body = json.dumps(obj, separators=(",", ":"), ensure_ascii=True).encode()
    head = struct.pack(">I", len(body)) + body
    total = len(head) + len(blob)
    with memoryview(blob) as mv:
        for i in range(0, total, CHUNK):
            j = min(i + CHUNK, total)
            flag = b"M" if j < total else b"E"
            if j <= len(head):
                yield flag + head[i:j]
            elif i >= len(head):
                yield flag + mv[i - len(head):j - len(head)]
            else:
                yield flag + head[i:] + mv[:j - len(head)]


def encode(obj: dict, blob: bytes = b"") -> list[bytes]:
    return list(frames(obj, blob))


def send(sock: socket.socket, obj: dict, blob: bytes = b"") -> None:
    """Blocking send, used by the *jailed* side (and the zygote): its peer, the launcher, reads."""
    for dgram in frames(obj, blob):
        sock.sendall(dgram)


class Sender:
    """Launcher-side writer for one socket: every datagram has a deadline; framing survives timeouts.

    Each datagram is sent with ``MSG_DONTWAIT`` + ``select`` before the deadline, so a session that
    stops reading (its socket buffer full) costs a :class:`SendTimeout`, never a blocked launcher. A
    message cut short by a timeout is terminated by a lone ``E`` before the next one, so the reader
    drops it (``recv_simple`` skips invalid messages) and stays in step.
    """

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self.broken = False  # the last message was cut short: terminate it before the next one

    def _put(self, dgram: bytes, deadline: float) -> None:
        while True:
            try:
                self.sock.send(dgram, socket.MSG_DONTWAIT)
                return
            except (BlockingIOError, InterruptedError):
                pass
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            select.select([], [self.sock], [], min(left, 1.0))

    def send(self, obj: dict, deadline: float, blob: bytes = b"") -> None:
        """Send one message before ``deadline`` (monotonic). SendTimeout if the peer does not read;
        OSError if the socket failed (e.g. every peer process is gone)."""
        if self.broken:
            try:
                self._put(b"E", deadline)
            except TimeoutError:
                raise SendTimeout("the session is not reading its socket", partial=False) from None
            self.broken = False
        for i, dgram in enumerate(frames(obj, blob)):
            try:
                self._put(dgram, deadline)
            except TimeoutError:
                self.broken = i > 0
                raise SendTimeout("the session is not reading its socket", partial=i > 0) from None


# ------------------------------------------------------------------ decoding
def _no_constant(name: str):
    raise ProtocolError(f"non-finite number {name} in a message")


def loads_strict(text: str):
    """``json.loads`` without NaN/Infinity; every failure (too deep, an integer over CPython's
    4,300-digit limit, malformed) is a ProtocolError. A float literal out of range (``1e999``)
    parses as infinity: readers keep finite numbers only (``launcher/replies/validate.py``), which costs
    nothing here (a per-number hook made the parse of a large reply several times slower)."""
    try:
        return json.loads(text, parse_constant=_no_constant)
    except ProtocolError:
        raise
    except RecursionError:
        raise ProtocolError("message nested too deeply") from None
    except MemoryError:
        raise ProtocolError("message too large to parse") from None
    except (ValueError, TypeError) as e:  # JSONDecodeError is a ValueError; so is a too-long integer
        raise ProtocolError(f"message is not valid JSON: {str(e)[:200]}") from None


def decode(payload, max_json: int | None = None) -> tuple[dict, bytes]:
    """Split and parse one reassembled payload: (the JSON object, the raw bytes after it).

    Strict: UTF-8 only, a JSON object with a string ``t``, no NaN/Infinity literals, integers within
    CPython's 4,300-digit limit, a JSON part of at most ``max_json`` bytes; any failure (too deep,
    too big, malformed) is a :class:`ProtocolError`, never another exception. A float literal out
    of range parses as infinity: readers keep finite numbers only."""
    if len(payload) < 4:
        raise ProtocolError("message shorter than its length header")
    (n,) = struct.unpack(">I", payload[:4])
    if n > len(payload) - 4:
        raise ProtocolError(f"JSON length {n} exceeds the message ({len(payload) - 4} bytes)")
    if max_json is not None and n > max_json:
        raise ProtocolError(f"JSON part of {n} bytes exceeds the {max_json}-byte cap")
    mv = memoryview(payload)
    try:
        text = bytes(mv[4:4 + n]).decode("utf-8")
    except UnicodeDecodeError as e:
        raise ProtocolError(f"message is not UTF-8 JSON: {e}") from None
    obj = loads_strict(text)
    if not isinstance(obj, dict) or not isinstance(obj.get("t"), str):
        raise ProtocolError("message is not a JSON object with a string 't'")
    return obj, bytes(mv[4 + n:])


def waiting(fd, timeout: float = 0.0) -> bool:
    """Something is waiting to be read on ``fd`` (a socket or pipe), within ``timeout`` seconds (by
    default at once): an idle process's warm-up stops for a request (jail/cad/warmup.py); an idle next
    leaves after ``IDLE_EXIT_S`` with none (jail/proc/chain.py)."""
    return bool(select.select([fd], [], [], timeout)[0])


def recv_simple(sock: socket.socket, max_bytes: int = 64 * 1024 * 1024) -> tuple[dict, bytes] | None:
    """Blocking receive used by the *jailed* side (its peer, the launcher, is trusted).

    Returns None on EOF. A message that is invalid or too large (e.g. one the launcher cut short
    when a send timed out) is skipped: the next valid message is returned.
    """
    buf = bytearray()
    skipping = False
    while True:
        d = sock.recv(CHUNK + 1)
        if not d:
            return None
        if not skipping:
            buf += d[1:]
            if len(buf) > max_bytes:
                skipping, buf = True, bytearray()
        if d[:1] != b"M":  # "E" (or a bad flag byte): the message ends here
            if not skipping:
                try:
                    return decode(bytes(buf))
                except ProtocolError:
                    pass
            skipping, buf = False, bytearray()


# ------------------------------------------------------------------ receiving
class Budget:
    """Bytes of half-received messages held by every Receiver sharing it (thread-safe)."""

    def __init__(self, limit: int):
        self.limit = limit
        self.held = 0
        self.peak = 0
        self._lock = threading.Lock()

    def take(self, n: int) -> bool:
        with self._lock:
            if self.held + n > self.limit:
                return False
            self.held += n
            self.peak = max(self.peak, self.held)
            return True

    def give(self, n: int) -> None:
        with self._lock:
            self.held = max(0, self.held - n)


HELD = Budget(512 * 1024 * 1024)  # the launcher sizes it at start (launcher/contain/selflimit.py)


class Receiver:
    """Launcher-side reader for one socket: sender pids, fd hygiene, bounded reassembly.

    Every datagram is untrusted: the kernel-stamped sender pid is read, any file descriptor passed
    along is closed, and messages are reassembled per sender pid with what is held bounded *while*
    reading, before anything is parsed: per message ``max_bytes`` for the sender the caller expects
    (:meth:`expect`) and ``other_max`` for anyone else; per receiver at most
    ``MAX_PARTIAL_SENDERS`` half-sent messages and ``total_max`` bytes across them; per process one
    shared :class:`Budget` (``HELD``) that every receiver charges.
    """

    MAX_PARTIAL_SENDERS = 8

    def __init__(self, sock: socket.socket, max_bytes: int, *, other_max: int | None = None,
                 total_max: int | None = None, max_json: int | None = None, budget: Budget | None = None):
        self.sock = sock
        self.max_bytes = max_bytes
        self.default_max = max_bytes
        self.other_max = min(max_bytes, other_max if other_max is not None else 64 * 1024)
        self.total_max = total_max if total_max is not None else max_bytes + (1 << 20)
        self.max_json = max_json
        self.budget = budget if budget is not None else HELD
        self.expected: int | None = None
        self.expected_json: int | None = None  # the JSON part's cap for the expected sender (its blob may be more)
        self.partial: dict[int, bytearray] = {}
        self.held = 0
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)

    # -------------------------------------------------------- bookkeeping
    def _drop(self, pid: int) -> None:
        buf = self.partial.pop(pid, None)
        if buf is not None:
            self.held -= len(buf)
            self.budget.give(len(buf))

    def expect(self, pid: int | None, max_bytes: int | None = None, max_json: int | None = None) -> None:
        """From now on ``pid`` (None: anyone) may send messages up to ``max_bytes``, of which at most
        ``max_json`` JSON (the rest is the raw blob); others only ``other_max``. Half-sent messages
        of others that are already over that are dropped."""
        self.expected = pid
        self.expected_json = max_json
        self.max_bytes = max_bytes if max_bytes is not None else self.default_max
        for p, buf in list(self.partial.items()):
            if len(buf) > self._cap(p):
                self._drop(p)

    def _cap(self, pid: int) -> int:
        if self.expected is None or pid == self.expected:
            return self.max_bytes
        return self.other_max

    def drop_partials(self, keep_pids) -> None:
        """Forget half-sent messages of processes that are gone (or not expected to talk)."""
        for pid in list(self.partial):
            if pid not in keep_pids:
                self._drop(pid)

    def close(self) -> None:
        """Release everything held (the socket itself belongs to the caller)."""
        self.drop_partials(())

    # -------------------------------------------------------- reading
    def read_one(self) -> tuple[int, dict | None, bytes, str | None] | None:
        """Read one datagram. Returns None on EOF, else (pid, msg|None, blob, error|None).

        ``msg`` is None while a multi-datagram message is still incomplete.
        ``error`` is set (and msg None) when the sender's message is invalid or over a cap.
        """
        cmsg_space = socket.CMSG_SPACE(_UCRED.size) + socket.CMSG_SPACE(64 * 4)
        data, ancdata, flags, _ = self.sock.recvmsg(CHUNK + 1, cmsg_space)
        pid = 0
        for level, typ, cdata in ancdata:
            if level == socket.SOL_SOCKET and typ == socket.SCM_CREDENTIALS and len(cdata) >= _UCRED.size:
                pid = _UCRED.unpack(cdata[:_UCRED.size])[0]
            elif level == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
                fds = array.array("i")
                fds.frombytes(cdata[: len(cdata) - (len(cdata) % fds.itemsize)])
                for fd in fds:
                    try:
                        os.close(fd)
                    except OSError:
                        pass
        if not data and not ancdata:
            return None
        if flags & (socket.MSG_TRUNC | socket.MSG_CTRUNC):
            self._drop(pid)
            return pid, None, b"", "datagram truncated (too large or too many fds)"
        if not data or data[:1] not in (b"M", b"E"):
            self._drop(pid)
            return pid, None, b"", "datagram without a valid flag byte"
        if pid not in self.partial and len(self.partial) >= self.MAX_PARTIAL_SENDERS:
            victims = [p for p in self.partial if p != self.expected]
            self._drop(victims[0] if victims else next(iter(self.partial)))  # the oldest half-sent message goes
        n = len(data) - 1
        buf = self.partial.get(pid)
        size = (len(buf) if buf is not None else 0) + n
        cap = self._cap(pid)
        if size > cap:
            self._drop(pid)
            return pid, None, b"", f"message larger than the {cap}-byte cap"
        if self.held + n > self.total_max:
            self._drop(pid)
            return pid, None, b"", f"the session's half-sent messages exceed the {self.total_max}-byte cap"
        if not self.budget.take(n):
            self._drop(pid)
            return pid, None, b"", (f"the launcher holds {self.budget.limit} bytes of half-received messages "
                                    "(all sessions together); message refused")
        try:
            if buf is None:
                buf = self.partial[pid] = bytearray()
            buf += memoryview(data)[1:]
        except MemoryError:
            self.budget.give(n)
            self._drop(pid)
            return pid, None, b"", "the launcher is out of memory; message refused"
        self.held += n
        if data[:1] == b"M":
            return pid, None, b"", None
        del self.partial[pid]
        self.held -= len(buf)
        self.budget.give(len(buf))
        try:
            mj = self.max_json
            if pid == self.expected and self.expected_json is not None:
                mj = self.expected_json if mj is None else min(mj, self.expected_json)
            msg, blob = decode(buf, mj)
        except ProtocolError as e:
            return pid, None, b"", str(e)
        except MemoryError:
            return pid, None, b"", "the launcher is out of memory; message refused"
        return pid, msg, blob, None

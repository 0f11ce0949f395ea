"""The wire format between the launcher and jailed processes.

Transport: ``AF_UNIX``/``SOCK_SEQPACKET`` socket pairs created by the launcher
before anything is jailed (the jailed side can create no socket). One logical
message is one or more datagrams; each datagram starts with one flag byte,
``M`` (more follows) or ``E`` (end). The reassembled payload is a 4-byte
big-endian JSON length, the UTF-8 JSON object, then optional raw bytes (used
for exports). JSON only: nothing is ever unpickled.

The launcher reads with :class:`Receiver`, which treats every datagram as
untrusted: it reads the kernel-stamped sender pid (``SO_PASSCRED``), closes
any file descriptor a sender tries to pass, reassembles per sender pid, caps
the total size, and checks the JSON is an object with a string ``t``.
Nothing here blocks a sender from lying *within* its message: callers check
that the sender pid is the process they expect and validate fields.
"""
from __future__ import annotations

import array
import json
import os
import socket
import struct

CHUNK = 32 * 1024
_UCRED = struct.Struct("3i")


class ProtocolError(RuntimeError):
    """A peer sent something that is not a valid message (or too much of it)."""


def encode(obj: dict, blob: bytes = b"") -> list[bytes]:
    body = json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()
    payload = struct.pack(">I", len(body)) + body + blob
    parts = [payload[i:i + CHUNK] for i in range(0, len(payload), CHUNK)] or [b""]
    return [(b"M" if i < len(parts) - 1 else b"E") + p for i, p in enumerate(parts)]


def send(sock: socket.socket, obj: dict, blob: bytes = b"") -> None:
    for dgram in encode(obj, blob):
        sock.sendall(dgram)


def decode(payload: bytes) -> tuple[dict, bytes]:
    if len(payload) < 4:
        raise ProtocolError("message shorter than its length header")
    (n,) = struct.unpack(">I", payload[:4])
    if n > len(payload) - 4:
        raise ProtocolError(f"JSON length {n} exceeds the message ({len(payload) - 4} bytes)")
    try:
        obj = json.loads(payload[4:4 + n].decode())
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ProtocolError(f"message is not UTF-8 JSON: {e}") from None
    if not isinstance(obj, dict) or not isinstance(obj.get("t"), str):
        raise ProtocolError("message is not a JSON object with a string 't'")
    return obj, payload[4 + n:]


def recv_simple(sock: socket.socket, max_bytes: int = 64 * 1024 * 1024) -> tuple[dict, bytes] | None:
    """Blocking receive used by the *jailed* side (its peer, the launcher, is trusted).

    Returns None on EOF.
    """
    buf = bytearray()
    while True:
        d = sock.recv(CHUNK + 1)
        if not d:
            return None
        buf += d[1:]
        if len(buf) > max_bytes:
            raise ProtocolError("message too large")
        if d[:1] == b"E":
            return decode(bytes(buf))


class Receiver:
    """Launcher-side reader for one socket: sender pids, fd hygiene, size caps."""

    def __init__(self, sock: socket.socket, max_bytes: int):
        self.sock = sock
        self.max_bytes = max_bytes
        self.partial: dict[int, bytearray] = {}
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)

    MAX_PARTIAL_SENDERS = 8

    def drop_partials(self, keep_pids) -> None:
        """Forget half-sent messages of processes that are gone (or not expected to talk)."""
        for pid in list(self.partial):
            if pid not in keep_pids:
                del self.partial[pid]

    def read_one(self) -> tuple[int, dict | None, bytes, str | None] | None:
        """Read one datagram. Returns None on EOF, else (pid, msg|None, blob, error|None).

        ``msg`` is None while a multi-datagram message is still incomplete.
        ``error`` is set (and msg None) when the sender's message is invalid.
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
            self.partial.pop(pid, None)
            return pid, None, b"", "datagram truncated (too large or too many fds)"
        if not data or data[:1] not in (b"M", b"E"):
            self.partial.pop(pid, None)
            return pid, None, b"", "datagram without a valid flag byte"
        if pid not in self.partial and len(self.partial) >= self.MAX_PARTIAL_SENDERS:
            self.partial.pop(next(iter(self.partial)))  # oldest half-sent message goes
        buf = self.partial.setdefault(pid, bytearray())
        buf += data[1:]
        if len(buf) > self.max_bytes:
            self.partial.pop(pid, None)
            return pid, None, b"", f"message larger than the {self.max_bytes}-byte cap"
        if data[:1] == b"M":
            return pid, None, b"", None
        del self.partial[pid]
        try:
            msg, blob = decode(bytes(buf))
        except ProtocolError as e:
            return pid, None, b"", str(e)
        return pid, msg, blob, None

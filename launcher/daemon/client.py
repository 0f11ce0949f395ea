"""Client side of the daemon protocol (used by ``build123d-launcher mcp``).

Wire format, both directions, over an ``AF_UNIX`` stream socket: a 4-byte big-endian length,
then that many bytes of UTF-8 JSON (an object). Request ``{"tool": name, "args": {...},
"seq": N}``; response: the dict the tool returns, or ``{"error": "..."}``. ``_hello`` is
answered by the daemon itself; ``{"tool": "_cancel", "args": {"conn", "key", "seq"}}``, sent on
a *second* connection, cancels call N of connection ``conn`` (``key``: its hello's ``cancel_key``).

Blocks: a socket squatted by another user (``SO_PEERCRED`` must show the client's own uid) and a
daemon running another profile than the one asked for (a weaker jail is never picked silently).
"""
from __future__ import annotations

import json
import logging
import os
import socket
import struct
import threading

from launcher.profile import load_profile

HEADER = struct.Struct(">I")
MAX_RESPONSE = 64 * 1024 * 1024
SOCKET_NAME = "build123d-launcher.sock"


class DaemonUnavailable(RuntimeError):
    """No daemon answers on the socket (or the one that answers is not ours)."""


def default_socket_path() -> str:
    run = os.environ.get("XDG_RUNTIME_DIR")
    if not run:
        cand = f"/run/user/{os.getuid()}"
        run = cand if os.path.isdir(cand) else None
    if not run:
        raise DaemonUnavailable("XDG_RUNTIME_DIR is not set and /run/user/<uid> does not exist: "
                                "pass --socket PATH")
    return os.path.join(run, SOCKET_NAME)


def peer_uid(sock: socket.socket) -> int:
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return uid


def send_frame(sock: socket.socket, obj) -> None:
    body = json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogatepass")
    sock.sendall(HEADER.pack(len(body)) + body)


def recv_exact(sock: socket.socket, n: int) -> bytes | None:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(min(n - len(buf), 1 << 20))
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


def recv_frame(sock: socket.socket, max_bytes: int = MAX_RESPONSE):
    head = recv_exact(sock, HEADER.size)
    if head is None:
        return None
    (n,) = HEADER.unpack(head)
    if n > max_bytes:
        raise ValueError(f"frame of {n} bytes exceeds the {max_bytes}-byte limit")
    body = recv_exact(sock, n)
    if body is None:
        return None
    obj = json.loads(body.decode("utf-8"))
    if not isinstance(obj, dict):
        raise ValueError("frame is not a JSON object")
    return obj


class DaemonBackend:
    """A connection to the daemon: one isolated session set on the daemon side."""

    def __init__(self, path: str, *, hello_timeout: float = 90.0):
        self.path = path
        self.lock = threading.Lock()
        self.sock: socket.socket | None = None
        self.info = self._connect(hello_timeout)
        self._seq = 0
        self._inflight = None  # (call_id, seq, info) of the request on the wire
        self._cancelled: list = []  # call_ids cancelled before they were sent (bounded)
        self._cl = threading.Lock()

    def _connect(self, hello_timeout: float) -> dict:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        try:
            s.settimeout(5.0)
            try:
                s.connect(self.path)
            except (FileNotFoundError, ConnectionRefusedError, socket.timeout) as e:
                raise DaemonUnavailable(f"no daemon answers on {self.path} ({e})") from None
            except OSError as e:
                raise DaemonUnavailable(f"cannot connect to {self.path}: {e.strerror or e}") from None
            uid = peer_uid(s)
            if uid != os.getuid():
                raise DaemonUnavailable(f"the daemon on {self.path} runs as uid {uid}, not as this user "
                                        f"({os.getuid()}); refusing to use it")
            # a socket-activated daemon answers once its zygote is up (a few seconds)
            s.settimeout(hello_timeout)
            try:
                send_frame(s, {"tool": "_hello", "args": {}})
                info = recv_frame(s)
            except (OSError, ValueError) as e:
                raise DaemonUnavailable(f"the daemon on {self.path} did not answer: {e}") from None
            if not info or info.get("server") != "build123d-launcher":
                msg = (info or {}).get("error", "no greeting")
                raise DaemonUnavailable(f"the socket {self.path} did not greet as build123d-launcher: {msg}")
            s.settimeout(None)
        except BaseException:
            s.close()
            raise
        self.sock = s
        return info

    def call(self, tool: str, args: dict, call_id=None) -> dict:
        with self.lock:
            with self._cl:
                if call_id is not None and call_id in self._cancelled:
                    self._cancelled.remove(call_id)
                    return {"error": "the call was cancelled before it started; the session is unchanged"}
                self._seq += 1
                seq = self._seq
            try:
                return self._call_locked(tool, args, call_id, seq)
            finally:
                with self._cl:
                    self._inflight = None

    def cancel(self, call_id) -> None:
        """Cancel call ``call_id``: not sent yet -> it never is; on the wire -> the daemon kills it
        (through a second connection, so the session's connection stays as it is)."""
        with self._cl:
            inflight = self._inflight
            if inflight is None or inflight[0] is not call_id:
                self._cancelled = (self._cancelled + [call_id])[-64:]
                return
        _cid, seq, info = inflight
        try:
            side = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
            side.settimeout(10.0)
            try:
                side.connect(self.path)
                if peer_uid(side) != os.getuid():
                    return
                send_frame(side, {"tool": "_cancel", "args": {"conn": info.get("conn"),
                                                              "key": info.get("cancel_key"), "seq": seq}})
                recv_frame(side)
            finally:
                side.close()
        except (OSError, ValueError) as e:
            logging.getLogger("build123d_launcher").warning("could not cancel through the daemon: %s", e)

    def _call_locked(self, tool: str, args: dict, call_id, seq: int) -> dict:
        if self.sock is None:
            try:
                self.info = self._connect(30.0)
            except DaemonUnavailable as e:
                return {"error": f"the daemon is not reachable: {e}"}
            note = "reconnected to the daemon: this is a new, empty session"
        else:
            note = None
        try:
            with self._cl:
                self._inflight = (call_id, seq, self.info)
            send_frame(self.sock, {"tool": tool, "args": args, "seq": seq})
            res = recv_frame(self.sock)
            if res is None:
                raise ConnectionError("the daemon closed the connection")
        except (OSError, ValueError) as e:
            self._drop()
            return {"error": f"the connection to the daemon was lost ({e}); the next call starts a "
                             "new, empty session"}
        if note and "error" not in res:
            res.setdefault("notice", note)
        return res

    def _drop(self) -> None:
        if self.sock is not None:
            try:
                self.sock.close()
            except OSError:
                pass
            self.sock = None

    def close(self) -> None:
        """Close the connection without waiting for a call in flight: shutting the socket down
        wakes that call's recv (it returns an error), and the daemon, which sees the connection
        gone, kills the session at once instead of letting the call run to its timeout."""
        s = self.sock
        if s is not None:
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        if self.lock.acquire(timeout=5.0):
            try:
                self._drop()
            finally:
                self.lock.release()


def connect_backend(socket_path: str | None, required: bool, *, profile: str | None = None,
                    output_dir: str | None = None):
    """A :class:`DaemonBackend` if a daemon answers, else None (or exit with a message when ``required``).

    ``profile``: the profile the caller would use embedded. A daemon running another
    profile is not used (a weaker jail must never be picked silently): None, or
    an error when ``required``. ``output_dir`` is only reported: the daemon writes
    exports to its own output directory.
    """
    log = logging.getLogger("build123d_launcher")
    try:
        path = socket_path or default_socket_path()
        backend = DaemonBackend(path)
    except DaemonUnavailable as e:
        if required:
            raise SystemExit(f"build123d-launcher: {e}") from None
        return None
    theirs = backend.info.get("profile")
    if profile is not None:
        try:
            ours = load_profile(profile).name
        except Exception as e:  # noqa: BLE001 - let the embedded path report the bad profile
            ours = f"<{e}>"
        if ours != theirs:
            backend.close()
            msg = (f"the daemon on {path} runs profile {theirs!r}, not {ours!r}; not using it "
                   "(stop it, or run `mcp --embedded` / pass the daemon's profile)")
            if required:
                raise SystemExit(f"build123d-launcher: {msg}")
            log.warning("%s: running embedded", msg)
            return None
    log.info("using the daemon on %s (pid %s, profile %s, exports go to %s)", path, backend.info.get("pid"),
             theirs, backend.info.get("output_dir"))
    if output_dir is not None and os.path.abspath(output_dir) != backend.info.get("output_dir"):
        log.warning("--output-dir %s is ignored: the daemon writes exports to %s", output_dir,
                    backend.info.get("output_dir"))
    return backend

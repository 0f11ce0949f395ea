"""``build123d-launcher serve``: the launcher as a daemon on a unix socket.

* Every connection is checked with ``SO_PEERCRED``: a peer whose uid is not the daemon's is
  refused (one error frame, then the connection is closed).
* A connection takes one of the profile's ``max_sessions`` slots only with its first whole request
  (:mod:`.admission`: before that it is bounded in time and number and holds no slot); one over
  the limit is refused. Once admitted it may idle between requests for hours, but a request that
  has started must arrive whole within :data:`.request.FRAME_S`, or the connection is dropped.
* One connection = one :class:`~launcher.tools.toolset.ToolSet` = one isolated session set; it is
  closed (processes killed) when the connection ends, at once if the client goes away mid-call
  (:mod:`.watch`). Wire format: :mod:`.client`; requests: :mod:`.request`. Nothing a client sends
  crashes the daemon. ``_hello`` and ``_cancel`` are answered by the daemon itself.
* Socket and systemd notification: :mod:`.activation`; logs: :mod:`.logfmt` (the audit line per
  execution comes from ``build123d_launcher.audit``).
* SIGTERM/SIGINT: stop accepting, kill every session, stop the zygote, exit 0: no process is
  left behind.
"""
from __future__ import annotations

import hmac
import logging
import os
import secrets
import select
import signal
import socket
import struct
import threading
import time

from launcher import __version__
from launcher.core import Launcher
from launcher.daemon.activation import activated_socket, bind_socket, sd_notify
from launcher.daemon.admission import HANDSHAKE_S, MAX_PENDING, Pending, Refuser, hang_up
from launcher.daemon.client import default_socket_path, send_frame
from launcher.daemon.logfmt import event, setup_logging
from launcher.daemon.request import FRAME_S, read_request
from launcher.daemon.watch import DisconnectWatcher, kill_session
from launcher.tools.toolset import ToolSet

SEND_TIMEOUT_S = 30  # a reply the client does not read within this is abandoned (and the connection closed)


class Daemon:
    """Accepts connections on ``listener`` and serves each with its own ToolSet, in its own thread."""

    def __init__(self, launcher, listener: socket.socket, *, socket_path: str | None, owned: bool):
        self.launcher = launcher
        self.listener = listener
        self.socket_path = socket_path
        self.owned = owned  # we created the path (unlink it at exit); systemd owns an activated one
        self.uid = os.geteuid()
        lim = launcher.profile.limits
        self.max_request = lim.max_code_bytes + 64 * 1024
        self.max_connections = max(1, lim.max_sessions)
        self.conns: dict[int, tuple[socket.socket, object]] = {}  # admitted: each holds a slot
        self.threads: dict[int, threading.Thread] = {}  # every connection's thread, pending or admitted
        self.pending = Pending(MAX_PENDING)
        self.refuser = Refuser()
        self.lock = threading.Lock()
        self.ids = 0
        self.cancel_keys: dict[int, str] = {}  # conn id -> the key its client cancels its calls with
        self.stopping = threading.Event()
        self.wake_r, self.wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self.watcher = DisconnectWatcher(self.stopping)

    # ---------------------------------------------------------- accept loop
    def request_stop(self, signum=None, _frame=None) -> None:
        self.stopping.set()
        try:
            os.write(self.wake_w, b"x")
        except OSError:
            pass

    def run(self) -> None:
        self.listener.setblocking(False)
        while not self.stopping.is_set():
            try:
                r, _, _ = select.select([self.listener, self.wake_r], [], [])
            except InterruptedError:
                continue
            if self.wake_r in r:
                break
            try:
                conn, _ = self.listener.accept()
            except (BlockingIOError, InterruptedError):
                continue
            except OSError as e:
                event("accept_failed", logging.ERROR, error=e)
                time.sleep(0.1)
                continue
            conn.setblocking(True)
            # a client that stops reading its replies cannot hold its thread (and slot) forever:
            # a send blocked this long fails and the connection is closed (its session with it)
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, struct.pack("ll", SEND_TIMEOUT_S, 0))
            self._admit(conn)

    def _admit(self, conn: socket.socket) -> None:
        """Check the peer's uid and start the connection's thread; it takes a slot with its first request."""
        try:
            creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            pid, uid, gid = struct.unpack("3i", creds)
        except OSError:
            conn.close()
            return
        if uid != self.uid:
            event("refused", logging.WARNING, reason="peer uid is not the daemon's", peer_pid=pid, peer_uid=uid,
                  daemon_uid=self.uid)
            self.refuser.refuse(conn, f"permission denied: this daemon serves uid {self.uid} only")
            return
        with self.lock:
            self.ids += 1
            cid = self.ids
        t = threading.Thread(target=self._serve_conn, args=(cid, conn, time.monotonic()), name=f"conn-{cid}",
                             daemon=True)
        with self.lock:
            self.threads[cid] = t
        event("connect", conn=cid, peer_pid=pid, peer_uid=uid)
        for old in self.pending.add(cid, conn):
            event("dropped", logging.WARNING, conn=old, stage="handshake",
                  reason=f"more than {MAX_PENDING} connections wait for their first request; the oldest goes")
        try:
            t.start()
        except RuntimeError:
            event("accept_failed", logging.ERROR, error="no thread for the connection")
            self._close_conn(cid, conn, None)

    def _promote(self, cid: int, conn: socket.socket) -> tuple[object | None, str | None]:
        """Give pending connection ``cid`` a slot: (its ToolSet, None), or (None, why it is refused;
        None when it was dropped meanwhile to make room)."""
        if not self.pending.take(cid):
            return None, None
        with self.lock:
            if len(self.conns) < self.max_connections:
                ts = ToolSet(self.launcher)
                self.conns[cid] = (conn, ts)
                return ts, None
        event("refused", logging.WARNING, conn=cid, reason="too many connections")
        return None, f"the daemon already serves {self.max_connections} connections"

    # ---------------------------------------------------------- one connection
    def _serve_conn(self, cid: int, conn: socket.socket, accepted: float) -> None:
        """One connection's thread: requests in order until EOF, a fatal request, a deadline missed
        or a client gone mid-call. Pending until its first request (``ts`` None), then admitted."""
        ts = None
        calls = 0
        farewell = None  # the error the peer gets before the hang-up, if any
        try:
            while not self.stopping.is_set():
                try:
                    kind, val = read_request(conn, self.max_request,
                                             deadline=None if ts is not None else accepted + HANDSHAKE_S)
                except OSError:
                    break
                if kind == "eof":
                    break
                if kind in ("fatal", "late"):
                    farewell = val if kind == "fatal" else self._late(cid, ts is not None, val)
                    if kind == "fatal":
                        event("bad_request", logging.WARNING, conn=cid, reason=val)
                    break
                if kind == "error":
                    event("bad_request", logging.WARNING, conn=cid, reason=val)
                    res = {"error": val}
                elif val["tool"] == "_cancel":
                    res = self._cancel(val.get("args", {}))
                else:
                    if ts is None:
                        ts, farewell = self._promote(cid, conn)
                        if ts is None:
                            break
                    if val["tool"] == "_hello":
                        res = self._hello(cid)
                    else:
                        res, gone = self._call(cid, conn, ts, val)
                        calls += 1
                        if gone:
                            break
                if not self._reply(cid, conn, res):
                    break
        finally:
            self._close_conn(cid, conn, ts, calls, farewell)

    @staticmethod
    def _late(cid: int, admitted: bool, started: bool) -> str:
        """Log and word the drop of a connection that missed its deadline."""
        if admitted:
            why = f"a request did not arrive whole within {FRAME_S:g} s of its first byte"
        else:
            why = (f"no whole request within {HANDSHAKE_S:g} s of connecting"
                   + (" (one was started)" if started else ""))
        event("dropped", logging.WARNING, conn=cid, stage="frame" if admitted else "handshake", reason=why)
        return why + ("; closing the connection and its session" if admitted else "; closing the connection")

    def _call(self, cid: int, conn: socket.socket, ts, val: dict) -> tuple[dict | None, bool]:
        """Run one tool call; (result, the client went away meanwhile: send nothing)."""
        tool, args = val["tool"], val.get("args", {})
        start = time.monotonic()
        seq = val.get("seq")
        self.watcher.call_started(cid, conn, ts)
        try:
            res = ts.call(tool, args, ("seq", seq) if isinstance(seq, int) else None)
        except Exception as e:  # noqa: BLE001 - a bug must not kill the daemon
            event("tool_crashed", logging.ERROR, exc_info=True, conn=cid, tool=tool[:64])
            res = {"error": f"internal error in {tool}: {type(e).__name__}: {e}"}
        finally:
            gone = self.watcher.call_ended(cid)
        if gone:
            event("call", conn=cid, tool=tool[:64], result="client-gone",
                  duration_ms=f"{(time.monotonic() - start) * 1000:.1f}")
            return None, True
        sess = getattr(ts.session, "id", "-") if ts.session is not None else "-"
        err = isinstance(res, dict) and isinstance(res.get("error"), str)
        failed = isinstance(res, dict) and res.get("ok") is False
        event("call", conn=cid, tool=tool[:64], session=sess,
              duration_ms=f"{(time.monotonic() - start) * 1000:.1f}",
              result="error" if err else "failed" if failed else "ok")
        return res, False

    @staticmethod
    def _reply(cid: int, conn: socket.socket, res) -> bool:
        """Send ``res``; False when the connection must be closed."""
        try:
            send_frame(conn, res)
        except (TypeError, ValueError) as e:
            event("unserialisable_result", logging.ERROR, conn=cid, error=e)
            try:
                send_frame(conn, {"error": f"internal error: the result could not be encoded ({e})"})
            except OSError:
                return False
        except OSError:
            return False
        return True

    def _hello(self, cid: int) -> dict:
        key = self.cancel_keys.setdefault(cid, secrets.token_hex(16))
        return {"server": "build123d-launcher", "version": __version__, "conn": cid, "pid": os.getpid(),
                "profile": self.launcher.profile.name, "output_dir": str(self.launcher.output_dir),
                "max_request_bytes": self.max_request, "cancel_key": key,
                "handshake_s": HANDSHAKE_S, "frame_s": FRAME_S}

    def _cancel(self, args: dict) -> dict:
        """``{"tool": "_cancel", "args": {"conn": N, "key": K, "seq": S}}``, sent on a second connection:
        cancel call S of connection N (K: the cancel_key N's hello returned, so only N's client can)."""
        cid, key, seq = args.get("conn"), args.get("key"), args.get("seq")
        want = self.cancel_keys.get(cid) if isinstance(cid, int) else None
        if not (isinstance(key, str) and want and hmac.compare_digest(key, want)):
            return {"error": "no such connection, or a wrong cancel key"}
        with self.lock:
            entry = self.conns.get(cid)
        if entry is None:
            return {"error": "no such connection"}
        entry[1].cancel(("seq", seq) if isinstance(seq, int) else None)
        event("cancel", conn=cid, seq=seq if isinstance(seq, int) else "-")
        return {"cancelled": True}

    def _close_conn(self, cid: int, conn: socket.socket, ts, calls: int = 0, farewell: str | None = None) -> None:
        """Free the connection's slot, close its session, then hang up (after ``farewell``, if any)."""
        self.pending.take(cid)
        with self.lock:
            self.conns.pop(cid, None)
            self.cancel_keys.pop(cid, None)
            self.threads.pop(cid, None)
        self.watcher.forget(cid)
        if ts is not None:
            try:
                ts.close()
            except Exception:  # noqa: BLE001
                event("session_close_failed", logging.ERROR, exc_info=True, conn=cid)
        if farewell:
            self.refuser.refuse(conn, farewell)
        else:
            try:
                conn.close()
            except OSError:
                pass
        event("disconnect", conn=cid, calls=calls)

    # ---------------------------------------------------------- shutdown
    def shutdown(self) -> None:
        sd_notify("STOPPING=1")
        event("stopping", connections=len(self.conns), pending=len(self.pending),
              sessions=len(self.launcher.sessions))
        try:
            self.listener.close()
        except OSError:
            pass
        if self.owned and self.socket_path:
            try:
                os.unlink(self.socket_path)
            except OSError:
                pass
        # kill the sessions' processes first (no locks needed: pidfd signals), so a
        # running execute returns at once instead of at its timeout
        for s in list(self.launcher.sessions.values()):
            kill_session(s)
        with self.lock:
            socks = [conn for conn, _ts in self.conns.values()]
            threads = list(self.threads.values())
        for conn in socks + self.pending.sockets():
            hang_up(conn)
        for t in threads:
            t.join(timeout=5.0)
        with self.lock:
            left = list(self.conns.items())  # threads that did not finish in time
        for cid, (conn, ts) in left:
            self._close_conn(cid, conn, ts)
        self.launcher.close()
        self.watcher.close(timeout=2.0)
        for fd in (self.wake_r, self.wake_w):
            try:
                os.close(fd)
            except OSError:
                pass
        event("stopped")


def serve(args) -> int:
    """Entry point of ``build123d-launcher serve`` (args: profile, output_dir, jail_uid, socket)."""
    setup_logging(getattr(args, "verbose", False))

    listener = activated_socket()
    owned = False
    path = None
    if listener is None:
        try:
            path = getattr(args, "socket", None) or default_socket_path()
        except RuntimeError as e:
            raise SystemExit(f"build123d-launcher serve: {e}") from None
        listener = bind_socket(path)
        owned = True
        event("listening", socket=path, mode="0600", activation="no")
    else:
        try:
            path = listener.getsockname() or None
        except OSError:
            path = None
        event("listening", socket=path or "?", activation="systemd")

    stop_early = threading.Event()

    def early(signum, _frame):
        stop_early.set()

    old_term = signal.signal(signal.SIGTERM, early)
    old_int = signal.signal(signal.SIGINT, early)
    try:
        launcher = Launcher(args.profile, output_dir=args.output_dir, jail_uid=args.jail_uid,
                            input_dir=getattr(args, "input_dir", None))
    except BaseException:
        listener.close()
        if owned and path:
            try:
                os.unlink(path)
            except OSError:
                pass
        raise
    daemon = Daemon(launcher, listener, socket_path=path, owned=owned)
    signal.signal(signal.SIGTERM, daemon.request_stop)
    signal.signal(signal.SIGINT, daemon.request_stop)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    if stop_early.is_set():
        daemon.request_stop()
    event("ready", pid=os.getpid(), profile=launcher.profile.name, output_dir=launcher.output_dir,
          zygote_pid=launcher.zygote.pid, max_request_bytes=daemon.max_request)
    sd_notify(f"READY=1\nMAINPID={os.getpid()}\nSTATUS=serving on {path or 'the systemd socket'}")
    try:
        daemon.run()
    finally:
        daemon.shutdown()
        signal.signal(signal.SIGTERM, old_term)
        signal.signal(signal.SIGINT, old_int)
    return 0

"""``build123d-launcher serve``: the launcher as a daemon on a unix socket.

* Socket: ``--socket PATH`` or ``$XDG_RUNTIME_DIR/build123d-launcher.sock``,
  created mode 0600; or the socket systemd passes (``LISTEN_FDS``/``LISTEN_PID``,
  fd 3) when socket-activated.
* Every connection is checked with ``SO_PEERCRED``: a peer whose uid is not
  the daemon's is refused (one error frame, then the connection is closed).
* One connection = one :class:`~launcher.tools.toolset.ToolSet` = one isolated session
  set; it is closed (processes killed) when the connection ends.
* Wire format: see :mod:`launcher.daemon.client` (4-byte length + JSON). A
  request larger than the profile's ``max_code_bytes`` + 64 KiB, or one that
  is not ``{"tool": str, "args": {...}}``, gets an ``{"error": ...}`` reply;
  nothing a client sends crashes the daemon.
* SIGTERM/SIGINT: stop accepting, kill every session, stop the zygote, exit 0:
  no process is left behind.
* ``READY=1`` / ``STOPPING=1`` go to ``$NOTIFY_SOCKET`` with a plain ``sendto``.
* Logs: one line per event on stderr, ``key=value`` (journald-friendly); the
  audit line per execution comes from ``build123d_launcher.audit``.
"""
from __future__ import annotations

import json
import logging
import os
import signal
import socket
import stat
import struct
import sys
import threading
import time

from launcher.replies import sanitize
from launcher.daemon.client import HEADER, default_socket_path, recv_exact, send_frame

log = logging.getLogger("build123d_launcher.daemon")

SD_LISTEN_FDS_START = 3
SEND_TIMEOUT_S = 30  # a reply the client does not read within this is abandoned (and the connection closed)
DISCARD_LIMIT = 64 * 1024 * 1024  # oversize requests up to this are read and dropped; beyond, the connection is cut


# ------------------------------------------------------------------ logging
def _quote(v) -> str:
    """One log value: quoted when needed, with every control character, bidi override, line
    separator and lone surrogate escaped (launcher/sanitize.py), so no value can start a record."""
    s = str(v)
    if s == "" or any(c in s for c in ' "=\\') or sanitize.unsafe(s, keep=""):
        return '"' + sanitize.text(s.replace("\\", "\\\\").replace('"', '\\"'), keep="") + '"'
    return s


class KeyValueFormatter(logging.Formatter):
    """``level=info logger=x event=y k=v ...``: one line per record, no raw newlines.

    A message whose first word is not ``key=value`` becomes ``event=<word>``;
    anything else that is not ``key=value`` is kept in a quoted ``msg=``.
    Timestamps are left out under journald (``$JOURNAL_STREAM``), which adds its own.
    """

    def __init__(self, timestamps: bool | None = None):
        super().__init__()
        self.timestamps = (not os.environ.get("JOURNAL_STREAM")) if timestamps is None else timestamps

    def format(self, record: logging.LogRecord) -> str:
        msg = record.getMessage()
        head = []
        if self.timestamps:
            head.append("ts=" + time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
                        + f".{int(record.msecs):03d}Z")
        head += [f"level={record.levelname.lower()}", f"logger={record.name}"]
        words = msg.split(" ")
        body = []
        if getattr(record, "kv", False) and not sanitize.unsafe(msg, keep=""):
            body.append(msg)
        elif sanitize.unsafe(msg, keep=""):  # a control character, \r, U+2028, a bidi override ...
            body.append("msg=" + _quote(msg))
        elif words and words[0] and "=" not in words[0] and "\n" not in msg and all(
                "=" in w for w in words[1:] if w):
            body.append(f"event={_quote(words[0])}")
            body += [w for w in words[1:] if w]
        elif all("=" in w for w in words if w) and "\n" not in msg and msg:
            body += [w for w in words if w]
        else:
            body.append("msg=" + _quote(msg))
        if record.exc_info:
            body.append("exc=" + _quote(self.formatException(record.exc_info)))
        return " ".join(head + body)


def event(name: str, level: int = logging.INFO, *, exc_info=False, **kv) -> None:
    """Log one structured event: ``event=name k=v ...`` (values quoted as needed)."""
    line = " ".join([f"event={_quote(name)}"] + [f"{k}={_quote(v)}" for k, v in kv.items()])
    log.log(level, "%s", line, extra={"kv": True}, exc_info=exc_info)


def setup_logging(verbose: bool = False) -> None:
    root = logging.getLogger()
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(KeyValueFormatter())
    for h in list(root.handlers):
        root.removeHandler(h)
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if verbose else logging.INFO)


# ------------------------------------------------------------------ systemd
def sd_notify(state: str) -> bool:
    """Send ``state`` to ``$NOTIFY_SOCKET`` (plain datagram); False when there is none."""
    addr = os.environ.get("NOTIFY_SOCKET")
    if not addr:
        return False
    if addr.startswith("@"):
        addr = "\0" + addr[1:]
    elif not addr.startswith("/"):
        return False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as s:
            s.sendto(state.encode(), addr)
        return True
    except OSError as e:
        event("sd_notify_failed", logging.WARNING, error=e)
        return False


def listen_fds() -> list[int]:
    """The fds systemd passed (socket activation), and unset the variables."""
    try:
        pid = int(os.environ.get("LISTEN_PID", ""))
        n = int(os.environ.get("LISTEN_FDS", ""))
    except ValueError:
        return []
    for var in ("LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"):
        os.environ.pop(var, None)
    if pid != os.getpid() or n <= 0:
        return []
    fds = list(range(SD_LISTEN_FDS_START, SD_LISTEN_FDS_START + n))
    for fd in fds:
        os.set_inheritable(fd, False)
    return fds


def _activated_socket() -> socket.socket | None:
    fds = listen_fds()
    if not fds:
        return None
    if len(fds) > 1:
        event("listen_fds", logging.WARNING, count=len(fds), note="using the first")
    s = socket.socket(fileno=fds[0])
    if s.family != socket.AF_UNIX or s.type != socket.SOCK_STREAM:
        raise SystemExit("build123d-launcher serve: the socket passed by systemd is not an AF_UNIX stream socket")
    for extra in fds[1:]:
        os.close(extra)
    return s


def _bind(path: str) -> socket.socket:
    """Listen on ``path`` (mode 0600). A stale socket is replaced; a live one is an error."""
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d):
        raise SystemExit(f"build123d-launcher serve: directory {d} does not exist")
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    if st is not None:
        if not stat.S_ISSOCK(st.st_mode):
            raise SystemExit(f"build123d-launcher serve: {path} exists and is not a socket; not touching it")
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        probe.settimeout(1.0)
        try:
            probe.connect(path)
            raise SystemExit(f"build123d-launcher serve: another daemon already listens on {path}")
        except (ConnectionRefusedError, FileNotFoundError):
            os.unlink(path)  # stale socket from a dead daemon
        except socket.timeout:
            raise SystemExit(f"build123d-launcher serve: {path} accepts connections; another daemon runs") from None
        finally:
            probe.close()
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
    old = os.umask(0o177)
    try:
        s.bind(path)
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    s.listen(64)
    return s


# ------------------------------------------------------------------ daemon
def _version() -> str:
    try:
        from launcher import __version__
        return str(__version__)
    except ImportError:
        return "?"


class Daemon:
    def __init__(self, launcher, listener: socket.socket, *, socket_path: str | None, owned: bool):
        self.launcher = launcher
        self.listener = listener
        self.socket_path = socket_path
        self.owned = owned  # we created the path (unlink it at exit); systemd owns an activated one
        self.uid = os.geteuid()
        lim = launcher.profile.limits
        self.max_request = lim.max_code_bytes + 64 * 1024
        self.max_connections = max(1, lim.max_sessions)
        self.conns: dict[int, tuple[socket.socket, object, threading.Thread]] = {}
        self.lock = threading.Lock()
        self.ids = 0
        self.cancel_keys: dict[int, str] = {}  # conn id -> the key its client cancels its calls with
        self.stopping = threading.Event()
        self.wake_r, self.wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self.busy: dict[int, tuple[socket.socket, object]] = {}  # conns with a call running
        self.abandoned: dict[int, set[int]] = {}  # conn id -> id()s of the sessions killed for it
        self.watch_r, self.watch_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self.watcher = threading.Thread(target=self._watch, name="disconnect-watcher", daemon=True)
        self.watcher.start()

    # ---------------------------------------------------------- accept loop
    def request_stop(self, signum=None, _frame=None) -> None:
        self.stopping.set()
        try:
            os.write(self.wake_w, b"x")
        except OSError:
            pass

    def run(self) -> None:
        import select
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
        try:
            creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            pid, uid, gid = struct.unpack("3i", creds)
        except OSError:
            conn.close()
            return
        if uid != self.uid:
            event("refused", logging.WARNING, reason="peer uid is not the daemon's", peer_pid=pid, peer_uid=uid,
                  daemon_uid=self.uid)
            self._refuse(conn, f"permission denied: this daemon serves uid {self.uid} only")
            return
        with self.lock:
            if len(self.conns) >= self.max_connections:
                full = True
            else:
                full = False
                self.ids += 1
                cid = self.ids
        if full:
            event("refused", logging.WARNING, reason="too many connections", peer_pid=pid)
            self._refuse(conn, f"the daemon already serves {self.max_connections} connections")
            return
        from launcher.tools.toolset import ToolSet
        ts = ToolSet(self.launcher)
        t = threading.Thread(target=self._serve_conn, args=(cid, conn, ts, pid), name=f"conn-{cid}", daemon=True)
        with self.lock:
            self.conns[cid] = (conn, ts, t)
        event("connect", conn=cid, peer_pid=pid, peer_uid=uid)
        t.start()

    @staticmethod
    def _refuse(conn: socket.socket, message: str) -> None:
        """Send one error frame and hang up, in a short-lived thread (never blocks accepting).

        The peer's unread request is drained first: closing a unix socket with unread
        data resets the connection and the peer would not see the error.
        """
        def run():
            try:
                conn.settimeout(1.0)
                send_frame(conn, {"error": message})
                conn.shutdown(socket.SHUT_WR)
                got = 0
                while got < (1 << 20):
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    got += len(chunk)
            except OSError:
                pass
            finally:
                conn.close()
        threading.Thread(target=run, name="refuse", daemon=True).start()

    # ---------------------------------------------------------- one connection
    def _read_request(self, conn: socket.socket):
        """('ok', obj) | ('error', message) | ('eof', None) | ('fatal', message)."""
        head = recv_exact(conn, HEADER.size)
        if head is None:
            return "eof", None
        (n,) = HEADER.unpack(head)
        if n > self.max_request:
            if n > DISCARD_LIMIT:
                return "fatal", f"request of {n} bytes exceeds the {self.max_request}-byte limit; closing"
            left = n
            while left:
                chunk = conn.recv(min(left, 1 << 20))
                if not chunk:
                    return "eof", None
                left -= len(chunk)
            return "error", (f"request of {n} bytes exceeds the daemon's {self.max_request}-byte limit "
                             "(the profile's max_code_bytes + 64 KiB)")
        body = recv_exact(conn, n)
        if body is None:
            return "eof", None
        try:
            obj = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as e:
            return "error", f"malformed request: not UTF-8 JSON ({type(e).__name__})"
        if not isinstance(obj, dict) or not isinstance(obj.get("tool"), str) \
                or not isinstance(obj.get("args", {}), dict):
            return "error", 'malformed request: expected {"tool": name, "args": {...}}'
        if not all(isinstance(k, str) for k in obj.get("args", {})):
            return "error", "malformed request: argument names must be strings"
        return "ok", obj

    def _hello(self, cid: int) -> dict:
        import secrets
        key = self.cancel_keys.setdefault(cid, secrets.token_hex(16))
        return {"server": "build123d-launcher", "version": _version(), "conn": cid, "pid": os.getpid(),
                "profile": self.launcher.profile.name, "output_dir": str(self.launcher.output_dir),
                "max_request_bytes": self.max_request, "cancel_key": key}

    def _cancel(self, args: dict) -> dict:
        """``{"tool": "_cancel", "args": {"conn": N, "key": K, "seq": S}}``, sent on a second connection:
        cancel call S of connection N (K: the cancel_key N's hello returned, so only N's client can)."""
        import hmac
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

    # ---------------------------------------------------------- clients that go away mid-call
    def _poke_watcher(self) -> None:
        try:
            os.write(self.watch_w, b"x")
        except OSError:  # pipe full: the watcher is awake anyway
            pass

    def _call_started(self, cid: int, conn: socket.socket, ts) -> None:
        with self.lock:
            self.busy[cid] = (conn, ts)
        self._poke_watcher()

    def _call_ended(self, cid: int) -> bool:
        """Unregister the call; True if its client went away meanwhile (then no reply is sent)."""
        with self.lock:
            self.busy.pop(cid, None)
            gone = cid in self.abandoned
        self._poke_watcher()
        return gone

    @staticmethod
    def _kill_session_processes(ts) -> object | None:
        """SIGKILL (pidfd) the init and keeper of ``ts``'s session: the whole session pid namespace
        dies with init, snapshots included. Takes no lock (the call holds the session's); the
        call in progress then sees its process die and returns. The session object, if any."""
        s = getattr(ts, "session", None)
        if s is None or getattr(s, "closed", True):
            return None
        for p in (getattr(s, "init", None), getattr(s, "keeper", None)):
            if p is not None:
                try:
                    p.kill()
                except Exception:  # noqa: BLE001 - already gone
                    pass
        return s

    def _watch(self) -> None:
        """While a call runs, watch its connection: a client that closes it (POLLHUP: the peer is
        gone, not a half-close) has its session killed at once, whatever the call is doing, and
        any session the unwinding call makes (e.g. ``reset``) too, until the call returns; the
        connection's thread then skips the reply and closes the slot (``_close_conn``)."""
        import select
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
                    try:
                        while os.read(self.watch_r, 4096):
                            pass
                    except OSError:
                        pass
                    continue
                cid = fds.get(fd)
                if cid is None or not ev & (select.POLLHUP | select.POLLERR | select.POLLNVAL):
                    continue
                with self.lock:
                    entry = self.busy.get(cid)
                    if entry is None:
                        continue
                    self.abandoned.setdefault(cid, set())
                s = self._kill_session_processes(entry[1])
                event("client_gone", logging.WARNING, conn=cid, note="disconnected during a call; "
                      "its session is killed", session=getattr(s, "id", "-"))
                with self.lock:
                    if s is not None and cid in self.abandoned:
                        self.abandoned[cid].add(id(s))
            for cid in lingering:  # the call is still unwinding: kill what it makes meanwhile
                with self.lock:
                    entry = self.busy.get(cid)
                if entry is None:
                    continue
                s = getattr(entry[1], "session", None)
                if s is not None and id(s) not in abandoned.get(cid, ()) and not getattr(s, "closed", True):
                    self._kill_session_processes(entry[1])
                    with self.lock:
                        if cid in self.abandoned:
                            self.abandoned[cid].add(id(s))

    def _serve_conn(self, cid: int, conn: socket.socket, ts, peer_pid: int) -> None:
        calls = 0
        try:
            while not self.stopping.is_set():
                try:
                    kind, val = self._read_request(conn)
                except OSError:
                    break
                if kind == "eof":
                    break
                if kind == "fatal":
                    event("bad_request", logging.WARNING, conn=cid, reason=val)
                    try:
                        send_frame(conn, {"error": val})
                    except OSError:
                        pass
                    break
                if kind == "error":
                    event("bad_request", logging.WARNING, conn=cid, reason=val)
                    res = {"error": val}
                else:
                    tool, args = val["tool"], val.get("args", {})
                    start = time.monotonic()
                    if tool == "_hello":
                        res = self._hello(cid)
                    elif tool == "_cancel":
                        res = self._cancel(args)
                    else:
                        seq = val.get("seq")
                        self._call_started(cid, conn, ts)
                        try:
                            res = ts.call(tool, args, ("seq", seq) if isinstance(seq, int) else None)
                        except Exception as e:  # noqa: BLE001 - a bug must not kill the daemon
                            event("tool_crashed", logging.ERROR, exc_info=True, conn=cid, tool=tool[:64])
                            res = {"error": f"internal error in {tool}: {type(e).__name__}: {e}"}
                        finally:
                            gone = self._call_ended(cid)
                        calls += 1
                        if gone:
                            event("call", conn=cid, tool=tool[:64], result="client-gone",
                                  duration_ms=f"{(time.monotonic() - start) * 1000:.1f}")
                            break
                        sess = getattr(ts.session, "id", "-") if ts.session is not None else "-"
                        err = isinstance(res, dict) and isinstance(res.get("error"), str)
                        failed = isinstance(res, dict) and res.get("ok") is False
                        event("call", conn=cid, tool=tool[:64], session=sess,
                              duration_ms=f"{(time.monotonic() - start) * 1000:.1f}",
                              result="error" if err else "failed" if failed else "ok")
                try:
                    send_frame(conn, res)
                except (TypeError, ValueError) as e:
                    event("unserialisable_result", logging.ERROR, conn=cid, error=e)
                    try:
                        send_frame(conn, {"error": f"internal error: the result could not be encoded ({e})"})
                    except OSError:
                        break
                except OSError:
                    break
        finally:
            self._close_conn(cid, calls)

    def _close_conn(self, cid: int, calls: int = 0) -> None:
        with self.lock:
            entry = self.conns.pop(cid, None)
            self.cancel_keys.pop(cid, None)
            self.abandoned.pop(cid, None)
        if entry is None:
            return
        conn, ts, _t = entry
        try:
            ts.close()
        except Exception:  # noqa: BLE001
            event("session_close_failed", logging.ERROR, exc_info=True, conn=cid)
        try:
            conn.close()
        except OSError:
            pass
        event("disconnect", conn=cid, calls=calls)

    # ---------------------------------------------------------- shutdown
    def shutdown(self) -> None:
        sd_notify("STOPPING=1")
        event("stopping", connections=len(self.conns), sessions=len(self.launcher.sessions))
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
            for p in (getattr(s, "init", None), getattr(s, "keeper", None)):
                if p is not None:
                    try:
                        p.kill()
                    except Exception:  # noqa: BLE001
                        pass
        with self.lock:
            entries = list(self.conns.items())
        for _cid, (conn, _ts, _t) in entries:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        for _cid, (_conn, _ts, t) in entries:
            t.join(timeout=5.0)
        for cid, _entry in entries:
            self._close_conn(cid)
        self.launcher.close()
        self._poke_watcher()
        self.watcher.join(timeout=2.0)
        for fd in (self.wake_r, self.wake_w, self.watch_r, self.watch_w):
            try:
                os.close(fd)
            except OSError:
                pass
        event("stopped")


def serve(args) -> int:
    """Entry point of ``build123d-launcher serve`` (args: profile, output_dir, jail_uid, socket)."""
    setup_logging(getattr(args, "verbose", False))
    from launcher.core import Launcher

    listener = _activated_socket()
    owned = False
    path = None
    if listener is None:
        try:
            path = getattr(args, "socket", None) or default_socket_path()
        except RuntimeError as e:
            raise SystemExit(f"build123d-launcher serve: {e}") from None
        listener = _bind(path)
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

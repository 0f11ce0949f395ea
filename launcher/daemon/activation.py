"""Where the daemon listens, and what it tells systemd.

Socket activation (``LISTEN_FDS``/``LISTEN_PID``, fd 3: the socket must be an ``AF_UNIX`` stream
socket, else the daemon exits), or a socket it binds itself at ``--socket PATH`` or
``$XDG_RUNTIME_DIR/build123d-launcher.sock``, mode 0600 (umask 0177 while binding). A stale
socket is replaced; a live one (another daemon) or a path that is not a socket is an error, and
is never touched. ``READY=1`` / ``STOPPING=1`` go to ``$NOTIFY_SOCKET`` with a plain ``sendto``.
"""
from __future__ import annotations

import logging
import os
import socket
import stat

from launcher.daemon.logfmt import event

SD_LISTEN_FDS_START = 3


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


def activated_socket() -> socket.socket | None:
    """The listening socket systemd passed, or None when not socket-activated."""
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


def bind_socket(path: str) -> socket.socket:
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

"""The network canaries: listeners on the host that jailed code must never reach.

TCP on ``127.0.0.1`` and ``::1``, UDP on ``127.0.0.1``, a unix stream socket in the temporary
``$HOME`` (mode 0777, so only the jail's view keeps it out of reach), an abstract unix stream
socket and an abstract datagram one. Every connection accepted and every datagram received is
recorded as an event (a fired canary).
"""
from __future__ import annotations

import os
import socket
import threading
import time
from pathlib import Path

UNIX_SOCKET_NAME = "canary.sock"


class _Listener(threading.Thread):
    def __init__(self, sock: socket.socket, name: str, events: list, dgram: bool = False):
        super().__init__(daemon=True, name=f"canary-{name}")
        self.sock, self.label, self.events, self.dgram = sock, name, events, dgram
        self.stop = False

    def run(self):
        self.sock.settimeout(0.2)
        while not self.stop:
            try:
                if self.dgram:
                    data, addr = self.sock.recvfrom(65536)
                    self.events.append(f"net:{self.label} got a datagram ({len(data)} bytes)")
                else:
                    c, addr = self.sock.accept()
                    self.events.append(f"net:{self.label} accepted a connection")
                    c.close()
            except (socket.timeout, BlockingIOError):
                continue
            except OSError:
                if self.stop:
                    return
                time.sleep(0.05)


class Listeners:
    """Opens the listeners (:meth:`open`) and closes them (:meth:`close`); events go to ``events``."""

    def __init__(self, home: Path, mark: str, events: list):
        self.home, self.mark, self.events = home, mark, events
        self.threads: list[_Listener] = []
        self.socks: list[socket.socket] = []

    def open(self) -> None:
        tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        tcp.bind(("127.0.0.1", 0))
        tcp.listen(16)
        udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        udp.bind(("127.0.0.1", 0))
        self.tcp_port, self.udp_port = tcp.getsockname()[1], udp.getsockname()[1]
        socks = [(tcp, "tcp4", False), (udp, "udp4", True)]
        self.tcp6_port = 0
        try:
            tcp6 = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
            tcp6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            tcp6.bind(("::1", 0))
            tcp6.listen(16)
            self.tcp6_port = tcp6.getsockname()[1]
            socks.append((tcp6, "tcp6", False))
        except OSError:
            pass
        self.unix_path = str(self.home / UNIX_SOCKET_NAME)
        ux = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        ux.bind(self.unix_path)
        os.chmod(self.unix_path, 0o777)
        ux.listen(16)
        self.abstract_name = self.mark + "-abstract"
        ab = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        ab.bind("\0" + self.abstract_name)
        ab.listen(16)
        abd = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        abd.bind("\0" + self.abstract_name + "-dgram")
        socks += [(ux, "unix-path", False), (ab, "unix-abstract", False), (abd, "unix-abstract-dgram", True)]
        for s, name, dg in socks:
            th = _Listener(s, name, self.events, dg)
            th.start()
            self.threads.append(th)
            self.socks.append(s)

    def close(self) -> None:
        for th in self.threads:
            th.stop = True
        for s in reversed(self.socks):
            try:
                s.close()
            except Exception:
                pass
        self.socks.clear()

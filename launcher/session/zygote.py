"""Launcher side of the zygote: start it with a clean environment, ask it for sessions.

The zygote is started with ``subprocess`` (a fresh interpreter, never a fork of
the launcher, whose threads and sockets must not leak into the jail), in its own
session and process group (so a jailed ``kill(0, …)`` can never reach the
launcher's group), with stdin/stdout on /dev/null (the MCP stdio pipes never
reach it) and stderr on a pipe the launcher logs from.
"""
from __future__ import annotations

import logging
import os
import select
import socket
import subprocess
import sys
import threading
import time

from jail.wire.errors import LayerError

from jail.wire import protocol

log = logging.getLogger("build123d_launcher.zygote")

PASS_ENV = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "LANG", "LC_ALL", "TZ")


class ZygoteError(RuntimeError):
    pass


MALLOC_TUNABLES = "glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=67108864"


def clean_env() -> dict:
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": "/nonexistent",
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONNOUSERSITE": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        # malloc keeps freed image-sized blocks for reuse (the ceilings its dynamic threshold reaches
        # anyway) instead of unmapping or trimming them after each use: a render re-faulted ~25 MB of
        # fresh pages every time (6 400 faults, ~8 ms of 40); see bench/RESULTS.md
        "GLIBC_TUNABLES": MALLOC_TUNABLES,
    }
    for k in PASS_ENV:
        if k in os.environ:
            env[k] = os.environ[k]
    return env


class Zygote:
    def __init__(self, *, userns: str = "required", jail_uid: str | None = None, start_timeout: float = 180.0,
                 wait: bool = True):
        """Start the zygote; with ``wait`` (default) also wait until it is ready (else: ``wait_ready()``)."""
        self.lock = threading.Lock()
        self.userns, self.jail_uid = userns, jail_uid  # what it was started with (Launcher checks a shared one)
        self.ctl, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.rx = protocol.Receiver(self.ctl, 1 << 20)
        cmd = [sys.executable, "-m", "jail.proc.zygote", str(child.fileno()), "--userns", userns]
        if jail_uid is not None:
            cmd += ["--jail-uid", str(jail_uid)]
        self.proc = subprocess.Popen(
            cmd, pass_fds=[child.fileno()], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE, env=clean_env(), cwd="/", start_new_session=True, close_fds=True)
        child.close()
        self._stderr_thread = threading.Thread(target=self._pump_stderr, daemon=True, name="zygote-stderr")
        self._stderr_thread.start()
        self._next_id = 1
        self.pid = self.proc.pid
        self.evidence: dict = {}
        if wait:
            self.wait_ready(start_timeout)

    def wait_ready(self, start_timeout: float = 180.0) -> None:
        """Wait for ``zygote_ready``: LayerError/ZygoteError if it fails (the zygote is then stopped)."""
        msg = self._recv(start_timeout)
        if msg is None:
            raise ZygoteError(f"the zygote exited during start-up (code {self.proc.poll()}); see the log above")
        if msg["t"] == "zygote_error":
            self.close()
            raise LayerError(str(msg.get("layer", "internal")), str(msg.get("reason", "?")))
        if msg["t"] != "zygote_ready":
            self.close()
            raise ZygoteError(f"unexpected zygote message {msg['t']!r}")
        self.pid = self.proc.pid
        self.evidence = msg.get("evidence", {})

    def _pump_stderr(self) -> None:
        for line in self.proc.stderr:
            log.warning("zygote: %s", line.decode(errors="replace").rstrip())

    def _recv(self, timeout: float) -> dict | None:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise ZygoteError(f"the zygote did not answer within {timeout:.0f}s")
            r, _, _ = select.select([self.ctl], [], [], min(left, 1.0))
            if not r:
                if self.proc.poll() is not None:
                    return None
                continue
            got = self.rx.read_one()
            if got is None:
                return None
            pid, msg, _blob, err = got
            if msg is not None and pid == self.proc.pid:
                return msg

    def alive(self) -> bool:
        return self.proc.poll() is None

    def spawn(self, profile) -> tuple[socket.socket, int]:
        """A new session: returns (launcher's end of its socket, keeper pid)."""
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        mine.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        with self.lock:
            if not self.alive():
                raise ZygoteError("the zygote is not running")
            rid = self._next_id
            self._next_id += 1
            frames = protocol.encode({"t": "spawn", "id": rid, "profile": profile.to_wire()})
            if len(frames) != 1:
                raise ZygoteError("profile too large for one control datagram")
            socket.send_fds(self.ctl, [frames[0]], [theirs.fileno()])
            theirs.close()
            msg = self._recv(30)
            if msg is None:
                raise ZygoteError("the zygote died while forking a session")
            if msg["t"] != "spawned" or msg.get("id") != rid:
                raise ZygoteError(f"zygote could not fork a session: {msg.get('reason', msg)}")
            return mine, int(msg["pid"])

    def close(self) -> None:
        try:
            self.ctl.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

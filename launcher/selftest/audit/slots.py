"""``then: daemon-slots``: connections that never finish a request cannot lock the user out.

A host-side check (the payload's own code is a no-op): a real daemon (``build123d-launcher
serve``, the column's profile, as the auditing uid, its own socket in a private directory) gets
one established client (``mcp``'s own client: hello, then a session holding a variable, then idle),
then fills every
other slot with connections that send nothing or trickle a frame one byte a second. A real
client must then be served (its ``_hello`` answered) within :data:`BOUND_S`, and the idle
established client must still have its session. Everything is closed and the daemon stopped
(SIGTERM, then SIGKILL by pid) at the end.
"""
from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from launcher.daemon.client import HEADER, DaemonBackend, DaemonUnavailable
from launcher.profile import load_profile

BOUND_S = 30.0        # a real client is served within this while the slots are held
START_S = 90.0        # the daemon answers its first hello within this
TRICKLE_EVERY_S = 1.0


def _connect(path: str, timeout: float = 5.0) -> socket.socket:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(path)
    return s


def _client(path: str, timeout: float) -> DaemonBackend | None:
    """A real client (the one ``mcp`` uses), greeted; None when refused or not answered in ``timeout``."""
    try:
        return DaemonBackend(path, hello_timeout=timeout)
    except (DaemonUnavailable, OSError, ValueError):
        return None


def _served(path: str, timeout: float) -> bool:
    c = _client(path, timeout)
    if c is not None:
        c.close()
    return c is not None


class _Trickler(threading.Thread):
    """Sends one byte a second on each socket: a frame header announcing 4 KiB, then its body."""

    def __init__(self, socks):
        super().__init__(daemon=True, name="audit-trickle")
        self.socks, self.stop = socks, threading.Event()
        self.data = HEADER.pack(4096) + b"{" * 4096

    def run(self):
        i = 0
        while not self.stop.wait(TRICKLE_EVERY_S) and i < len(self.data):
            for s in self.socks:
                try:
                    s.send(self.data[i:i + 1])
                except OSError:
                    pass
            i += 1


def _start(rig, sock: str, log: Path) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "launcher", "serve", "--profile", str(rig.profile_path), "--socket", sock,
           "--output-dir", str(rig.canaries.outdir)]
    if rig.jail_uid is not None:
        cmd += ["--jail-uid", str(rig.jail_uid)]
    with open(log, "wb") as f:
        return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=f, stderr=f, cwd="/",
                                start_new_session=True)


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def check_slots(rig, values: dict) -> list[str]:
    d = Path(tempfile.mkdtemp(prefix="b123d-slots-"))
    sock, fired, held = str(d / "d.sock"), [], []
    proc = _start(rig, sock, d / "daemon.log")
    trickler = idle = None
    try:
        deadline = time.monotonic() + START_S
        while not _served(sock, 2.0):
            if proc.poll() is not None or time.monotonic() > deadline:
                tail = (d / "daemon.log").read_text(errors="replace")[-300:]
                return [f"daemon: the daemon did not start ({tail!r})"]
            time.sleep(0.2)
        idle = _client(sock, 30.0)
        r = idle.call("execute", {"code": "audit_idle_value = 7331\n"}) if idle else None
        if not isinstance(r, dict) or r.get("ok") is not True:
            return [f"daemon: an ordinary client was not served ({str(r)[:160]})"]
        slots = max(1, load_profile(str(rig.profile_path)).limits.max_sessions)
        silent = [_connect(sock) for _ in range(slots // 2)]
        trickling = [_connect(sock) for _ in range(slots - 1 - len(silent) + 2)]  # +2: past the cap
        held += silent + trickling
        trickler = _Trickler(trickling)
        trickler.start()
        t0 = time.monotonic()
        while not _served(sock, 2.0):
            if time.monotonic() - t0 > BOUND_S:
                fired.append(f"daemon: {len(silent)} silent and {len(trickling)} trickling connections kept a "
                             f"real client out for over {BOUND_S:g}s")
                break
            time.sleep(0.25)
        r = idle.call("execute", {"code": "print(audit_idle_value)\n"})
        if not isinstance(r, dict) or "7331" not in str(r.get("stdout")):
            fired.append(f"daemon: an idle established client lost its session ({str(r)[:120]})")
    except (OSError, ValueError) as e:
        fired.append(f"daemon: the check failed ({type(e).__name__}: {e})")
    finally:
        if trickler is not None:
            trickler.stop.set()
        for s in held:
            s.close()
        if idle is not None:
            idle.close()
        _stop(proc)
        shutil.rmtree(d, True)
    if proc.returncode not in (0, -signal.SIGTERM):
        fired.append(f"daemon: the daemon exited with {proc.returncode}")
    return fired

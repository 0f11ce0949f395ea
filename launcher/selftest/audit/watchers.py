"""The process canaries: a signal recorder that jailed code must not touch, and a stall timer.

:class:`SignalRecorder` is a host process with the jail's uid (as root) that catches every
catchable signal; a signal it receives, being ptrace-attached or being stopped is an event (a
fired canary). :class:`StallTimer` measures the worst lateness of a 50 ms tick in the launcher:
a host made unresponsive by a payload shows there.
"""
from __future__ import annotations

import os
import pwd
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

RECORDER = r'''
import os, signal, sys, time
def h(n, f):
    os.write(1, b"SIG %d\n" % n)
for s in range(1, int(signal.SIGRTMAX) + 1):
    if s in (signal.SIGKILL, signal.SIGSTOP):
        continue
    try:
        signal.signal(s, h)
    except (OSError, ValueError, RuntimeError):
        pass
os.write(1, b"READY\n")
while True:
    time.sleep(3600)
'''


def uid_of(jail_uid) -> int:
    """The numeric uid of ``--jail-uid`` (a number or a user name; ``nobody`` when None)."""
    if jail_uid is None:
        jail_uid = "nobody"
    try:
        return int(jail_uid)
    except ValueError:
        return pwd.getpwnam(str(jail_uid)).pw_uid


class SignalRecorder:
    """The recorder process (:meth:`start`, :meth:`stop`); its events go to ``events``."""

    def __init__(self, jail_uid, events: list):
        self.jail_uid, self.events = jail_uid, events
        self.proc: subprocess.Popen | None = None
        self._stop = False

    @property
    def pid(self) -> int:
        return self.proc.pid

    def start(self) -> None:
        kw = {}
        if os.geteuid() == 0:
            uid = uid_of(self.jail_uid)
            kw = dict(user=uid, group=uid, extra_groups=[])
        self.proc = subprocess.Popen([sys.executable, "-c", RECORDER], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd="/",
                                     start_new_session=True, **kw)
        line = self.proc.stdout.readline()
        if line.strip() != b"READY":
            self.stop()
            raise RuntimeError("the signal recorder did not start")
        threading.Thread(target=self._pump, daemon=True, name="canary-recorder").start()
        threading.Thread(target=self._watch, daemon=True, name="canary-tracer").start()

    def _pump(self) -> None:
        for line in self.proc.stdout:
            self.events.append(f"signal:recorder received {line.decode(errors='replace').strip()}")

    def _watch(self) -> None:
        while not self._stop:
            try:
                st = Path(f"/proc/{self.proc.pid}/status").read_text()
                tracer = re.search(r"TracerPid:\s*(\d+)", st)
                state = re.search(r"State:\s*(\S)", st)
                if tracer and tracer.group(1) != "0":
                    self.events.append("signal:recorder was ptrace-attached")
                if state and state.group(1) in ("T", "t"):
                    self.events.append("signal:recorder was stopped")
            except OSError:
                pass
            time.sleep(0.01)

    def stop(self) -> None:
        self._stop = True
        if self.proc is None:
            return
        try:
            self.proc.kill()
            self.proc.wait(5)
        except Exception:
            pass


class StallTimer:
    """A thread ticking every 50 ms; ``worst_gap``: its worst lateness (s) since the last :meth:`reset`."""

    def __init__(self):
        self.worst_gap = 0.0
        self._stop = False

    def start(self) -> None:
        threading.Thread(target=self._tick, daemon=True, name="canary-timer").start()

    def _tick(self) -> None:
        last = time.monotonic()
        while not self._stop:
            time.sleep(0.05)
            now = time.monotonic()
            self.worst_gap = max(self.worst_gap, now - last - 0.05)
            last = now

    def reset(self) -> None:
        self.worst_gap = 0.0

    def stop(self) -> None:
        self._stop = True

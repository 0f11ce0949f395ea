#!/usr/bin/env python3
"""Time to free the daemon's slots from peers that never send, or stall mid-request (issue 20).

    .venv/bin/python bench/bench_daemon_slots.py            # 5 baseline rounds, 3 silent, 1 stalled
    .venv/bin/python bench/bench_daemon_slots.py --cap 20   # give up waiting after 20 s per round (the default)

One ``serve`` daemon (the default jail, ``max_sessions = 4``), the real daemon client (``mcp`` uses
it) retrying every 0.1 s until a first ``execute`` succeeds:

1. baseline: free slots; connect -> hello -> first ``execute`` answered;
2. silent: every slot first taken by a connection that connected and sends nothing; from then to
   the real client's first ``execute`` answered [goal: within the handshake bound];
3. stalled: every slot taken by a client that said hello and then sent half a request; from then
   to the first ``execute`` answered [goal: within the frame bound].

Every round starts after ``PAUSE_S`` idle (the launcher's warm spare session is ready again, in
every scenario alike). Ratios are against the baseline of the same run. A round that reaches ``--cap`` is reported as
never freed (the daemon before this change: connections held their slot until they hung up).
Nothing asserts. Runs in well under 2 minutes.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from launcher.daemon.client import DaemonBackend  # noqa: E402

SLOTS = 4
PAUSE_S = 1.0  # before every round: the launcher's warm spare session is ready again, in every scenario alike
HEADER = struct.Struct(">I")


def start_daemon(d: Path) -> subprocess.Popen:
    prof = d / "bench_slots.toml"
    prof.write_text(f'extends = "{REPO / "profiles" / "default.toml"}"\nname = "bench_slots"\n'
                    f"[limits]\nmax_sessions = {SLOTS}\n")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    log = open(d / "daemon.log", "ab")
    p = subprocess.Popen([sys.executable, "-m", "launcher", "serve", "--socket", str(d / "d.sock"),
                          "--profile", str(prof), "--output-dir", str(d / "out")], stdin=subprocess.DEVNULL,
                         stdout=log, stderr=log, cwd=str(REPO), env=env)
    log.close()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if p.poll() is not None:
            raise SystemExit(f"the daemon exited: {(d / 'daemon.log').read_text()[-2000:]}")
        try:
            DaemonBackend(str(d / "d.sock"), hello_timeout=60).close()
            return p
        except Exception:  # noqa: BLE001 - not up yet
            time.sleep(0.1)
    p.kill()
    raise SystemExit("the daemon never answered")


def raw(sock: Path) -> socket.socket:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(str(sock))
    return s


def frame(obj) -> bytes:
    body = json.dumps(obj).encode()
    return HEADER.pack(len(body)) + body


def first_execute(sock: Path, cap: float) -> float | None:
    """Seconds from now to a real client's first successful execute (retrying), None at the cap."""
    start = time.monotonic()
    while time.monotonic() - start < cap:
        try:
            b = DaemonBackend(str(sock), hello_timeout=cap)
        except Exception:  # noqa: BLE001 - refused: the slots are full
            time.sleep(0.1)
            continue
        try:
            if b.call("execute", {"code": "x = 1"}).get("ok"):
                return time.monotonic() - start
        finally:
            b.close()
        time.sleep(0.1)
    return None


def hold(sock: Path, how: str) -> list[socket.socket]:
    """Take every slot (as far as the daemon lets a peer take one) with a peer that stops sending."""
    peers = []
    for _ in range(SLOTS):
        s = raw(sock)
        if how == "stalled":
            s.sendall(frame({"tool": "_hello", "args": {}}))
            s.settimeout(30)
            s.recv(65536)  # the greeting: this peer is admitted and holds a slot
            s.sendall(frame({"tool": "execute", "args": {"code": "y = 2"}})[:7])
        peers.append(s)
    return peers


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5, help="baseline rounds (silent: 3, stalled: 1)")
    ap.add_argument("--cap", type=float, default=20.0, help="seconds a round may wait before it counts as never")
    a = ap.parse_args()
    d = Path(tempfile.mkdtemp(prefix="b123d-bench-slots-", dir="/tmp"))
    p = start_daemon(d)
    sock = d / "d.sock"
    try:
        b = DaemonBackend(str(sock))
        bounds = {k: b.info.get(k) for k in ("handshake_s", "frame_s")}
        b.close()
        base = []
        for _ in range(a.rounds):
            time.sleep(PAUSE_S)
            base.append(first_execute(sock, a.cap))
        runs = {}
        for how, n in (("silent", 3), ("stalled", 1)):
            runs[how] = []
            for _ in range(n):
                time.sleep(PAUSE_S)
                peers = hold(sock, how)
                try:
                    runs[how].append(first_execute(sock, a.cap))
                finally:
                    for s in peers:
                        s.close()
    finally:
        p.terminate()
        p.wait(30)
        shutil.rmtree(d, ignore_errors=True)
    ok = [t for t in base if t is not None]
    b50 = statistics.median(ok) if ok else float("nan")
    print(f"daemon bounds from its hello: handshake_s={bounds['handshake_s']} frame_s={bounds['frame_s']}; "
          f"{SLOTS} slots; cap {a.cap:g} s per round")
    print("| measure | p50 | ratio to baseline |\n|---|---|---|")
    print(f"| baseline: free slots, connect -> first execute ({len(ok)} rounds) | {b50 * 1e3:.0f} ms | 1.0 |")
    for how, label in (("silent", "all slots held by silent peers"), ("stalled", "all slots held by peers stalled "
                                                                              "mid-request")):
        got = [t for t in runs[how] if t is not None]
        never = len(runs[how]) - len(got)
        if not got:
            print(f"| {label} -> first execute | never (capped at {a.cap:g} s, {never} rounds) | - |")
            continue
        m = statistics.median(got)
        extra = f", {never} never" if never else ""
        print(f"| {label} -> first execute ({len(got)} rounds{extra}) | {m * 1e3:.0f} ms | {m / b50:.1f} |")


if __name__ == "__main__":
    main()

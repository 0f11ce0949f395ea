"""Helpers for tests/faults (a module of its own: `conftest` names clash across test dirs)."""
from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
PROFILES = REPO / "tests" / "profiles"

if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))


def profile_path(name: str) -> str:
    return str(PROFILES / f"{name}.toml")


# ----------------------------------------------------------------- /proc helpers
def proc_stat(pid: int) -> tuple[str, int] | None:
    """(state, ppid) of a process, None when it is gone."""
    from testlib import proc_stat as full
    st = full(pid)
    return None if st is None else st[:2]


def descendants(pid: int) -> list[int]:
    from launcher.contain.procs import descendants as d
    return d(pid)


def zombies_under(pid: int) -> list[tuple[int, int]]:
    """(zombie pid, its parent) for every zombie among ``pid``'s descendants."""
    out = []
    for p in descendants(pid):
        st = proc_stat(p)
        if st and st[0] == "Z":
            out.append((p, st[1]))
    return out


def pss_bytes(pid: int) -> int:
    """Pss_Anon + Pss_Shmem of ``pid`` in bytes from /proc/PID/smaps_rollup, read by the tests
    themselves (not through launcher/watchdog.py, which they check); 0 once it is gone."""
    total = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                k, _, rest = line.partition(":")
                if k in ("Pss_Anon", "Pss_Shmem"):
                    total += int(rest.split()[0]) * 1024
    except (OSError, ValueError, IndexError):
        return 0
    return total


def fd_count(pid: int | None = None) -> int:
    return len(os.listdir(f"/proc/{pid or os.getpid()}/fd"))


def thread_count(pid: int | None = None) -> int:
    return len(os.listdir(f"/proc/{pid or os.getpid()}/task"))


def rss_kb(pid: int | None = None) -> int:
    with open(f"/proc/{pid or os.getpid()}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def direct_children(pid: int | None = None) -> list[int]:
    from launcher.contain.procs import children_of
    return children_of(pid or os.getpid())


class Stdio:
    """A raw JSON-RPC client of ``python -m launcher mcp ...`` over its stdio (newline-delimited JSON)."""

    def __init__(self, tmp, args=None):
        args = args or ["--embedded", "--profile", profile_path("faults"), "--output-dir", str(tmp)]
        self.p = subprocess.Popen(
            [sys.executable, "-m", "launcher", "mcp", *args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open(tmp / "stderr.log", "ab"), cwd=str(REPO))
        self.buf = b""
        self.ids = iter(range(1000, 10**9))

    def send_raw(self, line: bytes) -> None:
        self.p.stdin.write(line + b"\n")
        self.p.stdin.flush()

    def send(self, obj) -> None:
        self.send_raw(json.dumps(obj).encode())

    def recv(self, timeout: float) -> dict | None:
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            r, _, _ = select.select([self.p.stdout], [], [], left)
            if not r:
                return None
            chunk = os.read(self.p.stdout.fileno(), 1 << 20)
            if not chunk:
                raise EOFError("the MCP server closed its stdout (it died)")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def request(self, method: str, params=None, timeout: float = 60) -> dict:
        rid = next(self.ids)
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return self.wait_id(rid, timeout)

    def wait_id(self, rid, timeout: float) -> dict | None:
        deadline = time.monotonic() + timeout
        while True:
            m = self.recv(max(0.0, deadline - time.monotonic()))
            if m is None:
                return None
            if m.get("id") == rid:
                return m

    def drain(self, timeout: float = 0.3) -> list[dict]:
        out = []
        while True:
            m = self.recv(timeout)
            if m is None:
                return out
            out.append(m)

    def alive_and_answering(self) -> bool:
        r = self.request("ping", timeout=20)
        return r is not None and r.get("result") == {}

    def close(self):
        try:
            self.p.stdin.close()
        except OSError:
            pass
        try:
            self.p.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()

    def initialize(self, timeout: float = 180) -> dict:
        r = self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                        "clientInfo": {"name": "faults", "version": "1"}}, timeout=timeout)
        assert r and "result" in r, r
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return r

    def tool(self, name: str, args: dict, timeout: float = 60) -> str | None:
        """The text a tool call returns (None when no response came)."""
        r = self.request("tools/call", {"name": name, "arguments": args}, timeout=timeout)
        if r is None:
            return None
        if "error" in r:
            return "JSONRPC-ERROR " + json.dumps(r["error"])
        return "\n".join(c.get("text", "") for c in r["result"].get("content", []))

"""The reliability tests' (tests/faults) profiles and a raw JSON-RPC client of ``launcher mcp``.

:func:`profile_path` resolves a test profile by name in tests/profiles; :func:`launcher_fixture`
makes a test module's ``launcher`` fixture on one. :class:`Stdio` speaks newline-delimited JSON-RPC to ``python -m launcher mcp``
byte by byte (no SDK), so tests can send what no well-behaved client would.
"""
from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time

from tests.helpers.cli import REPO, TEST_PROFILES

FAULTS_DIR = REPO / "tests" / "faults"


def profile_path(name: str) -> str:
    """The .toml file of test profile ``name`` (tests/profiles)."""
    return str(TEST_PROFILES / f"{name}.toml")


def launcher_fixture(profile: str):
    """A module-scoped ``launcher`` fixture: a Launcher on test profile ``profile`` with an output
    directory of its own (``launcher = launcher_fixture("faults_os_only")`` in a test module)."""
    import pytest

    @pytest.fixture(scope="module", name="launcher")
    def _launcher(tmp_path_factory):
        from launcher.core import Launcher
        from tests.helpers import zygotes
        prof = profile_path(profile)
        with Launcher(prof, output_dir=tmp_path_factory.mktemp("out"), zygote=zygotes.shared(prof)) as L:
            yield L

    return _launcher


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

#!/usr/bin/env python3
"""The launcher under a hostile session: its peak RSS, and what the reply checks cost (issue 11).

    python bench/bench_hostile.py            # both parts
    python bench/bench_hostile.py --quick    # fewer iterations / a smaller flood

1. Peak RSS (:func:`peak_rss`): a real MCP stdio server with the OS layers only, driven by the
   ``mcp`` SDK client through a hostile sequence (:func:`hostile_sequence`); the server's
   ``VmHWM`` is read from /proc. Goal <= 256 MB.
2. Cost of the checks (:func:`check_cost`): in-process, decoding one realistic reply and turning
   it into what the launcher keeps, today's code vs the code before issue 11. p50 in
   microseconds. Goal: the added cost stays within +0.5 ms per call.

Nothing is asserted: the figures and the goals are printed.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import struct
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))
PROFILE = REPO / "tests" / "profiles" / "faults_os_only.toml"

RAW = r'''
import os, struct
def reply(text):
    body = text.encode() if isinstance(text, str) else text
    payload = struct.pack(">I", len(body)) + body
    parts = [payload[i:i + 32768] for i in range(0, len(payload), 32768)] or [b""]
    for i, p in enumerate(parts):
        os.write(3, (b"M" if i < len(parts) - 1 else b"E") + p)
'''

DEAF = r'''
import os, socket, time, jail.wire.protocol as P
_me = os.getpid()
def _deafen(module, name):
    real = getattr(module, name)
    def wrapper(*a, **k):
        if os.getpid() == _me:
            return real(*a, **k)
        time.sleep(10 ** 6)
    setattr(module, name, wrapper)
_deafen(P, "recv_simple")
_deafen(socket.socket, "recv")
'''


def flood(senders: int, mb: int) -> str:
    return ("import os, time\nchunk = b'M' + b'x' * 32000\nkids = []\n"
            f"for i in range({senders}):\n    pid = os.fork()\n    if pid == 0:\n"
            f"        for j in range({mb * 1000 // 32}):\n            os.write(3, chunk)\n"
            "        time.sleep(0.5)\n        os._exit(0)\n    kids.append(pid)\n"
            "for k in kids:\n    os.waitpid(k, 0)\nraise ValueError('flood sent')")


def hostile_sequence(quick: bool) -> list[tuple[str, str]]:
    """Eight processes each sending an unfinished ~60 MB message, an 80,000-item objects list, a
    deeply nested reply, a 100,000-digit integer, 40,000 escaped control characters, lone
    surrogates, and a session whose nexts stop reading (the socket fills)."""
    return [
        ("8 senders x 60 MB unfinished" if not quick else "8 senders x 20 MB unfinished",
         flood(8, 20 if quick else 60)),
        ("80,000-item objects list",
         RAW + "reply('{\"t\":\"result\",\"ok\":true,\"objects\":[' + ','.join(['{}'] * 80000) + ']}')"),
        ("100,000-deep nesting",
         RAW + "reply('{\"t\":\"result\",\"ok\":true,\"objects\":' + '[' * 100000 + ']' * 100000 + '}')\n"
               "import time\ntime.sleep(30)"),
        ("100,000-digit integer",
         RAW + "reply('{\"t\":\"result\",\"ok\":true,\"duration_ms\":' + '9' * 100000 + '}')\n"
               "import time\ntime.sleep(30)"),
        ("40,000 escaped control characters",
         RAW + "reply('{\"t\":\"result\",\"ok\":true,\"stdout\":\"' + '\\\\u001b' * 40000 + '\"}')"),
        ("lone surrogates", RAW + "reply('{\"t\":\"result\",\"ok\":true,\"stdout\":\"\\\\ud800\\\\udfff\"}')"),
        ("nexts stop reading (socket fills)", DEAF),
        ("  request to a deaf next (200 KB)", "x = 1  # " + "a" * 200_000),
        ("  request to a deaf next (200 KB)", "x = 1  # " + "a" * 200_000),
        ("  request to a deaf next (200 KB)", "x = 1  # " + "a" * 200_000),
        ("  restore the snapshot taken before", None),
        ("  execute after the restore", "print(n)"),
    ]


def _status(pid: int, key: str) -> int:
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return 0


def _server_pid() -> int:
    from launcher.contain.procs import descendants
    for p in descendants(os.getpid()):
        try:
            argv = open(f"/proc/{p}/cmdline", "rb").read().split(b"\0")
        except OSError:
            continue
        if b"launcher" in argv and b"mcp" in argv:
            return p
    raise SystemExit("the MCP server process was not found")


def peak_rss(quick: bool) -> None:
    """``python -m launcher mcp --embedded`` on ``faults_os_only.toml`` (the OS layers only, so user
    code can write raw datagrams on its session socket), driven by the ``mcp`` SDK client through
    :func:`hostile_sequence`; the server's ``VmHWM`` (peak RSS, reset with ``/proc/PID/clear_refs``
    after start-up) is read from /proc."""
    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def main():
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(REPO)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
        out = HERE / "out" / "hostile"
        out.mkdir(parents=True, exist_ok=True)
        params = StdioServerParameters(command=sys.executable, cwd=str(REPO), env=env,
                                       args=["-m", "launcher", "mcp", "--embedded", "--profile", str(PROFILE),
                                             "--output-dir", str(out)])
        with open(out / "server-stderr.log", "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as s:
                    await s.initialize()
                    await s.call_tool("execute", {"code": "n = 41"})
                    await s.call_tool("save_snapshot", {"name": "good"})
                    pid = _server_pid()
                    base = _status(pid, "VmRSS")
                    with open(f"/proc/{pid}/clear_refs", "w") as f:
                        f.write("5")
                    print(f"MCP server pid {pid}: RSS after start-up {base / 1024:.0f} MB")
                    for label, code in hostile_sequence(quick):
                        t0 = time.monotonic()
                        if code is None:
                            res = await s.call_tool("restore_snapshot", {"name": "good"})
                        else:
                            res = await s.call_tool("execute", {"code": code})
                        text = " ".join(c.text for c in res.content if c.type == "text")
                        first = text.splitlines()[0][:70] if text else "(empty)"
                        print(f"  {label:<38} {time.monotonic() - t0:6.2f} s  peak {_status(pid, 'VmHWM') / 1024:5.0f} MB"
                              f"  reply {len(text):>6} chars: {first}")
                    await s.send_ping()
                    peak = _status(pid, "VmHWM")
        print(f"peak RSS of the launcher under the hostile session: {peak / 1024:.0f} MB (goal <= 256 MB)")

    anyio.run(main)


# ------------------------------------------------------------------ cost of the checks
def _old_validate(msg: dict) -> dict:
    """The launcher's reply handling before issue 11 (then launcher/session.py's _validate_result)."""
    ok = msg.get("ok") is True
    out = {
        "ok": ok,
        "stdout": msg.get("stdout") if isinstance(msg.get("stdout"), str) else "",
        "stderr": msg.get("stderr") if isinstance(msg.get("stderr"), str) else "",
        "truncated": bool(msg.get("truncated", False)),
        "objects": [o for o in msg.get("objects", []) if isinstance(o, dict)][:500]
        if isinstance(msg.get("objects"), list) else [],
        "error": None,
        "duration_ms": msg.get("duration_ms") if isinstance(msg.get("duration_ms"), (int, float)) else None,
    }
    return out


def _old_decode(payload: bytes):
    (n,) = struct.unpack(">I", payload[:4])
    return json.loads(payload[4:4 + n].decode()), payload[4 + n:]


def _shape(i: int) -> dict:
    return {"name": f"part{i}", "type": "Part", "kind": "shape", "volume": 44989.38 + i, "valid": True,
            "bbox": {"min": [-40.0, -30.0, -5.0], "max": [40.0, 30.0, 5.0], "size": [80.0, 60.0, 10.0]},
            "counts": {"solids": 1, "faces": 10, "edges": 24}}


def realistic_replies() -> dict[str, dict]:
    return {
        "trivial": {"t": "result", "ok": True, "stdout": "", "stderr": "", "truncated": False, "error": None,
                    "objects": [{"name": "x", "type": "int", "kind": "number", "repr": "1"}], "duration_ms": 0.4},
        "typical": {"t": "result", "ok": True, "stdout": "faces=10 volume=44989.380\n" * 8, "stderr": "",
                    "truncated": False, "error": None, "duration_ms": 12.5,
                    "objects": [_shape(i) for i in range(5)]},
        "heavy": {"t": "result", "ok": True, "stdout": ("x" * 99 + "\n") * 655, "stderr": "", "truncated": True,
                  "error": None, "duration_ms": 800.0,
                  "objects": [_shape(i) for i in range(199)] + [{"name": "...", "type": "", "kind": "omitted",
                                                                  "count": 50}]},
    }


def check_cost(quick: bool) -> None:
    """Realistic replies (a trivial execute, a typical one with 5 shape summaries and some output,
    a heavy one with 200 summaries and 64 KiB of output): today's ``jail.wire.protocol.decode``
    (strict) + ``launcher.replies.validate.result`` vs plain ``json.loads`` + the old field
    picking (:func:`_old_validate`). p50 in microseconds."""
    from jail.wire import protocol
    from launcher.replies import validate as replies
    from jail.wire.profile import Limits
    lim = Limits()
    n = 300 if quick else 3000
    print(f"\nper-reply decode + validation + sanitising, p50 over {n} runs (µs):")
    print(f"  {'reply':<8} {'JSON bytes':>10} {'before':>9} {'after':>9} {'added':>9}")
    worst = 0.0
    for name, msg in realistic_replies().items():
        frames = protocol.encode(msg)
        payload = b"".join(f[1:] for f in frames)

        def before():
            m, _ = _old_decode(payload)
            return _old_validate(m)

        def after():
            m, _ = protocol.decode(payload, max(lim.max_result_bytes, 1 << 20))
            return replies.result(m, max_output_bytes=lim.max_output_bytes, max_result_bytes=lim.max_result_bytes)

        t_b, t_a = [], []
        for _ in range(n):
            t0 = time.perf_counter()
            before()
            t1 = time.perf_counter()
            after()
            t2 = time.perf_counter()
            t_b.append((t1 - t0) * 1e6)
            t_a.append((t2 - t1) * 1e6)
        b, a = statistics.median(t_b), statistics.median(t_a)
        worst = max(worst, a - b)
        print(f"  {name:<8} {len(payload):>10} {b:>9.1f} {a:>9.1f} {a - b:>+9.1f}")
    print(f"largest added cost per reply: {worst / 1000:.3f} ms (goal: within +0.5 ms)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--no-server", action="store_true", help="only the in-process cost of the checks")
    args = ap.parse_args()
    if not args.no_server:
        peak_rss(args.quick)
    check_cost(args.quick)


if __name__ == "__main__":
    main()

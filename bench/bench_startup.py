#!/usr/bin/env python3
"""MCP server start-up and cancellation, through the real MCP SDK client (issue 12).

    python bench/bench_startup.py            # 7 rounds each
    python bench/bench_startup.py --rounds 15

1. spawn -> ``tools/list`` answered [goal <= 1 s p50]: a fresh ``build123d-launcher mcp --embedded``
   process per round (``initialize`` + ``tools/list``; the zygote warms in the background), and, in
   the same round, spawn -> first ``execute`` answered (which waits for the zygote).
2. cancel -> next call answered [goal < 2 s]: ``while True: pass`` is started (profile default with a
   300 s limit, so only the cancel can stop it), and once its process burns CPU the client cancels the
   request (the SDK sends ``notifications/cancelled``); timed from the cancel to the answer of the next
   ``execute``.

Nothing asserts; the goals are shown next to the figures.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from launcher.contain.procs import descendants  # noqa: E402


def params(profile: str, out: Path) -> StdioServerParameters:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO)
    return StdioServerParameters(command=sys.executable,
                                 args=["-m", "launcher", "mcp", "--embedded", "--profile", profile,
                                       "--output-dir", str(out)], env=env, cwd=str(REPO))


def cpu_ticks(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat") as f:
            rest = f.read().rsplit(")", 1)[1].split()
        return int(rest[11]) + int(rest[12])
    except (OSError, IndexError, ValueError):
        return 0


def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


async def one_start(tmp: Path) -> tuple[float, float]:
    t0 = time.monotonic()
    with open(tmp / "start-stderr.log", "a") as errlog:
        async with stdio_client(params("default", tmp / "out"), errlog=errlog) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                await s.list_tools()
                t_list = time.monotonic() - t0
                r = await s.call_tool("execute", {"code": "x = 1"})
                assert not r.is_error, r
                t_exec = time.monotonic() - t0
    return t_list, t_exec


async def cancels(tmp: Path, rounds: int) -> list[float]:
    prof = tmp / "long.toml"
    prof.write_text('extends = "default"\nname = "long_timeout"\n[limits]\ntimeout_s = 300\n')
    out = []
    kids_before = set(os.listdir("/proc"))
    with open(tmp / "cancel-stderr.log", "w") as errlog:
        async with stdio_client(params(str(prof), tmp / "out"), errlog=errlog) as (read, write):
            async with ClientSession(read, write) as s:
                await s.initialize()
                r = await s.call_tool("execute", {"code": "kept = 1"})
                assert not r.is_error, r
                server = [int(p) for p in set(os.listdir("/proc")) - kids_before if p.isdigit()
                          and "launcher" in _cmdline(int(p)) and " mcp " in _cmdline(int(p))][0]
                for _ in range(rounds):
                    before = set(descendants(server))
                    scope = anyio.CancelScope()

                    async def run():
                        with scope:
                            await s.call_tool("execute", {"code": "while True: pass"})

                    async with anyio.create_task_group() as tg:
                        tg.start_soon(run)
                        deadline = time.monotonic() + 60
                        while time.monotonic() < deadline:
                            if [p for p in set(descendants(server)) - before if cpu_ticks(p) >= 10]:
                                break
                            await anyio.sleep(0.01)
                        t0 = time.monotonic()
                        scope.cancel()
                    r = await s.call_tool("execute", {"code": "print(kept)"})
                    out.append(time.monotonic() - t0)
                    assert not r.is_error and "1" in r.content[0].text, r
    return out


def _cmdline(pid: int) -> str:
    try:
        return " " + open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        starts = [anyio.run(one_start, tmp) for _ in range(a.rounds)]
        lists = [s[0] for s in starts]
        execs = [s[1] for s in starts]
        cs = anyio.run(cancels, tmp, a.rounds)
    print(f"## MCP start-up and cancellation ({a.rounds} rounds, {os.cpu_count()} CPUs)\n")
    print("| figure | p50 | p90 | max | goal |")
    print("|---|---|---|---|---|")
    for name, xs, goal in (("spawn -> tools/list answered", lists, "<= 1 s p50"),
                           ("spawn -> first execute answered (waits for the zygote)", execs, "-"),
                           ("cancel -> next execute answered", cs, "< 2 s")):
        print(f"| {name} | {statistics.median(xs) * 1000:.0f} ms | {pct(xs, 0.9) * 1000:.0f} ms | "
              f"{max(xs) * 1000:.0f} ms | {goal} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

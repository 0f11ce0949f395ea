#!/usr/bin/env python3
"""The launcher's peak memory with N clients importing a file at the cap at once (issue 20).

    python bench/bench_import_memory.py               # N = 1, 2, 4, 6
    python bench/bench_import_memory.py --ns 1 6

For each N a fresh launcher process (the default profile, ``--input-dir`` a temporary directory)
starts N sessions, one ``ToolSet`` per client in its own thread (as the daemon serves its
clients), then all N call ``import_file`` on the same file at once. The file is a binary STL of
exactly ``max_input_bytes`` (32 MiB by default) with more triangles than the reader takes, so the
jail refuses it as soon as it has it: what is measured is the launcher's part (read, send, reply),
not a parse. Printed per N: the launcher process's resident memory before the imports, its peak
during them (``VmHWM`` after resetting it through ``/proc/self/clear_refs``), the growth, and the
growth's ratio to N = 1's in the same run (goal: bounded, independent of N), plus the wall time.
Nothing is asserted.
"""
from __future__ import annotations

import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

MiB = 1024 * 1024


def _status(key: str) -> int:
    for line in open("/proc/self/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    return 0


def _stl_at(size: int) -> bytes:
    """A binary STL of at most ``size`` bytes whose triangle count matches its size."""
    n = (size - 84) // 50
    tri = struct.pack("<12fH", 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0)
    return b"\0" * 80 + struct.pack("<I", n) + tri * n


def child(n: int, indir: str) -> dict:
    """One launcher process: N sessions import ``cap.stl`` at once; its memory figures."""
    import gc
    from launcher.core import Launcher
    from launcher.profile import load_profile
    from launcher.tools import ToolSet
    with tempfile.TemporaryDirectory() as out, Launcher(load_profile("default"), output_dir=out,
                                                        input_dir=indir) as launcher:
        clients = [ToolSet(launcher) for _ in range(n)]
        for c in clients:  # each client's session started, its next ready
            assert c.call("execute", {"code": "x = 1"}).get("ok"), "session did not start"
        gc.collect()
        rss = _status("VmRSS")
        try:
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")  # VmHWM := VmRSS
            reset = True
        except OSError:
            reset = False
        barrier = threading.Barrier(n)
        replies: list = [None] * n

        def run(i: int) -> None:
            barrier.wait()
            replies[i] = clients[i].call("import_file", {"filename": "cap.stl", "name": "m"})

        t0 = time.monotonic()
        threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.monotonic() - t0
        hwm = _status("VmHWM")
        says = [str((r.get("error") or {}).get("message") if isinstance(r.get("error"), dict) else r.get("error"))
                for r in replies]
        refused = sum("triangles" in s for s in says)
        for c in clients:
            c.close()
    return {"n": n, "rss": rss, "hwm": hwm, "reset": reset, "wall_s": wall, "refused_by_parser": refused,
            "other": [s[:160] for s in says if "triangles" not in s][:2]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ns", type=int, nargs="*", default=[1, 2, 4, 6])
    ap.add_argument("--child", type=int)
    ap.add_argument("--indir")
    a = ap.parse_args()
    if a.child:
        print(json.dumps(child(a.child, a.indir)))
        return
    from launcher.profile import load_profile
    cap = load_profile("default").limits.max_input_bytes
    with tempfile.TemporaryDirectory() as indir:
        data = _stl_at(cap)
        Path(indir, "cap.stl").write_bytes(data)
        os.chmod(indir, 0o755)
        rows = []
        for n in a.ns:
            p = subprocess.run([sys.executable, __file__, "--child", str(n), "--indir", indir], cwd=str(REPO),
                               capture_output=True, text=True, timeout=600)
            if p.returncode:
                sys.exit(f"N={n} failed:\n{p.stderr[-3000:]}")
            rows.append(json.loads(p.stdout.strip().splitlines()[-1]))
    git = subprocess.run(["git", "-C", str(REPO), "log", "-1", "--format=%h"], capture_output=True, text=True)
    print(f"## import_file memory: launcher process, file of {len(data)} bytes (cap {cap}), "
          f"ToolSets in threads of one launcher, commit {git.stdout.strip()}\n")
    print("| N clients | RSS before (MiB) | peak VmHWM (MiB) | growth (MiB) | growth / N=1 | wall (s) "
          "| refused by parser |")
    print("|---|---|---|---|---|---|---|")
    base = None
    for r in rows:
        growth = (r["hwm"] - r["rss"]) / MiB
        base = base or max(growth, 1e-9)
        print(f"| {r['n']} | {r['rss'] / MiB:.0f} | {r['hwm'] / MiB:.0f} | {growth:.0f} | {growth / base:.2f} | "
              f"{r['wall_s']:.1f} | {r['refused_by_parser']}/{r['n']} |"
              + ("" if r["reset"] else " (VmHWM not reset)"))
        for s in r["other"]:
            print(f"|   | other reply: {s} |")


if __name__ == "__main__":
    main()

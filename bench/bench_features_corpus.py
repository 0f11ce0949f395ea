#!/usr/bin/env python3
"""What ``features`` finds on build123d's own examples and docs code (issue 22): a read-out to review.

    python bench/bench_features_corpus.py                 # every file (fetched once, as bench_corpus does)
    python bench/bench_features_corpus.py --only ttt      # files whose path contains "ttt"
    python bench/bench_features_corpus.py --json out.json

Each ``.py`` file of the build123d sdist's ``examples/`` and ``docs/`` (``bench_corpus.fetch``) runs
in a child forked from this process, from a copy of its directory, with the no-op ``ocp_vscode``
stub; then, in that child, ``features`` (``jail.cad.features``, the code the jail runs, here without
the jail) reads the file's largest solid: its top-level shapes and builders' parts, by volume.
Printed, one line per file: the object, what was found per kind (holes with diameter, through or
depth, counterbore or countersink; counts for the others; ``faceted``), and the wall time of the
call; then the totals. A file that fails in plain Python, has no solid or takes longer than
``--timeout`` says so. It is a read-out for a human who knows the parts, to catch what features
misreads (a wrong "through", a drafted wall read as a chamfer): nothing is asserted.
"""
from __future__ import annotations

import argparse
import json
import os
import select
import shutil
import signal
import statistics
import sys
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from bench_corpus import DEFAULT_CACHE, OCP_VSCODE_STUB, corpus_files, fetch, installed_version, stage  # noqa: E402

from jail.cad.features import KINDS  # noqa: E402 - the kinds the jail reads


def largest_solid(ns: dict):
    """(name, shape, volume) of the namespace's largest solid (a builder counts as its part), or None."""
    from build123d import Shape
    best = None
    for name, value in list(ns.items()):
        if name.startswith("_"):
            continue
        if not isinstance(value, Shape) and type(value).__name__.startswith("Build") and hasattr(value, "part"):
            try:
                value = value.part
            except Exception:  # noqa: BLE001 - a builder with nothing in it
                continue
        if not isinstance(value, Shape):
            continue
        try:
            vol = sum(s.volume for s in value.solids())
        except Exception:  # noqa: BLE001
            continue
        if vol > 0 and (best is None or vol > best[2]):
            best = (name, value, vol)
    return best


def _hole(h: dict) -> str:
    s = f"d{h['diameter']:.4g} " + ("thru" if h["through"] else f"depth {h['depth']:.4g}")
    if h["counterbore"]:
        s += f" cb d{h['counterbore']['diameter']:.4g} x {h['counterbore']['depth']:.4g}"
    for b in h.get("bores", ()):
        s += f" bore d{b['diameter']:.4g} {b['start']:.4g}-{b['end']:.4g}"
    if h["countersink"]:
        s += f" csk d{h['countersink']['diameter']:.4g} {h['countersink']['angle']:.4g}°"
    return s


def read_one(f: Path, stub: Path) -> dict:
    """In a forked child: run ``f`` from a copy of its directory, then ``features`` on its largest solid."""
    tmp = Path(tempfile.mkdtemp(prefix="features-corpus-"))
    try:
        stage(f, tmp)
        return _read(f, tmp, stub)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _read(f: Path, tmp: Path, stub: Path) -> dict:
    import runpy
    from jail.cad import features
    os.chdir(tmp)
    sys.path[:0] = [str(stub), str(tmp)]
    sys.argv = [f.name]
    fd = os.open(os.devnull, os.O_WRONLY)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    try:
        ns = runpy.run_path(f.name, run_name="__main__")
    except BaseException as e:  # noqa: BLE001
        return {"error": f"runs: {type(e).__name__}: {str(e)[:120]}"}
    best = largest_solid(ns)
    if best is None:
        return {"error": "no solid"}
    name, shape, vol = best
    t = time.perf_counter()
    try:
        d = features.features({name: shape}, name)
    except BaseException as e:  # noqa: BLE001
        return {"object": name, "error": f"features: {type(e).__name__}: {str(e)[:160]}"}
    ms = (time.perf_counter() - t) * 1000
    found = {k: len(d[k]) for k in KINDS if d[k]}
    return {"object": name, "volume": vol, "faces": len(shape.faces()), "ms": round(ms, 1), "found": found,
            "holes": [_hole(h) for h in d["holes"]], "faceted": d["faceted"],
            "pockets": [p["shape"] for p in d["pockets"]],
            "fillets": [f"r{g['radius']:.4g}x{g['count']}" for g in d["fillets"]],
            "chamfers": [f"{g['size']:.4g}" + (f"x{g['size2']:.4g}" if g["size2"] else "") + f" x{g['count']}"
                         for g in d["chamfers"]]}


def run(f: Path, stub: Path, timeout: float) -> dict:
    return run_forked(lambda: read_one(f, stub), timeout)


def run_forked(read, timeout: float) -> dict:
    """``read()`` (a JSON-able dict) in a forked child, killed past ``timeout`` seconds; its error
    as ``{"error": ...}``."""
    r, w = os.pipe()
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            out = read()
        except BaseException as e:  # noqa: BLE001
            out = {"error": "".join(traceback.format_exception_only(e)).strip()[:200]}
        os.write(w, json.dumps(out).encode())
        os._exit(0)
    os.close(w)
    data, deadline = b"", time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([r], [], [], left)[0]:
            os.kill(pid, signal.SIGKILL)
            data = json.dumps({"error": f"timeout ({timeout:g} s)"}).encode()
            break
        chunk = os.read(r, 65536)
        if not chunk:
            break
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    try:
        return json.loads(data or b'{"error": "the child died"}')
    except ValueError:
        return {"error": "unreadable result"}


def line(rel: str, r: dict) -> str:
    if "error" in r:
        return f"| {rel} | {r.get('object', '')} | {r['error']} | |"
    parts = []
    if r["holes"]:
        parts.append("holes: " + ", ".join(r["holes"][:6]) + (" ..." if len(r["holes"]) > 6 else ""))
    for k, n in r["found"].items():
        if k == "pockets":  # by shape: a sector read as one, or no longer, shows
            parts.append("pockets " + ", ".join(f"{s} x{c}" for s, c in sorted(Counter(r["pockets"]).items())))
        elif k not in ("holes", "fillets", "chamfers"):
            parts.append(f"{k} {n}")
    if r["fillets"]:
        parts.append("fillets " + ", ".join(r["fillets"][:6]))
    if r["chamfers"]:
        parts.append("chamfers " + ", ".join(r["chamfers"][:6]))
    if r["faceted"]:
        parts.append(f"faceted {r['faceted']['triangles']}/{r['faceted']['faces']}")
    return f"| {rel} | {r['object']} ({r['faces']} faces) | {'; '.join(parts) or 'nothing'} | {r['ms']} |"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    ap.add_argument("--only")
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    import build123d  # noqa: F401 - paid once, inherited by every fork
    from jail.cad import features  # noqa: F401
    root = fetch(args.cache, installed_version())
    files = corpus_files(root, args.only)
    results: dict[str, dict] = {}
    print(f"build123d {installed_version()}: {len(files)} files\n")
    print("| file | largest solid | features found | ms |\n|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="features-corpus-stub-") as stub:
        Path(stub, "ocp_vscode.py").write_text(OCP_VSCODE_STUB)
        for f in files:
            rel = str(f.relative_to(root))
            results[rel] = run(f, Path(stub), args.timeout)
            print(line(rel, results[rel]), flush=True)
    read = [r for r in results.values() if "error" not in r]
    total = {k: sum(r["found"].get(k, 0) for r in read) for k in KINDS}
    ms = [r["ms"] for r in read]
    print(f"\n{len(read)} of {len(files)} files have a solid features read; found: "
          + ", ".join(f"{n} {k}" for k, n in total.items() if n)
          + f"; faceted: {sum(1 for r in read if r['faceted'])}"
          + (f"; features took p50 {statistics.median(ms):.0f} ms, max {max(ms):.0f} ms" if ms else ""))
    failed = [r for r in results.values() if "error" in r and r["error"].startswith("features")]
    print(f"features raised on {len(failed)} files")
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()

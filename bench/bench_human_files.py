#!/usr/bin/env python3
"""Cost of the issue-11 checks on files for humans and of the module views (no goals asserted).

    .venv/bin/python bench/bench_human_files.py

* ``check_svg`` (launcher side, per SVG export) on what build123d writes: small drawings and a
  part with many hidden lines;
* ``measure_tree`` (the output-directory quota walk, per export) over 100, 1,000 and 10,000 files;
* the module views (``jail/cad/safe_builtins.py``): making the builtins (once per session), an
  ``import numpy as np`` statement's ``__import__`` (per import in user code), an attribute read
  through a view against the real module (the hot path of user code).
"""
from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _p50(fn, n: int) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    from build123d import Box, Circle, Cylinder, Location, Text
    from jail.cad.serialize import serialize
    from jail.wire.svgcheck import check_svg
    from launcher.files.quota import measure_tree
    from jail.cad.safe_builtins import make_builtins

    big = Box(10, 10, 10)
    for i in range(30):
        big = big - Cylinder(0.2, 20).moved(Location((i * 0.3 - 4.5, 0, 0)))
    ns = {"circle": Circle(5), "text": Text("Hello", 10), "box_minus_cyl": Box(10, 20, 5) - Cylinder(3, 10),
          "box_30_holes": big}
    print("| measure | figure |\n|---|---|")
    for name in ns:
        data = serialize(ns, name, "svg", 1 << 30)[0]
        print(f"| check_svg `{name}` ({len(data)} bytes) | p50 {_p50(lambda: check_svg(data), 200) * 1e3:.3f} ms |")
    for n in (100, 1000, 10000):
        d = Path(tempfile.mkdtemp(prefix="b123d-quota-"))
        try:
            for i in range(n):
                sub = d / f"d{i % 50}"
                sub.mkdir(exist_ok=True)
                (sub / f"f{i}.step").write_bytes(b"x" * 100)
            fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
            try:
                t = _p50(lambda: measure_tree(fd, 10 ** 6), 20)
            finally:
                os.close(fd)
            print(f"| measure_tree, {n} files in 50 dirs | p50 {t * 1e3:.2f} ms |")
        finally:
            shutil.rmtree(d)
    allowed = ["build123d", "math", "numpy", "typing", "collections", "itertools", "functools", "copy"]
    blocked = ["eval", "exec", "compile", "open", "__import__", "breakpoint", "input", "getattr", "vars", "dir",
               "hasattr"]
    print(f"| make_builtins (views of the 8 allowed packages) | p50 "
          f"{_p50(lambda: make_builtins(allowed, blocked), 20) * 1e3:.2f} ms |")
    imp = make_builtins(allowed, blocked)["__import__"]
    import builtins
    import numpy
    real = builtins.__import__
    print(f"| `import numpy as np` through the filtered __import__ | p50 "
          f"{_p50(lambda: imp('numpy', None, None, None, 0), 2000) * 1e6:.2f} µs "
          f"(real __import__: {_p50(lambda: real('numpy', None, None, None, 0), 2000) * 1e6:.2f} µs) |")
    np = imp("numpy")

    def via_view():
        for _ in range(10000):
            np.array

    def via_module():
        for _ in range(10000):
            numpy.array
    print(f"| attribute read `np.array`, view vs module | {_p50(via_view, 50) * 1e5:.1f} ns vs "
          f"{_p50(via_module, 50) * 1e5:.1f} ns |")


if __name__ == "__main__":
    main()

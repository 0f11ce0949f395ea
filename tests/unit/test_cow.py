"""jail/proc/cow.py in plain processes: the pages a forked child wrote are found (and only those), and
copied ahead into its own child, whose writes to them then cost no fault. Ground truth: the kernel's
minor-fault count. Each scenario runs in a fresh interpreter (it forks; the test runner has threads)."""
from __future__ import annotations

import json
import subprocess
import sys

from tests.helpers.cli import REPO

SCENARIO = r"""
import ctypes, json, mmap, os, resource, sys
from jail.proc import cow

PAGES = 64
buf = mmap.mmap(-1, PAGES * cow.PAGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
base = ctypes.addressof(ctypes.c_char.from_buffer(buf))
for i in range(PAGES):  # present in the parent: shared with the child after the fork
    buf[i * cow.PAGE] = 1

def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt

def write(pages):
    for i in pages:
        buf[i * cow.PAGE] = 2

def listed(runs):
    out = set()
    for start, count in zip(*(a.tolist() for a in runs)):
        out.update(range(start, start + count * cow.PAGE, cow.PAGE))
    return out

WRITTEN, UNWRITTEN = list(range(3, 11)) + [40], list(range(20, 28))
r, w = os.pipe()
if os.fork() == 0:  # the next: writes some pages while its parent (the old head) lives
    write(WRITTEN)
    {child}
    os._exit(0)
os.close(w)
print(os.read(r, 1 << 16).decode())
os.wait()
"""

FOUND = r"""
    runs = cow.written_since_fork()
    pages = listed(runs)
    report = {"written_found": all(base + i * cow.PAGE in pages for i in WRITTEN),
              "unwritten_found": [i for i in range(PAGES) if i not in WRITTEN and base + i * cow.PAGE in pages],
              "capped": len(cow.written_since_fork(max_pages=4)[0])}
    cow.carried = runs
    r2, w2 = os.pipe()
    if os.fork() == 0:  # the following next: copies the listed pages ahead, then writes
        populated = cow.populate()
        f0 = faults(); write([]); faults()  # the interpreter's own first touches, before counting
        f0 = faults(); write(UNWRITTEN); unlisted_faults = faults() - f0
        f0 = faults(); write(WRITTEN); listed_faults = faults() - f0
        os.write(w2, json.dumps({"populated": populated, "listed_faults": listed_faults,
                                 "unlisted_faults": unlisted_faults}).encode())
        os._exit(0)
    os.close(w2)
    report.update(json.loads(os.read(r2, 1 << 16)))
    os.wait()
    os.write(w, json.dumps(report).encode())
"""

BOUNDS = r"""
    runs = cow.written_since_fork()
    stopped = cow.populate(lambda: True, runs)
    buf2 = mmap.mmap(-1, 4 * cow.PAGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    gone = ctypes.addressof(ctypes.c_char.from_buffer(buf2))
    buf2.close()  # unmapped: populate skips it and goes on
    import numpy as np
    with_hole = (np.concatenate(([np.uint64(gone)], runs[0])), np.concatenate(([np.uint64(4)], runs[1])))
    after_hole = cow.populate(runs=with_hole)
    cow.MAX_PAGES = 5
    capped = cow.populate(runs=runs)
    os.write(w, json.dumps({"stopped": stopped, "after_hole": after_hole, "total": int(runs[1].sum()),
                            "capped": capped}).encode())
"""


def run(child: str) -> dict:
    code = SCENARIO.replace("{child}", child.strip("\n").lstrip())
    p = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_the_pages_a_child_wrote_are_found_and_copied_ahead_into_its_child():
    got = run(FOUND)
    assert got["written_found"], got
    assert got["unwritten_found"] == [], got
    assert got["capped"] == 0, "a list over max_pages must not be kept"
    assert got["populated"] >= 9, got
    # copied ahead: no fault left on the listed pages; the unlisted ones still fault, one each
    assert got["listed_faults"] <= 1, got
    assert got["unlisted_faults"] >= 8, got


def test_populate_stops_when_asked_skips_unmapped_ranges_and_is_capped():
    got = run(BOUNDS)
    assert got["stopped"] == 0, got
    assert got["after_hole"] == got["total"] + 4, got  # the hole's 4 pages were asked for, then the rest
    assert got["capped"] == 5, got

"""The jail's malloc keeps freed image-sized blocks for reuse (launcher/session/zygote.py's
``MALLOC_TUNABLES``): a render allocates a few 800x600 buffers, and with glibc's defaults each one
was unmapped or trimmed after use and its pages faulted in again by the next use (~6 400 minor
faults, ~8 ms of a 40 ms render). Ground truth is the kernel's count of minor page faults in the
session's own process (profile ``faults_os_only``: the code may import ``resource``)."""
from __future__ import annotations

import re

from tests.helpers.faults import launcher_fixture

from launcher.session import zygote

launcher = launcher_fixture("faults_os_only")  # tests/conftest.py's ``session`` fixture opens its sessions

REUSE = """
import resource
import numpy as np
def faults():
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for size in ({sizes}):
    a = np.ones(size // 8)
    del a
    f0 = faults()
    b = np.ones(size // 8)  # the same size again: the block freed just now, already in memory
    print("REFAULTS", size, faults() - f0)
    del b
"""
SIZES = (800 * 600 * 8, 800 * 600 * 4 * 3, 20 << 20)  # a float64 image, an RGBA float32 one, 20 MiB


def test_the_tunables_reach_the_jail():
    assert "glibc.malloc.mmap_threshold=" in zygote.clean_env()["GLIBC_TUNABLES"]


def test_a_freed_image_buffer_is_reused_without_faults(session):
    r = session.execute(REUSE.format(sizes=", ".join(map(str, SIZES))))
    assert r["ok"], r
    got = {int(s): int(n) for s, n in re.findall(r"REFAULTS (\d+) (\d+)", r["stdout"])}
    assert set(got) == set(SIZES), r["stdout"]
    for size, n in got.items():
        pages = size // 4096
        # reused: a few pages at most; faulted again: every page of the block (glibc's defaults)
        assert n < pages // 10, f"a {size >> 10} KiB block was faulted in again ({n} of {pages} pages)"

"""The launcher at its own memory limit: an allocation that fails costs one call, not the server.

A real launcher in a child process (so the test run keeps its own limits) lowers its soft
``RLIMIT_AS`` to what it maps now plus 120 MiB once its zygote and session are up (the zygote is
started before, so it does not inherit the tight limit), then asks for an export whose bytes (90 MB,
sent by a patched session process) cannot be held three times over under that limit. The export
fails with an error; the session is unchanged and the next calls work.
"""
from __future__ import annotations

import json
import subprocess
import sys

from tests.helpers.cli import REPO
from tests.helpers.faults import FAULTS_DIR, profile_path

SCRIPT = r'''
import json, resource, sys
sys.path[:0] = [REPO, FAULTS]
from launcher.core import Launcher
from launcher.tools.toolset import ToolSet
from launcher.contain import selflimit
PATCH = """
import os
import jail.cad.serialize as Z
_me = os.getpid()
_real = Z.serialize
def _big(*a, **k):
    if os.getpid() == _me:
        return _real(*a, **k)
    return b"x" * (90 << 20), {"format": "step"}
Z.serialize = _big
n = 41
"""
out = {}
with Launcher(PROFILE, output_dir=OUT, spare_sessions=0) as L:
    ts = ToolSet(L)
    out["patch"] = ts.call("execute", {"code": PATCH})
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = selflimit.vm_size() + (120 << 20)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        out["export"] = ts.call("export", {"object_name": "n", "filename": "big.step"})
        out["after"] = ts.call("execute", {"code": "print(n)"})
        out["again"] = ts.call("execute", {"code": "print(n + 1)"})
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    ts.close()
print("RESULT " + json.dumps(out, default=str))
'''


def test_memory_error_at_the_launcher_limit_costs_one_call(tmp_path):
    script = SCRIPT.replace("REPO", repr(str(REPO))).replace("FAULTS", repr(str(FAULTS_DIR))) \
        .replace("PROFILE", repr(profile_path("faults_os_only"))).replace("OUT", repr(str(tmp_path / "out")))
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, cwd=str(REPO))
    lines = [ln for ln in p.stdout.splitlines() if ln.startswith("RESULT ")]
    assert p.returncode == 0 and lines, (p.returncode, p.stdout[-2000:], p.stderr[-4000:])
    out = json.loads(lines[-1][len("RESULT "):])
    assert out["patch"].get("ok"), out
    assert "error" in out["export"] and "memory" in out["export"]["error"].lower(), out["export"]
    assert out["after"].get("ok") and out["after"]["stdout"] == "41\n", out
    assert out["again"].get("ok") and out["again"]["stdout"] == "42\n", out
    assert not (tmp_path / "out" / "big.step").exists()

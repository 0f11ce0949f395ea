"""Resource edges: 64 sessions on a 2-core machine, the 65th refused; running out of fds; a full disk.

* 64 sessions at once (profile ``faults_max64``: max_sessions = 64) all answer
  a trivial execute, concurrently; the 65th gets the max_sessions error.
* Out of file descriptors in the launcher: a subprocess lowers its own
  RLIMIT_NOFILE just above what it uses, then keeps opening sessions and
  calling tools. Every call must come back as a result/error dict (never an
  exception out of ToolSet, never a crash); once the limit is raised again,
  old and new sessions work.
* A full disk under the output directory: exports fail with a clear error and
  leave nothing behind; the session goes on.
"""
from __future__ import annotations

import json
import subprocess
import sys
import threading
import time


from tests.helpers.cli import REPO
from tests.helpers.faults import profile_path
from tests.helpers.proc import zombies_under


def test_64_sessions_then_65th_refused():
    import os
    from launcher.core import Launcher
    from launcher.tools.toolset import ToolSet
    with Launcher(profile_path("faults_max64")) as L:
        t0 = time.monotonic()
        tools = [ToolSet(L) for _ in range(64)]
        for i, ts in enumerate(tools):
            r = ts.call("execute", {"code": f"i = {i}"})
            assert r.get("ok"), (i, r)
        made = time.monotonic() - t0
        results: dict[int, dict] = {}

        def ask(i):
            t = time.monotonic()
            r = tools[i].call("execute", {"code": "print(i)"})
            r["_t"] = time.monotonic() - t
            results[i] = r

        threads = [threading.Thread(target=ask, args=(i,)) for i in range(64)]
        t1 = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        wall = time.monotonic() - t1
        for i in range(64):
            assert results[i].get("stdout") == f"{i}\n", (i, results.get(i))
        print(f"\n64 sessions created + first call in {made:.1f}s; 64 concurrent trivial executes in {wall:.2f}s "
              f"(slowest {max(r['_t'] for r in results.values()) * 1000:.0f} ms)")
        extra = ToolSet(L)
        r = extra.call("execute", {"code": "x = 1"})
        assert "error" in r and "max_sessions" in r["error"], r
        # closing one frees a slot
        tools[0].close()
        r = extra.call("execute", {"code": "x = 1"})
        assert r.get("ok"), r
        extra.close()
        for ts in tools[1:]:
            ts.close()
        time.sleep(0.2)
        assert not zombies_under(os.getpid())


OUT_OF_FDS = r"""
import faulthandler, json, os, resource, sys, traceback
faulthandler.dump_traceback_later(int(sys.argv[3]) if len(sys.argv) > 3 else 100, exit=True)  # a hang shows where, then exits
sys.path.insert(0, sys.argv[1])
from launcher.core import Launcher
from launcher.tools.toolset import ToolSet
out = {"calls": [], "raised": []}
with Launcher(sys.argv[2]) as L:
    first = ToolSet(L)
    assert first.call("execute", {"code": "n = 1"})["ok"]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    used = len(os.listdir("/proc/self/fd"))
    resource.setrlimit(resource.RLIMIT_NOFILE, (used + 12, hard))
    tools = []
    for i in range(12):
        ts = ToolSet(L)
        tools.append(ts)
        for tool, args in (("execute", {"code": "x = 1"}), ("save_snapshot", {"name": f"s{i}"}),
                           ("session_state", {})):
            try:
                r = ts.call(tool, args)
                out["calls"].append({"tool": tool, "ok": r.get("ok"), "error": str(r.get("error"))[:200]})
            except BaseException as e:
                out["raised"].append(f"{tool}: {type(e).__name__}: {e}")
    try:
        r = first.call("execute", {"code": "print(n)"})
        out["first_during"] = r.get("stdout") or str(r.get("error"))[:200]
    except BaseException as e:
        out["raised"].append(f"first: {type(e).__name__}: {e}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    for ts in tools:
        ts.close()
    try:
        out["first_after"] = first.call("execute", {"code": "print(n)"}).get("stdout")
        out["new_after"] = ToolSet(L).call("execute", {"code": "print(2)"}).get("stdout")
    except BaseException as e:
        out["raised"].append(f"after: {type(e).__name__}: {e}")
    out["zygote_alive"] = L.zygote.alive()
print("RESULT " + json.dumps(out))
"""


def test_out_of_fds_gives_errors_not_crashes(tmp_path):
    script = tmp_path / "oof.py"
    script.write_text(OUT_OF_FDS)
    # the script dumps its threads and exits after 25 s: a hang fails the test instead of stalling it
    p = subprocess.run([sys.executable, str(script), str(REPO), profile_path("faults"), "25"], capture_output=True,
                       text=True, timeout=120, cwd=str(REPO))
    line = next((l for l in p.stdout.splitlines() if l.startswith("RESULT ")), None)
    assert line, f"the launcher process crashed (rc {p.returncode}):\n{p.stdout[-2000:]}\n{p.stderr[-4000:]}"
    out = json.loads(line[7:])
    errors = [c for c in out["calls"] if c["ok"] is not True and c["error"] not in ("None", "")]
    print(f"\n{len(out['calls'])} calls under the fd limit, {len(errors)} errors, e.g. "
          f"{errors[0]['error'] if errors else '-'}; exceptions: {out['raised'][:3]}")
    assert errors, "the fd limit was never hit (test did not test anything)"
    assert not out["raised"], f"ToolSet.call raised instead of returning an error: {out['raised']}"
    assert out["first_after"] == "1\n", out
    assert out["new_after"] == "2\n", out
    assert out["zygote_alive"]
    assert p.returncode == 0, p.stderr[-3000:]


def test_max_sessions_holds_under_concurrent_creation():
    """12 threads open sessions at once against max_sessions = 4: at most 4 may exist."""
    from launcher.core import Launcher
    from launcher.session import SessionError
    with Launcher(profile_path("faults_max4")) as L:
        made, refused, other = [], [], []
        barrier = threading.Barrier(12)

        def opener():
            barrier.wait()
            try:
                made.append(L.new_session())
            except SessionError as e:
                refused.append(str(e))
            except Exception as e:  # noqa: BLE001
                other.append(f"{type(e).__name__}: {e}")

        threads = [threading.Thread(target=opener) for _ in range(12)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
        live = [s for s in L.sessions.values() if not s.closed]
        print(f"\nconcurrent new_session x12 with max_sessions=4: {len(made)} made, {len(refused)} refused")
        assert not other, other
        assert len(made) <= 4 and len(live) <= 4, f"{len(made)} sessions made with max_sessions = 4"
        assert refused and "max_sessions" in refused[0]


DISK_FULL = r"""
import json, os, subprocess, sys
sys.path.insert(0, sys.argv[1])
from launcher.core import Launcher
from launcher.tools.toolset import ToolSet
out_dir = sys.argv[3]
# a private mount namespace (`unshare -m` started us): this tmpfs is gone when we exit
subprocess.run(["mount", "-t", "tmpfs", "-o", "size=96k,nr_inodes=24,mode=0755", "tmpfs", out_dir], check=True)
res = {"raised": []}
try:
    with Launcher(sys.argv[2], output_dir=out_dir) as L:
        ts = ToolSet(L)
        r = ts.call("execute", {"code": "big = Sphere(50)\nsmall = Box(1, 2, 3)\nn = 7"})
        res["setup"] = r.get("ok")
        res["big"] = ts.call("export", {"object_name": "big", "filename": "big.stl", "format": "stl"})
        res["after_big"] = sorted(os.listdir(out_dir))
        res["small"] = ts.call("export", {"object_name": "small", "filename": "small.step"})
        many = []
        for i in range(40):  # until the inodes run out
            r = ts.call("export", {"object_name": "small", "filename": f"d{i}/s.brep"})
            many.append("ok" if "error" not in r else r["error"])
            if "error" in r:
                break
        res["many"] = many
        res["listing"] = sorted(os.listdir(out_dir))
        res["leftover_tmp"] = [f for _, _, fs in os.walk(out_dir) for f in fs if f.endswith(".tmp")]
        res["still"] = ts.call("execute", {"code": "print(n)"}).get("stdout")
except BaseException as e:
    res["raised"].append(f"{type(e).__name__}: {e}")
print("RESULT " + json.dumps(res))
"""


def test_disk_full_gives_errors_not_crashes(tmp_path):
    """Exports into a full output directory (a 96 KB tmpfs with 24 inodes, in a private mount
    namespace): a clear 'No space left on device' error, no partial or temporary file left, and
    the session goes on. Needs root (mounting); CI runs as root."""
    import os
    import shutil
    if os.geteuid() != 0 or not shutil.which("unshare"):
        import pytest
        pytest.skip("needs root and util-linux unshare to mount a small tmpfs in a private mount namespace")
    script = tmp_path / "full.py"
    script.write_text(DISK_FULL)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    p = subprocess.run(["unshare", "-m", "--propagation", "private", sys.executable, str(script), str(REPO),
                        profile_path("faults"), str(out_dir)], capture_output=True, text=True, timeout=180,
                       cwd=str(REPO))
    line = next((l for l in p.stdout.splitlines() if l.startswith("RESULT ")), None)
    assert line, f"the launcher process crashed (rc {p.returncode}):\n{p.stdout[-2000:]}\n{p.stderr[-4000:]}"
    res = json.loads(line[7:])
    print(f"\nfull disk: big export -> {res['big']}; inode run -> {res['many'][-1]}")
    assert not res["raised"], res["raised"]
    assert res["setup"] is True
    assert "No space left on device" in res["big"].get("error", ""), res["big"]
    assert res["after_big"] == [], f"a partial file was left: {res['after_big']}"
    assert "error" not in res["small"], res["small"]
    assert res["many"][-1] != "ok" and "No space left on device" in res["many"][-1], res["many"]
    assert "small.step" in res["listing"] and not res["leftover_tmp"], res
    assert res["still"] == "7\n", res
    assert os.listdir(out_dir) == [], "the tmpfs was not private to the subprocess"

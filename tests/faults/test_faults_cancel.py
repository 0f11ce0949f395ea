"""Cancellation under hostile timing and hostile requests.

* a cancel that arrives before its call starts: the call never runs;
* a cancel after its call finished: the next call is not hit;
* cancel storms from another thread while calls run: every call either completes or is "Cancelled",
  and the session's state is always that of the last completed call (never half of a cancelled one);
* a cancel while a snapshot restore runs (not cancellable) leaves the session consistent;
* the daemon's ``_cancel``: a wrong key, another connection's id, junk types are refused and cancel nothing.
"""
from __future__ import annotations

import random
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pytest

from tests.helpers import zygotes
from tests.helpers.cli import REPO, TEST_PROFILE, launcher_env
from tests.helpers.proc import wait_until

LONG = f'extends = "{TEST_PROFILE}"\nname = "long_timeout"\n[limits]\ntimeout_s = 300\n'


@pytest.fixture(scope="module")
def long_launcher(tmp_path_factory):
    d = tmp_path_factory.mktemp("cancel")
    (d / "long_timeout.toml").write_text(LONG)
    L = zygotes.on_shared_zygote(str(d / "long_timeout.toml"), output_dir=d / "out")
    yield L
    L.close()


def test_cancel_before_start_never_runs(long_launcher):
    from launcher.tools.toolset import ToolSet
    ts = ToolSet(long_launcher)
    try:
        assert ts.call("execute", {"code": "n = 1"})["ok"]
        cid = object()
        ts.cancel(cid)
        r = ts.call("execute", {"code": "n = 2"}, cid)
        assert "cancelled before it started" in r["error"], r
        assert "1" in ts.call("execute", {"code": "print(n)"})["stdout"]
    finally:
        ts.close()


def test_cancel_after_finish_does_not_hit_the_next_call(long_launcher):
    from launcher.tools.toolset import ToolSet
    ts = ToolSet(long_launcher)
    try:
        cid = object()
        assert ts.call("execute", {"code": "n = 1"}, cid)["ok"]
        ts.cancel(cid)  # too late: finished
        r = ts.call("execute", {"code": "import math\nn = 2"}, object())
        assert r["ok"], r
        assert "2" in ts.call("execute", {"code": "print(n)"})["stdout"]
    finally:
        ts.close()


def test_cancel_storm_keeps_the_state_consistent(long_launcher):
    """Call i appends i to n; another thread cancels at random moments. In the end n lists exactly the
    calls that returned ok, in order: a cancelled call never leaves anything behind."""
    from launcher.tools.toolset import ToolSet
    ts = ToolSet(long_launcher)
    rng = random.Random(12)
    stop = threading.Event()

    def storm():
        while not stop.is_set():
            ts.cancel()
            stop.wait(rng.uniform(0.02, 0.25))

    try:
        assert ts.call("execute", {"code": "n = []"})["ok"]
        expected = []
        t = threading.Thread(target=storm, daemon=True)
        t.start()
        outcomes = {"ok": 0, "cancelled": 0}
        i = 0
        while min(outcomes.values()) < 5:  # until both outcomes were seen several times
            i += 1
            assert i < 3000, outcomes
            code = f"n = n + [{i}]\n" + ("for _ in range(200000): pass\n" if i % 3 == 0 else "")
            r = ts.call("execute", {"code": code})
            if r.get("ok"):
                expected.append(i)
                outcomes["ok"] += 1
            else:
                err = r.get("error")
                assert (isinstance(err, dict) and err.get("type") == "Cancelled") or \
                       (isinstance(err, str) and "cancelled" in err), r
                outcomes["cancelled"] += 1
        stop.set()
        t.join(10)
        r = ts.call("execute", {"code": "print(n)"})
        assert r["ok"] and r["stdout"].strip() == str(expected), (r, expected)
        print(f"\ncancel storm: {outcomes}")
    finally:
        stop.set()
        ts.close()


def test_cancel_during_restore_leaves_a_consistent_session(long_launcher):
    from launcher.tools.toolset import ToolSet
    ts = ToolSet(long_launcher)
    try:
        assert ts.call("execute", {"code": "n = 'snap'"})["ok"]
        assert "error" not in ts.call("save_snapshot", {"name": "a"})
        assert ts.call("execute", {"code": "n = 'later'"})["ok"]
        restored = 0
        for _ in range(10):
            cid = object()
            t = threading.Thread(target=lambda: [ts.cancel(cid) for _ in range(50)], daemon=True)
            t.start()
            r = ts.call("restore_snapshot", {"name": "a"}, cid)
            t.join(10)
            assert r == {"restored": "a"} or "cancelled before it started" in r.get("error", ""), r
            restored += r == {"restored": "a"}
        r = ts.call("execute", {"code": "print(n)"})
        assert r["ok"] and r["stdout"].strip() == ("snap" if restored else "later"), (r, restored)
        r = ts.call("restore_snapshot", {"name": "a"})  # and the snapshot still works
        assert r == {"restored": "a"}, r
        assert ts.call("execute", {"code": "print(n)"})["stdout"].strip() == "snap"
    finally:
        ts.close()


def test_daemon_cancel_requests_are_checked(tmp_path):
    from launcher.daemon.client import DaemonBackend, recv_frame, send_frame
    import socket
    d = Path(tempfile.mkdtemp(prefix="b123d-dcancel-", dir="/tmp"))
    d.chmod(0o755)
    (d / "long_timeout.toml").write_text(LONG)
    sock = d / "d.sock"
    with open(d / "daemon.log", "w") as log:
        daemon = subprocess.Popen([sys.executable, "-m", "launcher", "serve", "--profile", str(d / "long_timeout.toml"),
                                   "--socket", str(sock), "--output-dir", str(d / "out")], cwd=str(REPO),
                                  env=launcher_env(), stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    try:
        def connect():
            try:
                return DaemonBackend(str(sock), hello_timeout=60)
            except Exception:  # noqa: BLE001
                assert daemon.poll() is None, (d / "daemon.log").read_text()
                return None
        victim = wait_until(connect, 120, 0.05)
        assert victim, (d / "daemon.log").read_text()
        assert victim.call("execute", {"code": "n = 7"})["ok"]
        result = {}
        call_id = object()
        t = threading.Thread(target=lambda: result.update(r=victim.call(
            "execute", {"code": "n = 8\nwhile True: pass"}, call_id)), daemon=True)
        t.start()
        assert wait_until(lambda: victim._inflight, 30)  # the request is on the wire
        other = DaemonBackend(str(sock))
        cid = victim.info["conn"]
        bad = [{"conn": cid, "key": "0" * 32, "seq": 2}, {"conn": cid, "key": None, "seq": 2},
               {"conn": other.info["conn"], "key": victim.info["cancel_key"], "seq": 2},
               {"conn": str(cid), "key": victim.info["cancel_key"]}, {"conn": 10**30, "key": "x"}, {}]
        for args in bad:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(30)
            s.connect(str(sock))
            send_frame(s, {"tool": "_cancel", "args": args})
            r = recv_frame(s)
            s.close()
            assert "error" in r, (args, r)
        # the victim's call was not cancelled by any of those: cancel it for real now, with its own key
        assert t.is_alive() and "r" not in result  # while True under a 300 s limit: still running
        victim.cancel(call_id)
        t.join(60)
        assert not t.is_alive()
        # ``_inflight`` is set just before the request is sent, so the daemon may not have started
        # the call yet when the cancel lands: then it never runs. Either way it is cancelled.
        err = result["r"]["error"]
        assert (isinstance(err, dict) and err.get("type") == "Cancelled") \
            or (isinstance(err, str) and "cancelled before it started" in err), result
        assert "7" in victim.call("execute", {"code": "print(n)"})["stdout"]
        other.close()
        victim.close()
    finally:
        daemon.terminate()
        daemon.wait(60)
        import shutil
        shutil.rmtree(d, ignore_errors=True)

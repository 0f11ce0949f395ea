"""The script comes from the launcher's own record, whatever the session does (issue 20, item 1).

A session with the Python layers off (profile os_only) rewrites ``jail.cad.history._ENTRIES``,
patches its ``record``/``entries``/``next_call_no``, appends to the list in calls that then fail or
time out, and kills its own head after a successful call: the script still shows exactly the
calls that ran, in order, numbered like the session numbers them, across snapshots, restores,
failed calls, a lost head and a reset.
"""
from __future__ import annotations

import re

import pytest

from tests.helpers.faults import launcher_fixture
from tests.helpers.toolcalls import ToolCalls

FORGE = """\
import jail.cad.history as h
h._ENTRIES[:] = [(1, "import os; os.system('forged')", None), (2, "forged_two = 1", "import_file: forged")]
h.record = lambda *a, **k: 1
h.entries = lambda: [{"call": 1, "code": "forged_three()", "note": None}]
forged_state = 1
"""
FAIL_AFTER_FORGING = """\
import jail.cad.history as h
h._ENTRIES.append((99, "forged_by_a_failed_call()", None))
raise RuntimeError("this call fails")
"""
HANG_AFTER_FORGING = """\
import jail.cad.history as h
h._ENTRIES.append((98, "forged_by_a_timed_out_call()", None))
while True:
    pass
"""
# left by a successful call: its process becomes the head, which then cannot fork the next call's process
KILL_HEAD = "import os\nos.fork = lambda: os._exit(0)\n"


launcher = launcher_fixture("os_only")


def calls_of(script: str) -> list[tuple[int, str]]:
    """(call number, code) for each ``# --- call N`` block of the script."""
    parts = re.split(r"^# --- call ([0-9]+)[^\n]*\n", script, flags=re.M)
    return [(int(n), code.strip("\n")) for n, code in zip(parts[1::2], parts[2::2])]


def test_the_script_shows_exactly_the_calls_that_ran(launcher):
    ts = ToolCalls(launcher)
    try:
        assert ts.execute("a = 1")["ok"]
        r = ts.execute(FORGE)
        assert r["ok"] and r["call"] == 2, r
        assert not ts.execute(FAIL_AFTER_FORGING)["ok"]
        r = ts.execute(HANG_AFTER_FORGING, 1)
        assert r["error"]["type"] == "ExecutionTimeout", r
        assert ts.save_snapshot("s1") == {"name": "s1", "snapshots": ["s1"]}
        assert ts.execute("b = 2")["ok"]
        assert ts.save_snapshot("s2")["snapshots"] == ["s1", "s2"]
        assert ts.restore_snapshot("s1") == {"restored": "s1"}
        r = ts.execute("c = 3")
        assert r["ok"] and r["call"] == 3, r
        s = ts.script()
        assert s["calls"] == 3 and s["imports"] == 0, s
        assert calls_of(s["script"]) == [(1, "a = 1"), (2, FORGE.strip("\n")), (3, "c = 3")]
        assert "forged_by" not in s["script"] and s["script"].count("forged_three") == 1  # in call 2's text only
        # s2 still holds its own line: a, the forging call, b
        assert ts.restore_snapshot("s2") == {"restored": "s2"}
        assert calls_of(ts.script()["script"]) == [(1, "a = 1"), (2, FORGE.strip("\n")), (3, "b = 2")]
        # the same text as the exported file
        e = ts.export("script", "design.py")
        assert "error" not in e, e
        assert open(e["path"], encoding="utf-8").read() == ts.script()["script"]
        # a reset starts empty
        assert ts.reset()["reset"] is True
        s = ts.script()
        assert s["calls"] == 0 and calls_of(s["script"]) == [], s
        assert ts.execute("d = 4")["call"] == 1
        assert calls_of(ts.script()["script"]) == [(1, "d = 4")]
    finally:
        ts.close()


def test_a_lost_head_loses_its_calls_and_a_restore_brings_the_snapshots_back(launcher):
    ts = ToolCalls(launcher)
    try:
        assert ts.execute("a = 1")["ok"]
        assert ts.save_snapshot("keep")["snapshots"] == ["keep"]
        assert ts.execute("b = 2")["ok"]
        assert ts.execute(KILL_HEAD)["ok"]  # its process is promoted, then cannot fork: the state is lost
        r = ts.execute("c = 3")
        assert "state is gone" in str(r.get("error")), r
        s = ts.script()
        assert "error" in s and "state is gone" in s["error"], s
        assert "restored" in ts.restore_snapshot("keep")
        assert calls_of(ts.script()["script"]) == [(1, "a = 1")]
        assert ts.execute("c = 3")["call"] == 2
        assert calls_of(ts.script()["script"]) == [(1, "a = 1"), (2, "c = 3")]
    finally:
        ts.close()


def test_the_session_cannot_reach_the_launchers_record(launcher):
    """No op sends the jail's list out any more: the history request is unknown to the jail."""
    from jail.proc.ops import OPS
    assert "history" not in OPS
    ts = ToolCalls(launcher)
    try:
        assert ts.execute("x = 1")["ok"]
        s = ts._session()
        assert [tuple(e) for e in s.history] == [(1, "x = 1", None)]
        with pytest.raises(Exception):  # no history reply comes (the jail says "unknown op"): the ask times out
            s.ask({"t": "history"}, "history", timeout=2)
    finally:
        ts.close()

"""The escape matrix under pytest: every payload x every required column.

One module-scoped run of ``launcher.selftest.audit.run.run_matrix`` (sessions are reused within a
column, DoS payloads run on the ``*_fast`` profiles; the columns run side by side, one process
each), then one test per required cell so a failure names the payload, the column and the canary
that fired.

Columns: ``all`` and ``os_only`` (the required ones). ``python_only`` runs every OS
layer off and is reported by ``build123d-launcher audit``, not here; add it with
``B123D_ESCAPE_COLUMNS=all,os_only,python_only``. ``B123D_ESCAPE_ONLY=fr*,net*``
runs a subset.
"""
from __future__ import annotations

import os
import re
import signal
import socket
import sys
import threading
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.helpers.proc import wait_until  # noqa: E402
from launcher.selftest.audit import payloads, planted  # noqa: E402
from launcher.selftest.audit.canaries import Canaries  # noqa: E402
from launcher.selftest.audit.checks import fs_changes  # noqa: E402
from launcher.selftest.audit.classify import classify  # noqa: E402
from launcher.selftest.audit.exits import check_reply, scan  # noqa: E402
from launcher.selftest.audit.hostrun import host_runs  # noqa: E402
from launcher.selftest.audit.inputcheck import _offered_wrongly  # noqa: E402
from launcher.selftest.audit.report import render_markdown  # noqa: E402
from launcher.selftest.audit.parallel import run_columns  # noqa: E402
from launcher.selftest.audit.run import COLUMNS as PROFILES, run_matrix  # noqa: E402

COLUMNS = [c for c in os.environ.get("B123D_ESCAPE_COLUMNS", "all,os_only").split(",") if c]
ONLY = os.environ.get("B123D_ESCAPE_ONLY") or None
PAYLOADS = payloads.load_payloads(ONLY)
REQUIRED = [(p.id, c) for c in COLUMNS for p in PAYLOADS if p.required(c)]


# ------------------------------------------------------------- no jail needed
def test_payload_set_is_complete():
    all_payloads = payloads.load_payloads()
    assert len(all_payloads) >= 80
    cats = {p.category for p in all_payloads}
    assert cats == set(payloads.CATEGORIES), f"categories without payloads: {set(payloads.CATEGORIES) - cats}"
    for p in all_payloads:
        assert p.path.name == f"{p.id}.py", f"{p.path.name}: file name must be <id>.py"
        compile(payloads.substitute(p.code, {}), str(p.path), "exec")


def test_payload_placeholders_are_known():
    known = set(payloads.PLACEHOLDERS)
    for p in payloads.load_payloads():
        used = set(payloads.PLACEHOLDER.findall(p.code))
        assert used <= known, f"{p.id}: unknown placeholder(s) {used - known}"


def test_destructive_payloads_never_run_without_os_layers():
    for p in payloads.load_payloads():
        if p.destructive:
            assert p.skipped("python_only")
    names = {p.id for p in payloads.load_payloads() if p.destructive}
    for must in ("re01-memory-bomb", "re03-fork-bomb", "re07-disk-fill", "sg06-kill-minus-1", "sg05-kill-pgrp-0"):
        assert must in names


@pytest.mark.parametrize("res,layer", [
    ({"error": {"type": "PolicyError", "rule": "import", "message": "x"}}, "ast_policy"),
    ({"error": {"type": "PermissionError", "message": "[Errno 1] Operation not permitted"}}, "seccomp"),
    ({"error": {"type": "PermissionError", "message": "[Errno 13] Permission denied: '/x'"}}, "landlock"),
    ({"error": {"type": "FileNotFoundError", "message": "[Errno 2] No such file"}}, "mountview"),
    ({"error": {"type": "MemoryError", "message": ""}}, "rlimits"),
    ({"error": {"type": "ExecutionTimeout", "message": "..."}}, "wall-clock"),
    ({"error": {"type": "ChildDied", "message": "the child process died from SIGSYS: ..."}}, "seccomp(kill)"),
    ({"error": {"type": "ChildDied", "message": "the child process died from SIGXCPU: ..."}}, "rlimits(cpu)"),
    ({"ok": True, "stdout": "ESCAPE-RESULT: errno=EPERM\n"}, "seccomp"),
    ({"ok": True, "stdout": "ESCAPE-RESULT: x=1 errno=OK\nESCAPE-RESULT: errno=EACCES\n"}, "landlock"),
])
def test_classify(res, layer):
    assert classify(res)[0] == layer


def test_substitute_only_known_names():
    code = 'open("{SECRET}"); "{0.x}".format(1); f"{X}"; {UNKNOWN_NAME}'
    out = payloads.substitute(code, {"SECRET": "/s", "X": "1"})
    assert out == 'open("/s"); "{0.x}".format(1); f"1"; {UNKNOWN_NAME}'



def test_canaries_fire_and_clean_up():
    """The host-side traps see what an escaped payload would do, and leave nothing behind."""
    with Canaries() as can:
        v = can.values()
        assert set(v) | {"BYSTANDER_PID", "ZYGOTE_PID", "ATTACKER_INIT_PID"} == set(payloads.PLACEHOLDERS)
        assert v["FORGED_REVERSED"][::-1] == v["FORGED"]
        for key, label in planted.INPUT_LABELS.items():  # every input-directory secret is watched
            assert can.leak_markers()[label] == can.tokens[key]
        assert can.tokens["home"] in Path(v["SECRET"]).read_text()
        assert all(can.leak_markers().values())
        snap0 = can.fs_snapshot()
        with socket.create_connection(("127.0.0.1", int(v["TCP_PORT"])), timeout=5):
            pass
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as u:
            u.sendto(b"x", ("127.0.0.1", int(v["UDP_PORT"])))
        for addr in (v["UNIX_PATH"], "\0" + v["ABSTRACT_NAME"]):
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.connect(addr)
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as s:
            s.sendto(b"x", "\0" + v["ABSTRACT_NAME"] + "-dgram")
        os.kill(int(v["SIGPID"]), signal.SIGUSR1)
        want = ["net:tcp4 ", "net:udp4 ", "net:unix-path ", "net:unix-abstract ", "net:unix-abstract-dgram ",
                f"signal:recorder received SIG {int(signal.SIGUSR1)}"]
        assert wait_until(lambda: all(any(e.startswith(w) for e in can.events) for w in want), 10), can.events
        Path(v["SECRET_DIR"], v["MARK"] + ".x").write_text("x")
        Path("/tmp", v["MARK"] + ".y").write_text("y")
        assert fs_changes(snap0, can.fs_snapshot()) == [
            f"fs:{v['SECRET_DIR']}/{v['MARK']}.x created", f"fs:/tmp/{v['MARK']}.y created"]
        can.restore()
        assert fs_changes(snap0, can.fs_snapshot()) == []
        recorder = Path(f"/proc/{v['SIGPID']}")
    assert not Path(v["SECRET_DIR"]).exists() and not Path(v["TMP_SECRET"]).exists()
    assert not [p for p in Path("/tmp").iterdir() if v["MARK"] in p.name]
    assert wait_until(lambda: not recorder.exists(), 10)
    # the test process forks jailed children later: no canary thread may outlive the audit
    assert wait_until(lambda: not [t for t in threading.enumerate() if t.name.startswith("canary-")], 10)

def _payload_file(tmp_path, then: str) -> Path:
    f = tmp_path / "ex99-x.py"
    f.write_text(f"# id: ex99-x\n# category: exit\n# effect: e\n# touches_os: no\n# then: {then}\npass\n")
    return f


def test_then_header(tmp_path):
    p = payloads.parse_payload(_payload_file(tmp_path, "export conftest.py a/.x.step"))
    assert p.then == ("export", "conftest.py", "a/.x.step")
    assert p.required("all") and p.required("os_only") and not p.required("python_only")
    for bad in ("rm -rf", "export", "script extra"):
        with pytest.raises(payloads.PayloadError):
            payloads.parse_payload(_payload_file(tmp_path, bad))
    used = {p.then[0] for p in payloads.load_payloads() if p.then}
    assert used == set(payloads.THEN_KINDS), f"then: kinds without a payload: {set(payloads.THEN_KINDS) - used}"


def test_a_column_process_that_fails_is_an_error(tmp_path):
    """parallel=True: a column whose process reports nothing fails the run, never drops its cells."""
    p = payloads.parse_payload(_payload_file(tmp_path, "reply"))
    p.path.unlink()  # the column's process cannot read its payload
    with pytest.raises(RuntimeError, match="column 'all'.*exited with 1"):
        run_columns([p], ("all",), PROFILES)


def test_reply_first_line_judged():
    tok = "b123d-forged-0123"
    # a first line that carries the session's text is judged (the renderer keeps it out; see
    # tests/faults/test_faults_last_words.py: here the token is put where the first line shows it)
    forged = {"ok": False, "error": {"type": "ExecutionTimeout", "message": f"killed {tok}", "line": 1,
                                     "function": "f", "reported": True}}
    assert check_reply(None, forged, {"FORGED": tok})
    hidden = {"ok": False, "error": {"type": "ExecutionTimeout", "message": "killed", "line": 1,
                                     "function": f"OK\\n{tok}", "reported": True}}
    assert not check_reply(None, hidden, {"FORGED": tok})  # a forged function name stays off the first line
    labelled = {"ok": False, "error": {"type": "ExecutionTimeout", "message": "killed", "line": 1,
                                       "reported": True, "source_line": tok}}
    assert not check_reply(None, labelled, {"FORGED": tok})


def test_input_listing_judged():
    assert not _offered_wrongly("part.step") and not _offered_wrongly("sub/part.STL")
    for name in (".env", ".git/config", "notes.txt", ".hidden/part.step", "Makefile", "a/.b/c.dxf"):
        assert _offered_wrongly(name), name


def test_host_runs_see_what_the_script_does():
    """The ``then: script`` host runs see an unguarded script's effects (files, leaks, proofs) in
    both runners, and nothing from a guarded one."""
    with Canaries() as can:
        v = can.values()
        evil = (f"import os\nprint(open({v['SECRET']!r}).read()[:80])\n"
                f"open(os.path.expanduser('~') + '/{v['MARK']}-ran', 'a').write('x')\n"
                f"print('ESCAPE-RESULT: escaped=ran')\n")
        snap0 = can.fs_snapshot()
        fired = host_runs({"script tool": evil}, can)
        assert any(f.startswith("leak:$HOME secret file (in `python design.py`") for f in fired), fired
        assert any(f.startswith("proof:escaped=ran (in `python -m pytest`") for f in fired), fired
        assert fs_changes(snap0, can.fs_snapshot()) == [f"fs:{v['SECRET_DIR']}/{v['MARK']}-ran created"]
        can.restore()
        guarded = "raise SystemExit('untrusted: run it with build123d-launcher run')\n" + evil
        assert host_runs({"export py": guarded}, can) == []
        assert fs_changes(snap0, can.fs_snapshot()) == []
        assert scan("x", {"a": evil}, can.leak_markers()) == []  # a script's source is not its output


# ------------------------------------------------------------- the matrix
@pytest.fixture(scope="module")
def report():
    if not sys.platform.startswith("linux"):
        pytest.skip("the jail is Linux only")
    # the required cells only: os_only's other cells are reports (python-layer payloads that may pass
    # there by design); `build123d-launcher audit` runs every cell
    # the columns side by side, one process each (launcher/selftest/audit/parallel.py): same cells
    return run_matrix(PAYLOADS, COLUMNS, required_only="python_only" not in COLUMNS, parallel=True)


def test_no_column_failed_to_start(report):
    errs = {c: i["rig_errors"] for c, i in report["column_info"].items() if i.get("rig_errors")}
    assert not errs, f"sessions could not start: {errs}"


@pytest.mark.parametrize("pid,column", REQUIRED, ids=[f"{c}:{p}" for p, c in REQUIRED])
def test_blocked(report, pid, column):
    row = next(p for p in report["payloads"] if p["id"] == pid)
    cell = row["cells"][column]
    assert cell["verdict"] == "blocked", (
        f"{pid} [{column}] {cell['verdict']}: {row['effect']}\n"
        f"  canaries: {'; '.join(cell['canaries']) or '-'}\n  detail: {cell['detail']}")


def test_whole_matrix(report):
    if report["ok"]:
        return
    lines = [f"{f['id']} [{f['column']}] {f['verdict']}: {'; '.join(f['canaries']) or f['detail']}"
             for f in report["failures"]]
    pytest.fail(f"{len(lines)} required cell(s) not blocked:\n" + "\n".join(lines))


def test_markdown_renders(report):
    md = render_markdown(report)
    assert re.search(r"\*\*Verdict: (PASS|FAIL)\*\*", md)
    assert md.count("\n| `") == len(report["payloads"])

"""The escape matrix under pytest: every payload x every required column.

One module-scoped run of ``launcher.selftest.audit.run_matrix`` (sessions are reused within a
column, DoS payloads run on the ``*_fast`` profiles), then one test per required cell
so a failure names the payload, the column and the canary that fired.

Columns: ``all`` and ``os_only`` (the required ones). ``python_only`` runs every OS
layer off and is reported by ``build123d-launcher audit``, not here; add it with
``B123D_ESCAPE_COLUMNS=all,os_only,python_only``. ``B123D_ESCAPE_ONLY=fr*,net*``
runs a subset.
"""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from launcher.selftest import audit  # noqa: E402

COLUMNS = [c for c in os.environ.get("B123D_ESCAPE_COLUMNS", "all,os_only").split(",") if c]
ONLY = os.environ.get("B123D_ESCAPE_ONLY") or None
PAYLOADS = audit.load_payloads(ONLY)
REQUIRED = [(p.id, c) for c in COLUMNS for p in PAYLOADS if p.required(c)]


# ------------------------------------------------------------- no jail needed
def test_payload_set_is_complete():
    all_payloads = audit.load_payloads()
    assert len(all_payloads) >= 80
    cats = {p.category for p in all_payloads}
    assert cats == set(audit.CATEGORIES), f"categories without payloads: {set(audit.CATEGORIES) - cats}"
    for p in all_payloads:
        assert p.path.name == f"{p.id}.py", f"{p.path.name}: file name must be <id>.py"
        compile(audit.substitute(p.code, {}), str(p.path), "exec")


def test_payload_placeholders_are_known():
    known = set(audit.PLACEHOLDERS)
    for p in audit.load_payloads():
        used = set(audit.PLACEHOLDER.findall(p.code))
        assert used <= known, f"{p.id}: unknown placeholder(s) {used - known}"


def test_destructive_payloads_never_run_without_os_layers():
    for p in audit.load_payloads():
        if p.destructive:
            assert p.skipped("python_only")
    names = {p.id for p in audit.load_payloads() if p.destructive}
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
    assert audit.classify(res)[0] == layer


def test_substitute_only_known_names():
    code = 'open("{SECRET}"); "{0.x}".format(1); f"{X}"; {UNKNOWN_NAME}'
    out = audit.substitute(code, {"SECRET": "/s", "X": "1"})
    assert out == 'open("/s"); "{0.x}".format(1); f"1"; {UNKNOWN_NAME}'


# ------------------------------------------------------------- the matrix
@pytest.fixture(scope="module")
def report():
    if not sys.platform.startswith("linux"):
        pytest.skip("the jail is Linux only")
    return audit.run_matrix(PAYLOADS, COLUMNS)


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
    md = audit.render_markdown(report)
    assert re.search(r"\*\*Verdict: (PASS|FAIL)\*\*", md)
    assert md.count("\n| `") == len(report["payloads"])

"""The command line, as a user runs it: ``python -m launcher {run,demo,doctor}``.

Each command starts its own launcher (and zygote), so each test costs a few seconds.
"""
from __future__ import annotations

import json
import re

import pytest

from tests.helpers.cli import TEST_PROFILE, run_cli

MODEL = """\
b = Box(10, 20, 30)
print("volume is", round(b.volume, 3))
"""


def _diag(p) -> str:
    return f"exit {p.returncode}\n--- stdout\n{p.stdout[-3000:]}\n--- stderr\n{p.stderr[-3000:]}"


def test_run_file(tmp_path):
    f = tmp_path / "model.py"
    f.write_text(MODEL)
    p = run_cli("run", str(f), "--profile", TEST_PROFILE, "--output-dir", str(tmp_path / "out"), cwd=tmp_path)
    assert p.returncode == 0, _diag(p)
    assert p.stdout.startswith("OK ("), _diag(p)
    assert "volume is 6000.0" in p.stdout
    assert "+ b: Box  volume 6000" in p.stdout


def test_run_stdin_failure_exits_1(tmp_path):
    p = run_cli("run", "-", "--json", "--profile", TEST_PROFILE, "--output-dir", str(tmp_path / "out"),
                cwd=tmp_path, input="a = 1\nb = a / 0\n")
    assert p.returncode == 1, _diag(p)
    res = json.loads(p.stdout)
    assert res["ok"] is False
    assert res["error"]["type"] == "ZeroDivisionError" and res["error"]["line"] == 2
    assert res["error"]["source_line"] == "b = a / 0"


def test_demo(tmp_path):
    p = run_cli("demo", "--profile", TEST_PROFILE, "--output-dir", str(tmp_path / "out"), cwd=tmp_path)
    assert p.returncode == 0, _diag(p)
    out = p.stdout
    assert re.search(r"^plate: \d+ faces$", out, re.M), _diag(p)
    assert "+ part: Part  volume " in out
    assert "Inside the jail:" in out and "NoNewPrivs=1" in out and "CapEff=0000000000000000" in out
    assert "An escape attempt (import subprocess) is refused:" in out and "PolicyError" in out


def test_doctor_json_all_required_layers_applied(tmp_path):
    p = run_cli("doctor", "--json", "--profile", TEST_PROFILE, cwd=tmp_path)
    assert p.returncode == 0, _diag(p)
    rep = json.loads(p.stdout)
    assert rep["ok"] is True and rep["error"] is None, rep
    layers = {l["layer"]: l for l in rep["layers"]}
    assert set(layers) == {"userns", "namespaces", "rlimits", "mountview", "landlock", "privileges", "seccomp",
                           "ast_policy", "builtins"}
    required = [l for l in rep["layers"] if l["mode"] == "required"]
    # sessions_fast extends default: every OS layer but the mount view is required
    assert {l["layer"] for l in required} >= {"userns", "namespaces", "rlimits", "landlock", "privileges",
                                              "seccomp", "ast_policy", "builtins"}
    for l in required:
        assert l["status"] in ("applied", "per call"), l
    probe = rep["probe"]
    assert probe["NoNewPrivs"] == "1" and probe["CapEff"] == "0" * 16
    assert probe["Seccomp"] == "2", "seccomp filter mode not active inside the jail"
    assert probe["probes"]["socket_inet"] != "created"
    assert probe["sched"] == "SCHED_BATCH"
    assert probe["rlimits"]["RLIMIT_NICE"] == [0, 0] and probe["rlimits"]["RLIMIT_RTPRIO"] == [0, 0]


def test_bad_profile_name_exits_2(tmp_path):
    p = run_cli("run", "-", "--profile", "no_such_profile", cwd=tmp_path, input="x = 1\n", timeout=60)
    assert p.returncode == 2, _diag(p)
    assert "no profile named 'no_such_profile'" in p.stderr
    assert "Traceback" not in p.stderr
    p = run_cli("doctor", "--profile", "../../etc/passwd", cwd=tmp_path, timeout=60)
    assert p.returncode == 2, _diag(p)
    assert "bad profile name" in p.stderr and "Traceback" not in p.stderr


def test_invalid_profile_file_exits_2(tmp_path):
    bad = tmp_path / "typo.toml"
    bad.write_text('extends = "default"\n[limits]\ntimeout = 5\n')
    p = run_cli("run", "-", "--profile", str(bad), cwd=tmp_path, input="x = 1\n", timeout=60)
    assert p.returncode == 2, _diag(p)
    assert str(bad) in p.stderr and "timeout" in p.stderr and "Traceback" not in p.stderr
    bad.write_text('extends = "default"\n[layers]\nseccomp = "maybe"\n')
    p = run_cli("run", "-", "--profile", str(bad), cwd=tmp_path, input="x = 1\n", timeout=60)
    assert p.returncode == 2, _diag(p)
    assert "seccomp" in p.stderr and "maybe" in p.stderr and "Traceback" not in p.stderr


# A required layer that the host "supports" but that leaves the session unable to run (here: a seccomp
# allowlist that allows nothing) must fail closed with a message naming the layer (docs/ARCHITECTURE.md, rule 4),
# not a traceback or a lost-session message.
EMPTY_SECCOMP = 'extends = "default"\nname = "empty_seccomp"\n[seccomp]\nallow = []\n'


def test_doctor_fails_closed_on_a_session_killing_layer(tmp_path):
    prof = tmp_path / "empty_seccomp.toml"
    prof.write_text(EMPTY_SECCOMP)
    p = run_cli("doctor", "--json", "--profile", str(prof), cwd=tmp_path)
    assert "Traceback" not in p.stderr, _diag(p)
    assert p.returncode == 3, _diag(p)
    rep = json.loads(p.stdout)
    assert rep["ok"] is False and "seccomp" in (rep["error"] or ""), rep


def test_run_fails_closed_naming_the_layer(tmp_path):
    prof = tmp_path / "empty_seccomp.toml"
    prof.write_text(EMPTY_SECCOMP)
    p = run_cli("run", "-", "--profile", str(prof), cwd=tmp_path, input="b = Box(1, 1, 1)\n")
    assert p.returncode == 3, _diag(p)
    assert "seccomp" in p.stderr and "Traceback" not in p.stderr, _diag(p)


# ------------------------------------------------------------------ user errors: clear, no traceback
def test_version_and_help_per_subcommand(tmp_path):
    from launcher import __version__
    p = run_cli("--version", cwd=tmp_path)
    assert p.returncode == 0 and p.stdout.strip() == f"build123d-launcher {__version__}", _diag(p)
    for cmd in ("mcp", "serve", "run", "demo", "doctor", "audit"):
        p = run_cli(cmd, "-h", cwd=tmp_path)
        assert p.returncode == 0, _diag(p)
        usage, _, rest = p.stdout.partition("\n\n")
        assert usage.startswith(f"usage: build123d-launcher {cmd}") and len(rest.split("\n\n")[0]) > 40, p.stdout


def test_run_missing_file_is_a_clear_error(tmp_path):
    p = run_cli("run", str(tmp_path / "missing.py"), "--profile", TEST_PROFILE, cwd=tmp_path)
    assert p.returncode == 2, _diag(p)
    assert "cannot read" in p.stderr and "missing.py" in p.stderr and "Traceback" not in p.stderr, _diag(p)


@pytest.mark.parametrize("cmd", [["run", "-"], ["doctor"], ["audit", "--only", "fr01*"]])
def test_a_wrong_profile_name_lists_the_valid_ones(tmp_path, cmd):
    p = run_cli(*cmd, "--profile", "no_such_profile", cwd=tmp_path, input="")
    assert p.returncode == 2, _diag(p)
    assert "no profile named 'no_such_profile'" in p.stderr and "default" in p.stderr and "strict" in p.stderr
    assert TEST_PROFILE in p.stderr and "Traceback" not in p.stderr, _diag(p)


def test_doctor_rows_fit_a_terminal_and_verbose_lists_the_rules(tmp_path):
    p = run_cli("doctor", "--profile", TEST_PROFILE, cwd=tmp_path)
    assert p.returncode == 0, _diag(p)
    rows = [line for line in p.stdout.splitlines() if line.startswith(("userns", "landlock", "seccomp", "rlimits"))]
    assert len(rows) == 4 and max(map(len, rows)) <= 160, rows
    p = run_cli("doctor", "--verbose", "--profile", TEST_PROFILE, cwd=tmp_path)
    assert p.returncode == 0 and "landlock rules:" in p.stdout and "'read_file'" in p.stdout, _diag(p)
    assert "seccomp groups" in p.stdout and "@memory" in p.stdout and "@exploit" in p.stdout, _diag(p)


def test_root_with_an_unreadable_checkout_explains_the_fix(tmp_path):
    """As root the jail runs as nobody: a 0700 directory on the way to the venv is named, with the fix."""
    from jail.wire.errors import LayerError
    from launcher.core import explain_layer_error
    from launcher.selftest.preflight import check_jail_can_read

    import shutil
    import sys
    import tempfile
    from pathlib import Path
    base = Path(tempfile.mkdtemp(prefix="b123d-0700-", dir="/tmp"))  # pytest's own tmp is 0700 already
    base.chmod(0o755)
    locked = base / "locked"
    (locked / "venv").mkdir(parents=True)
    locked.chmod(0o700)
    old = sys.prefix
    sys.prefix = str(locked / "venv")
    try:
        with pytest.raises(LayerError) as ei:
            check_jail_can_read(65534, 65534)
    finally:
        sys.prefix = old
        shutil.rmtree(base)
    text = explain_layer_error(ei.value)
    assert text.startswith("the jail cannot start: running as root, the jail runs as the unprivileged host uid "
                           "65534"), text
    assert f"cannot enter {locked}" in text and f"chmod o+x {locked}" in text and "drwx------" in text, text
    assert "jail layer 'userns'" not in text


def test_audit_profile_is_honoured(tmp_path):
    p = run_cli("audit", "--only", "fr01-open-secret", "--columns", "all", "--json", "--profile", "strict",
                cwd=tmp_path, timeout=300)
    assert p.returncode == 0, _diag(p)
    rep = json.loads(p.stdout)
    assert rep["profile"].endswith("profiles/strict.toml"), rep.get("profile")
    assert rep["column_info"]["all"]["profiles"] == ["strict.toml", "strict.toml"], rep["column_info"]

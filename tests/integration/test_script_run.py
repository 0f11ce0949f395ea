"""An exported script cannot hurt by accident, and ``build123d-launcher run`` runs it jailed (issue 20).

A session (profile os_only: the OS layers alone, as a hostile session would have it) runs a call
that, outside the jail, would write a marker file (inside, the write fails and the call succeeds
all the same: it is in the script), imports a file, and uses a Cyrillic name and a bidi control.
Its script is exported over a real MCP client, then:

* ``python design.py`` and ``python -c "import design"`` refuse with the header's message, and the
  marker does not exist;
* ``pytest`` collecting it as ``test_x.py`` in a project (the output directory's parent) refuses,
  and the marker does not exist;
* ``build123d-launcher run design.py --input-dir IN`` runs every call jailed (exit 0), import
  included; without ``--input-dir`` it says which call needs it (exit 2);
* the same as an unprivileged user.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.helpers.cli import REPO, launcher_env, run_cli

import mcpclient
from mcp import StdioServerParameters

PROFILE = "os_only"
MESSAGE = "this file is untrusted code written by an AI session"


@pytest.fixture(scope="module")
def marker():
    """A path any uid could create if the session's code ran outside the jail."""
    d = Path(tempfile.mkdtemp(prefix="b123d-marker-", dir="/tmp"))
    d.chmod(0o777)
    yield d / "the-session-ran-here"
    shutil.rmtree(d, ignore_errors=True)


def hostile(marker: Path) -> str:
    return ("import pathlib\n"
            "try:\n"
            f"    pathlib.Path({str(marker)!r}).write_text('the session code ran outside the jail')\n"
            "except OSError:\n"
            "    jailed = True\n")


@pytest.fixture(scope="module")
def exported(tmp_path_factory, marker):
    """(design.py, input dir, the script tool's text) of a session exported over MCP."""
    d = tmp_path_factory.mktemp("script-run")
    (d / "in").mkdir()
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "launcher", "mcp", "--embedded", "--profile", PROFILE, "--output-dir", str(d / "proj" / "out"),
              "--input-dir", str(d / "in")],
        env=launcher_env(), cwd=str(REPO))
    with mcpclient.running(None, d / "mcp-stderr.log", params=params) as c:
        t = c.text("execute", {"code": hostile(marker)})
        assert t.startswith("OK") and "jailed" in t, t
        assert c.text("execute", {"code": "part = Box(3, 4, 5)"}).startswith("OK")
        assert "error" not in c.text("export", {"object_name": "part", "filename": "part.step"}).lower()
        shutil.copy(d / "proj" / "out" / "part.step", d / "in" / "part.step")
        assert c.text("import_file", {"filename": "part.step", "name": "base"}).startswith("Imported")
        assert c.text("execute", {"code": "\u0440\u0430rt = base.moved(Location((10, 0, 0)))  # \u202e note"}
                      ).startswith("OK")
        c.error("execute", {"code": "raise ValueError('failed-call')"})
        shown = c.text("script")
        tools = {t.name: t for t in c.list_tools().tools}
        t = c.text("export", {"object_name": "script", "filename": "design.py"})
        assert "design.py" in t, t
    assert not marker.exists()
    path = d / "proj" / "out" / "design.py"
    return path, d / "in", shown, tools["script"].description


def test_the_script_says_it_is_untrusted(exported):
    path, _, shown, description = exported
    text = path.read_text(encoding="utf-8")
    assert text.isascii() and "\u202e" not in text
    assert text.startswith("# UNTRUSTED CODE, written by an AI session.")
    assert "build123d-launcher run FILE" in text and "failed-call" not in text
    assert "_u0440_u0430rt = base.moved" in text and "# \\u202e note" in text
    assert shown.startswith("UNTRUSTED code written by this AI session") and "written as _u0440_u0430rt" in shown
    assert "UNTRUSTED" in description and "build123d-launcher run FILE" in description


def _refused(p: subprocess.CompletedProcess, marker: Path) -> None:
    out = p.stdout + p.stderr
    assert p.returncode != 0, out
    assert MESSAGE in out and "build123d-launcher run FILE" in out, out
    assert not marker.exists(), "the session's code ran outside the jail"


def test_python_refuses(exported, marker):
    path, _, _, _ = exported
    _refused(subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=60,
                            cwd=str(path.parent)), marker)
    _refused(subprocess.run([sys.executable, "-c", "import design"], capture_output=True, text=True, timeout=60,
                            cwd=str(path.parent)), marker)


def test_pytest_collecting_it_refuses(exported, marker, tmp_path):
    path, _, _, _ = exported
    proj = path.parent.parent  # the project that holds the output directory
    shutil.copy(path, proj / "test_x.py")
    try:
        p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(proj)],
                           capture_output=True, text=True, timeout=120, cwd=str(proj),
                           env={k: v for k, v in os.environ.items() if not k.startswith("PYTEST")})
    finally:
        (proj / "test_x.py").unlink()
    _refused(p, marker)


def test_run_runs_it_jailed(exported, marker, tmp_path):
    path, indir, _, _ = exported
    p = run_cli("run", str(path), "--profile", PROFILE, "--output-dir", str(tmp_path / "out"))
    assert p.returncode == 2 and "call 3 of" in p.stderr and "--input-dir" in p.stderr, p.stderr
    p = run_cli("run", str(path), "--profile", PROFILE, "--output-dir", str(tmp_path / "out"),
                "--input-dir", str(indir))
    assert p.returncode == 0, p.stdout + p.stderr
    assert "is a script exported by build123d-launcher" in p.stdout
    assert "Imported 'part.step'" in p.stdout and "+ jailed: bool" in p.stdout, p.stdout
    assert "+ _u0440_u0430rt: Solid" in p.stdout, p.stdout
    assert not marker.exists()


def test_run_names_the_failing_call(tmp_path):
    from launcher.files import script
    from launcher.session.history import Entry
    text, _ = script.build([Entry(1, "a = 1\n", None), Entry(2, "b = 2\nc = a / 0\n", None),
                            Entry(3, "d = 4\n", None)], "s-x")
    f = tmp_path / "design.py"
    f.write_text(text)
    p = run_cli("run", str(f), "--profile", PROFILE, "--output-dir", str(tmp_path / "out"))
    assert p.returncode == 1, p.stdout + p.stderr
    line = text.split("\n").index("c = a / 0") + 1
    assert f"call 2 failed, line {line} of the file; the calls after it did not run" in p.stderr, p.stderr
    assert "ZeroDivisionError" in p.stdout and "call 3" not in p.stdout


# ------------------------------------------------------------------ unprivileged
from test_unprivileged import AS_ROOT, user_env  # noqa: E402,F401 - the fixture: run as uid 65533 (or self)


def test_as_unprivileged_user(exported, marker, user_env):
    prefix, env, home, uid = user_env
    path, indir, _, _ = exported
    mine = home / "design.py"
    shutil.copy(path, mine)
    inp = home / "in"
    shutil.copytree(indir, inp)
    if AS_ROOT:
        for p in (mine, inp, inp / "part.step"):
            os.chown(p, uid, uid)
    p = subprocess.run(prefix + [sys.executable, str(mine)], capture_output=True, text=True, timeout=60,
                       cwd=str(home), env=env)
    _refused(p, marker)
    p = run_cli("run", str(mine), "--profile", PROFILE, "--output-dir", str(home / "out"), "--input-dir", str(inp),
                prefix=prefix, env=env, cwd=home)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "Imported 'part.step'" in p.stdout and "+ jailed: bool" in p.stdout, p.stdout
    assert not marker.exists()

"""``then: script``: the session's script, run on the host the way a user would run it.

The script comes from the script tool (the text an assistant shows) and from ``export`` format
``py`` (the file; removed from the output directory once read: it is what is being checked).
It must not show ``{FORGED}`` (a call that never ran: the session rewrote its own record). Each
distinct text is then run on this host, as the auditing uid, ``HOME`` the audit's temporary
``$HOME``, with a timeout: ``python FILE`` in an empty directory, and ``python -m pytest`` in a
project directory whose ``build123d-out/`` holds it under a name pytest collects. Nothing of the
session's may run there: its output must carry no planted token and no ``ESCAPE-RESULT:
escaped=`` proof, and the cell's files canary sees any ``{MARK}`` file it made. Both runs are of
our own payload: if a guard fails, it is a canary that fires, by design.
"""
from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from launcher.selftest.audit.exits import clear_new, scan, toolset, tree

HOST_RUN_TIMEOUT_S = 60


def _env(home: Path, scratch: Path) -> dict:
    """A plain user's environment: HOME the audit's $HOME, caches kept out of it."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "LANG": "C.UTF-8",
           "PYTHONDONTWRITEBYTECODE": "1", "OPENBLAS_NUM_THREADS": "1", "MPLCONFIGDIR": str(scratch / "mpl")}
    for k in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
        env[k] = str(scratch / k.lower())
    return env


def _run(cmd: list[str], cwd: Path, env: dict) -> str:
    try:
        p = subprocess.run(cmd, cwd=str(cwd), env=env, stdin=subprocess.DEVNULL, capture_output=True,
                           timeout=HOST_RUN_TIMEOUT_S, start_new_session=True)
        return (p.stdout + b"\n" + p.stderr).decode("utf-8", "replace")
    except subprocess.TimeoutExpired as e:  # the process group is killed by run(); keep what it printed
        return ((e.stdout or b"") + b"\n" + (e.stderr or b"")).decode("utf-8", "replace") + "\n[timed out]"


@functools.lru_cache(maxsize=1)
def _has_pytest() -> bool:
    try:
        return subprocess.run([sys.executable, "-c", "import pytest"], capture_output=True, timeout=60).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def scripts(rig, values: dict) -> tuple[dict[str, str], list[str]]:
    """``{where: text}`` of the script tool and of ``export`` format py; the canaries their replies fired."""
    can = rig.canaries
    leaks, ts, fired, texts = can.leak_markers(), toolset(rig), [], {}
    r = ts.call("script", {})
    fired += scan("script tool", r, leaks)
    if isinstance(r.get("script"), str):
        texts["script tool"] = r["script"]
    before = tree(can.outdir)
    e = ts.call("export", {"object_name": "script", "filename": f"{values['MARK']}-design.py", "format": "py"})
    fired += scan("export py", e, leaks)
    for rel in sorted(tree(can.outdir) - before):
        p = can.outdir / rel
        if p.is_file() and not p.is_symlink():
            texts["export py"] = p.read_text("utf-8", "replace")
    clear_new(can.outdir, before)  # the file under test, not a files-canary event
    return texts, fired


def host_runs(texts: dict[str, str], canaries) -> list[str]:
    """Run each distinct script text on this host (plain interpreter, pytest collection): the
    ``leak:``/``proof:`` canaries of their output (the files they make: the cell's files canary)."""
    leaks, fired = canaries.leak_markers(), []
    scratch = Path(tempfile.mkdtemp(prefix="b123d-exit-"))
    try:
        env = _env(canaries.home, scratch)
        for i, text in enumerate(dict.fromkeys(texts.values())):
            where = "/".join(w for w, t in texts.items() if t == text)
            run_dir, proj = scratch / f"run{i}", scratch / f"proj{i}"
            run_dir.mkdir()
            (run_dir / "design.py").write_text(text, "utf-8", "surrogatepass")
            out = _run([sys.executable, "design.py"], run_dir, env)
            fired += scan(f"`python design.py` of the {where}", out, leaks, output=True)
            if _has_pytest():
                (proj / "build123d-out").mkdir(parents=True)
                (proj / "pytest.ini").write_text("[pytest]\n")
                (proj / "build123d-out" / "test_design.py").write_text(text, "utf-8", "surrogatepass")
                out = _run([sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider"], proj, env)
                fired += scan(f"`python -m pytest` over the {where}", out, leaks, output=True)
    finally:
        shutil.rmtree(scratch, True)
    return fired


def check_script(rig, values: dict) -> list[str]:
    texts, fired = scripts(rig, values)
    if not texts:
        return fired + ["script: neither the script tool nor export format py gave the session's script"]
    for where, text in texts.items():
        if values["FORGED"] in text:
            fired.append(f"forged: the script ({where}) shows a call that never ran")
    return fired + host_runs(texts, rig.canaries)

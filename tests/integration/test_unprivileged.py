"""The unprivileged path: the launcher run by an ordinary user.

As root, the launcher is run as uid/gid 65533 through ``setpriv --reuid=65533
--regid=65533 --clear-groups`` with HOME and XDG_RUNTIME_DIR in a temporary
directory owned by that uid; otherwise as the current user. Either way
``doctor --json`` must report every required layer applied, with the user
namespace mapped to that host uid, and ``run`` must run a model.
"""
from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.helpers.cli import REPO, TEST_PROFILE, TEST_PROFILES, launcher_env, run_cli

UID = 65533
AS_ROOT = os.geteuid() == 0


def _first_unreadable(path: Path, uid: int, gid: int) -> str | None:
    """First path on the way to ``path`` (inclusive) that ``uid`` cannot enter or read, from the mode bits."""
    cur = Path("/")
    for part in (path.resolve().parts[1:] + ("",)):
        try:
            st = cur.stat()
        except OSError:
            return str(cur)
        want_x = stat.S_ISDIR(st.st_mode)
        if st.st_uid == uid:
            r, x = st.st_mode & stat.S_IRUSR, st.st_mode & stat.S_IXUSR
        elif st.st_gid == gid:
            r, x = st.st_mode & stat.S_IRGRP, st.st_mode & stat.S_IXGRP
        else:
            r, x = st.st_mode & stat.S_IROTH, st.st_mode & stat.S_IXOTH
        if (want_x and not x) or (cur == path.resolve() and not r):
            return str(cur)
        if not part:
            break
        cur = cur / part
    return None


@pytest.fixture(scope="module")
def user_env():
    """(command prefix, env, home, expected host uid) for running the launcher as the unprivileged user."""
    if not AS_ROOT:
        home = Path(tempfile.mkdtemp(prefix="b123d-unpriv-"))
        env = launcher_env(HOME=str(home), XDG_RUNTIME_DIR=str(home / "run"))
        (home / "run").mkdir(mode=0o700)
        yield [], env, home, os.getuid()
        shutil.rmtree(home, ignore_errors=True)
        return
    setpriv = shutil.which("setpriv")
    if not setpriv:
        pytest.skip("setpriv (util-linux) is not installed: cannot run the launcher as a non-root uid")
    import jail
    import launcher
    needed = [Path(sys.executable), Path(sys.prefix), Path(sys.base_prefix), REPO, TEST_PROFILES,
              Path(launcher.__file__).parent, Path(jail.__file__).parent, Path(os.__file__).parent]
    try:
        import build123d
        import mcp
        needed += [Path(build123d.__file__).parent, Path(mcp.__file__).parent]
    except ImportError:
        pass
    for p in needed:
        bad = _first_unreadable(p, UID, UID)
        if bad:
            pytest.skip(f"{bad} is not readable by uid {UID} (needed for {p}); run the tests from a clone and "
                        f"venv that other users can read (chmod o+rX)")
    home = Path(tempfile.mkdtemp(prefix="b123d-unpriv-", dir="/tmp"))
    (home / "run").mkdir(mode=0o700)
    for p in (home, home / "run"):
        os.chown(p, UID, UID)
    env = launcher_env(HOME=str(home), XDG_RUNTIME_DIR=str(home / "run"), USER="b123d-test", LOGNAME="b123d-test")
    prefix = [setpriv, f"--reuid={UID}", f"--regid={UID}", "--clear-groups", "--"]
    # the interpreter and every package must import as that uid (catches ACLs and modes the bit check misses)
    p = subprocess.run(prefix + [sys.executable, "-c", "import launcher.cli, jail.proc.zygote, build123d, mcp"],
                       cwd=str(home), env=env, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        shutil.rmtree(home, ignore_errors=True)
        pytest.skip(f"the venv/repo cannot be imported as uid {UID}: {p.stderr.strip().splitlines()[-1:]}")
    yield prefix, env, home, UID
    shutil.rmtree(home, ignore_errors=True)


def _diag(p) -> str:
    return f"exit {p.returncode}\n--- stdout\n{p.stdout[-3000:]}\n--- stderr\n{p.stderr[-3000:]}"


def test_doctor_as_unprivileged_user(user_env):
    prefix, env, home, uid = user_env
    p = run_cli("doctor", "--json", "--profile", TEST_PROFILE, prefix=prefix, env=env, cwd=home)
    assert p.returncode == 0, _diag(p)
    rep = json.loads(p.stdout)
    assert rep["uid"] == uid
    assert rep["ok"] is True and rep["error"] is None, rep
    for l in rep["layers"]:
        if l["mode"] == "required":
            assert l["status"] in ("applied", "per call"), l
    userns = next(l for l in rep["layers"] if l["layer"] == "userns")
    assert userns["status"] == "applied"
    assert f"host uid {uid}" in userns["evidence"], userns
    probe = rep["probe"]
    assert probe["NoNewPrivs"] == "1" and probe["CapEff"] == "0" * 16
    assert probe["probes"]["etc_shadow"] != "readable" and probe["probes"]["socket_inet"] != "created"


def test_run_as_unprivileged_user(user_env):
    prefix, env, home, uid = user_env
    model = home / "model.py"
    model.write_text("b = Box(3, 4, 5)\nprint('volume is', round(b.volume, 3))\n")
    if AS_ROOT:
        os.chown(model, uid, uid)
    out = home / "out"
    p = run_cli("run", str(model), "--profile", TEST_PROFILE, "--output-dir", str(out), prefix=prefix, env=env,
                cwd=home)
    assert p.returncode == 0, _diag(p)
    assert "volume is 60.0" in p.stdout and "+ b: Box  volume 60" in p.stdout, _diag(p)


def test_zygote_runs_as_the_unprivileged_uid(user_env):
    """The uid the zygote (and so every session) runs as on the host is the user's, never root."""
    prefix, env, home, uid = user_env
    script = ("import json\n"
              "from launcher.core import Launcher\n"
              f"with Launcher({TEST_PROFILE!r}, output_dir={str(home / 'out')!r}) as L:\n"
              "    s = L.new_session()\n"
              "    pids = s.pids()\n"
              "    def uids(p):\n"
              "        for line in open(f'/proc/{p}/status'):\n"
              "            if line.startswith('Uid:'):\n"
              "                return line.split()[1:]\n"
              "    print(json.dumps({'zygote': uids(L.zygote.pid), 'head': uids(pids['head']),\n"
              "                      'uid_map': open(f'/proc/{L.zygote.pid}/uid_map').read().split()}))\n")
    p = subprocess.run(prefix + [sys.executable, "-c", script], cwd=str(home), env=env, capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 0, _diag(p)
    info = json.loads(p.stdout.strip().splitlines()[-1])
    assert info["zygote"] == [str(uid)] * 4 and info["head"] == [str(uid)] * 4, info
    # read from outside the namespace: inside id 0 (or any) -> host uid, one id mapped
    assert info["uid_map"][1:] == [str(uid), "1"], info

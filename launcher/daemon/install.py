"""``make install-user-service``: install the systemd user units for this venv.

Writes ``build123d-launcher.socket`` and ``build123d-launcher.service`` (from
the repository's ``systemd/`` directory) to ``~/.config/systemd/user`` (or
``$XDG_CONFIG_HOME/systemd/user``, or ``--dest``) with ``ExecStart=`` pointing
at this interpreter (``sys.executable -m launcher serve``), creates the
output directory (0700), then, when a user manager is running,
``systemctl --user daemon-reload`` and ``enable --now build123d-launcher.socket``.
Everything it does is printed; it ends with ``loginctl enable-linger`` advice when linger is
off for the user (a headless user's manager, and the daemon, stop at its last logout).

    python -m launcher.daemon.install [--profile NAME] [--output-dir DIR]
                                       [--dest DIR] [--no-systemctl]
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

from launcher.resources import REPO, data_dir

UNIT_DIR = data_dir("systemd")  # the repository's systemd/, or the installed package's copy
UNITS = ("build123d-launcher.socket", "build123d-launcher.service")
DEFAULT_OUTPUT = "%h/build123d-out"


def _exec_quote(arg: str) -> str:
    """Quote one ExecStart= word (systemd: double quotes, backslash escapes, %% for %)."""
    a = arg.replace("%", "%%") if not arg.startswith("%h/") else "%h/" + arg[3:].replace("%", "%%")
    if a and all(c.isalnum() or c in "/._-+=:,@%" for c in a):
        return a
    return '"' + a.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _under_tmp(p: str) -> bool:
    rp = os.path.realpath(p)
    return any(rp == t or rp.startswith(t + "/") for t in ("/tmp", "/var/tmp"))


def doc_urls() -> list[str]:
    """``file://`` URLs of the README and architecture notes that exist on this machine: the copies the
    wheel installs under ``<venv>/share/doc/build123d-launcher``, else the checkout's."""
    for base in (Path(sys.prefix) / "share" / "doc" / "build123d-launcher", REPO, None):
        if base is None:
            return []
        readme = base / "README.md"
        if readme.is_file():
            arch = [p for p in (base / "ARCHITECTURE.md", base / "docs" / "ARCHITECTURE.md") if p.is_file()]
            return [readme.resolve().as_uri()] + [a.resolve().as_uri() for a in arch[:1]]
    return []


def render_units(python: str | None = None, profile: str = "default",
                 output_dir: str = DEFAULT_OUTPUT) -> dict[str, str]:
    """The unit files' text for this interpreter, profile and output directory."""
    python = python or sys.executable
    out: dict[str, str] = {}
    for name in UNITS:
        out[name] = (UNIT_DIR / name).read_text()
    exec_line = "ExecStart=" + " ".join(_exec_quote(a) for a in
                                        (python, "-m", "launcher", "serve", "--profile", profile,
                                         "--output-dir", output_dir))
    tmp_paths = sorted({os.path.realpath(p) for p in (sys.prefix, os.path.dirname(os.path.dirname(python)),
                                                      str(UNIT_DIR.parent)) if _under_tmp(p)})
    docs = doc_urls()
    for name in UNITS:  # Documentation=: files that exist here (the template names the distro path)
        if docs:
            out[name] = "\n".join("Documentation=" + " ".join(docs) if line.startswith("Documentation=") else line
                                   for line in out[name].splitlines()) + "\n"
    svc = []
    for line in out["build123d-launcher.service"].splitlines():
        if line.startswith("ExecStart="):
            line = exec_line
        elif line.startswith("ExecStartPre=-+/bin/mkdir "):
            line = "ExecStartPre=-+/bin/mkdir -p -m 0700 " + _exec_quote(output_dir)
        elif line.startswith("ReadWritePaths="):
            line = "ReadWritePaths=-" + _exec_quote(output_dir)
        elif line.startswith("PrivateTmp=") and tmp_paths:
            svc.append(line)
            svc.append("# this venv/checkout lives under /tmp, which PrivateTmp= hides: bind it back, read-only")
            line = "BindReadOnlyPaths=" + " ".join(_exec_quote(p) for p in tmp_paths)
        svc.append(line)
    out["build123d-launcher.service"] = "\n".join(svc) + "\n"
    return out


def user_manager_available() -> bool:
    if shutil.which("systemctl") is None:
        return False
    try:
        r = subprocess.run(["systemctl", "--user", "show-environment"], capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return r.returncode == 0


def install(dest: Path, *, profile: str, output_dir: str, systemctl: bool,
            linger_dir: str | None = None) -> list[str]:
    """Install the units; return the list of actions done (also printed). ``linger_dir``: where
    systemd-logind keeps its linger flags (default /var/lib/systemd/linger; tests pass their own)."""
    done: list[str] = []

    def say(msg: str) -> None:
        done.append(msg)
        print(msg)

    dest.mkdir(parents=True, exist_ok=True)
    for name, text in render_units(sys.executable, profile, output_dir).items():
        target = dest / name
        tmp = dest / f".{name}.tmp"
        tmp.write_text(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
        say(f"wrote {target}")
    real_out = Path(output_dir.replace("%h", str(Path.home())))
    if not real_out.exists():
        real_out.mkdir(mode=0o700, parents=True)
        say(f"created output directory {real_out} (mode 0700)")
    if not systemctl:
        say("skipped systemctl (--no-systemctl)")
    elif not user_manager_available():
        say("no systemd user manager is reachable (systemctl --user failed); when you log in with one, run:\n"
            "  systemctl --user daemon-reload\n"
            "  systemctl --user enable --now build123d-launcher.socket")
    else:
        for cmd in (["systemctl", "--user", "daemon-reload"],
                    ["systemctl", "--user", "enable", "--now", "build123d-launcher.socket"]):
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                say(f"FAILED: {' '.join(cmd)}: {r.stderr.strip()}")
                raise SystemExit(1)
            say(f"ran: {' '.join(cmd)}")
        sock = os.path.join(os.environ.get("XDG_RUNTIME_DIR", f"/run/user/{os.getuid()}"), "build123d-launcher.sock")
        say(f"the daemon starts on the first connection to {sock}; `build123d-launcher mcp` uses it "
            "automatically (logs: journalctl --user -u build123d-launcher)")
    from launcher.selftest import service
    user = service.current_user()
    if service.linger_enabled(user, linger_dir or service.LINGER_DIR) is False:
        say(f"linger is off for {user}: the user manager, and with it the daemon, stops when your last login "
            f"session ends. On a headless machine (ssh, a server) run: loginctl enable-linger {user}")
    return done


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m launcher.daemon.install", description=__doc__.split("\n")[0])
    ap.add_argument("--profile", default="default")
    ap.add_argument("--output-dir", default=DEFAULT_OUTPUT,
                    help="where the daemon's export() writes (default: ~/build123d-out)")
    ap.add_argument("--dest", default=None, help="unit directory (default ~/.config/systemd/user)")
    ap.add_argument("--no-systemctl", action="store_true", help="only write the files")
    a = ap.parse_args(argv)
    if a.output_dir != DEFAULT_OUTPUT:
        a.output_dir = os.path.abspath(os.path.expanduser(a.output_dir))
    if a.dest:
        dest = Path(a.dest)
    else:
        cfg = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
        dest = Path(cfg) / "systemd" / "user"
    install(dest, profile=a.profile, output_dir=a.output_dir, systemctl=not a.no_systemctl)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The daemon's set-up as ``doctor`` reports it: user units, user manager, socket, linger, backend.

Each check returns a :class:`Check` (a state and what to do), never raises: a host without
systemd, without a user bus or without ``XDG_RUNTIME_DIR`` is a state to report. The socket is
opened with ``O_PATH | O_NOFOLLOW`` and connected through ``/proc/self/fd`` (a symlink at the
socket path is reported, never followed); the greeting is read under one deadline and a size
cap, and every field of it is shown escaped (the peer may be anything that owns the path).

Blocks: a symlinked socket path, a peer that stalls or trickles (one deadline), a peer that
sends junk or terminal escapes. Does not block: a peer of the same uid that lies in its greeting.
"""
from __future__ import annotations

import json
import os
import shutil
import socket
import stat
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from launcher.daemon.client import HEADER, default_socket_path, DaemonUnavailable, peer_uid, send_frame
from launcher.replies.sanitize import text as safe

UNITS = ("build123d-launcher.socket", "build123d-launcher.service")
GREETING_CAP = 64 * 1024
LINGER_DIR = "/var/lib/systemd/linger"
LINGER_HINT = ("without linger, the user manager (and the daemon) stops when your last login session "
               "ends: for headless use run `loginctl enable-linger {user}` (as root: `loginctl enable-linger "
               "{user}` names the user)")


@dataclass
class Check:
    name: str
    state: str
    todo: str = ""
    facts: dict = field(default_factory=dict)


def unit_dirs() -> list[Path]:
    """Where ``systemctl --user`` finds units a user installed (the installer writes the first)."""
    cfg = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return [Path(cfg) / "systemd" / "user", Path("/etc/systemd/user")]


def check_units(dirs: list[Path] | None = None, python: str | None = None) -> Check:
    """Whether both unit files exist (first directory that has them) and whose interpreter they run."""
    dirs = unit_dirs() if dirs is None else dirs
    python = python or sys.executable
    for d in dirs:
        found = [n for n in UNITS if (d / n).is_file()]
        if not found:
            continue
        if len(found) < len(UNITS):
            missing = ", ".join(sorted(set(UNITS) - set(found)))
            return Check("user units", f"incomplete in {d}: {missing} missing",
                         "reinstall: `make install-user-service` (or python -m launcher.daemon.install)")
        exec_start = ""
        try:
            for line in (d / UNITS[1]).read_text(errors="replace").splitlines():
                if line.startswith("ExecStart="):
                    exec_start = line[len("ExecStart="):].strip()
        except OSError as e:
            return Check("user units", f"installed in {d}, service unreadable ({e.strerror})", "")
        exe = exec_start.split()[0].strip('"') if exec_start else ""
        if exe and exe != python:
            return Check("user units", f"installed in {d}, for another interpreter ({safe(exe, 200, keep='')})",
                         f"the daemon runs that venv, not this one ({python}); reinstall from this venv to switch")
        return Check("user units", f"installed in {d}", "", {"dir": str(d)})
    where = " or ".join(str(d) for d in dirs)
    return Check("user units", f"not installed (no {UNITS[0]} in {where})",
                 "optional: `make install-user-service` runs a socket-activated daemon that `mcp` clients share")


def systemctl_user(*args: str, timeout: float = 3.0) -> tuple[int, str]:
    """``systemctl --user ARGS`` -> (exit status, first line of output); (-1, why) when it cannot run."""
    if shutil.which("systemctl") is None:
        return -1, "systemctl not found (no systemd on this host)"
    try:
        r = subprocess.run(["systemctl", "--user", *args], capture_output=True, text=True, timeout=timeout,
                           errors="replace")
    except subprocess.TimeoutExpired:
        return -1, f"systemctl --user {' '.join(args)} did not answer within {timeout:.0f} s"
    except OSError as e:
        return -1, f"systemctl cannot run: {e.strerror or e}"
    out = (r.stdout.strip() or r.stderr.strip()).splitlines()
    return r.returncode, safe(out[0] if out else "", 200, keep="")


def check_manager(run=systemctl_user, systemd_dir: str = "/run/systemd/system") -> Check:
    """Whether a user manager answers, and the state of the socket and service units in it."""
    if not os.path.isdir(systemd_dir):
        return Check("user manager", f"none: systemd is not the init system here (no {systemd_dir})",
                     "the user units need systemd; run `build123d-launcher serve` yourself (a container), or let "
                     "`mcp` run the jail embedded", {"reachable": False})
    rc, msg = run("show-environment")
    if rc != 0:
        why = msg or "no answer"
        return Check("user manager", f"not reachable: {why}",
                     "log in with a session that has a user manager (ssh or a desktop, not `su`/`sudo`), or "
                     "export XDG_RUNTIME_DIR=/run/user/$(id -u); without one, `mcp` runs the jail embedded",
                     {"reachable": False})
    facts: dict = {"reachable": True}
    for unit in UNITS:
        _, enabled = run("is-enabled", unit)
        _, active = run("is-active", unit)
        facts[unit] = {"enabled": enabled or "?", "active": active or "?"}
    sock, svc = facts[UNITS[0]], facts[UNITS[1]]
    state = (f"reachable; socket unit {sock['enabled']}/{sock['active']}, "
             f"service {svc['enabled']}/{svc['active']}")
    todo = ""
    if sock["active"] != "active" and svc["active"] != "active":
        todo = "`systemctl --user enable --now build123d-launcher.socket` (after installing the units)"
    return Check("user manager", state, todo, facts)


def _read_greeting(sock: socket.socket, deadline: float) -> bytes:
    buf = bytearray()
    need = HEADER.size
    while len(buf) < need:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        sock.settimeout(left)
        chunk = sock.recv(need - len(buf))
        if not chunk:
            raise ConnectionError("closed the connection")
        buf += chunk
        if need == HEADER.size and len(buf) == need:
            (n,) = HEADER.unpack(bytes(buf))
            if n > GREETING_CAP:
                raise ValueError(f"announced a greeting of {n} bytes (more than {GREETING_CAP})")
            need += n
    return bytes(buf[HEADER.size:])


def greet(path: str, deadline_s: float = 3.0) -> dict:
    """Open ``path`` (never following a symlink), check its owner, read its greeting; a dict with
    ``state`` ("missing", "symlink", "not-socket", "refused", "other-uid", "silent", "junk",
    "daemon") and the facts found, every string from the peer escaped."""
    try:
        fd = os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        return {"state": "missing"}
    except OSError as e:
        return {"state": "refused", "why": e.strerror or str(e)}
    try:
        st = os.fstat(fd)
        if stat.S_ISLNK(st.st_mode):
            return {"state": "symlink", "target": safe(os.readlink(path) if os.path.islink(path) else "?", 200,
                                                        keep="")}
        if not stat.S_ISSOCK(st.st_mode):
            return {"state": "not-socket", "mode": stat.filemode(st.st_mode)}
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        try:
            deadline = time.monotonic() + deadline_s
            s.settimeout(deadline_s)
            try:
                s.connect(f"/proc/self/fd/{fd}")
            except (ConnectionRefusedError, FileNotFoundError):
                return {"state": "refused", "why": "nothing listens on it (a stale socket file)"}
            except OSError as e:
                return {"state": "refused", "why": e.strerror or type(e).__name__}
            uid = peer_uid(s)
            if uid != os.getuid():
                return {"state": "other-uid", "uid": uid}
            t0 = time.monotonic()
            try:
                send_frame(s, {"tool": "_hello", "args": {}})
                body = _read_greeting(s, deadline)
            except (TimeoutError, socket.timeout):
                return {"state": "silent", "waited": deadline_s}
            except (OSError, ValueError) as e:
                return {"state": "junk", "why": safe(str(e), 200, keep="")}
            try:
                info = json.loads(body.decode("utf-8"))
            except (UnicodeDecodeError, ValueError):
                return {"state": "junk", "why": f"{len(body)} bytes that are not a JSON greeting"}
            if not isinstance(info, dict) or info.get("server") != "build123d-launcher":
                return {"state": "junk", "why": "it did not greet as build123d-launcher"}
            return {"state": "daemon", "greeted_in": round(time.monotonic() - t0, 2),
                    **{k: safe(str(info.get(k)), 200, keep="") for k in ("pid", "profile", "output_dir", "version")
                       if info.get(k) is not None}}
        finally:
            s.close()
    finally:
        os.close(fd)


def check_socket(path: str | None, profile_name: str | None, manager: Check | None = None,
                 deadline_s: float = 3.0) -> tuple[Check, Check]:
    """(the socket's state, the backend ``mcp`` would use)."""
    embedded = "embedded: `mcp` starts the jail in its own process (each client its own zygote, 12-23 s cold)"
    if path is None:
        try:
            path = default_socket_path()
        except DaemonUnavailable as e:
            return (Check("daemon socket", f"no socket path: {e}", "pass --socket PATH to `mcp` and `serve`"),
                    Check("mcp backend", embedded, ""))
    facts = (manager.facts if manager is not None else {}) or {}
    sock_unit = facts.get(UNITS[0]) or {}
    svc_unit = facts.get(UNITS[1]) or {}
    if (sock_unit.get("active") == "active" and svc_unit.get("active") not in ("active", "activating", "reloading")
            and os.path.lexists(path) and not os.path.islink(path)):
        # connecting would start it: report that instead of waiting for its zygote
        return (Check("daemon socket", f"{path}: socket present, daemon not started (socket activation)",
                      "nothing to do: the first `mcp` connection starts it (the first call then waits for "
                      "its jail)", {"path": path}),
                Check("mcp backend", f"daemon at {path} (socket-activated on first use)", ""))
    g = greet(path, deadline_s)
    st = g["state"]
    plan_embedded = Check("mcp backend", embedded, "")
    if st == "missing":
        return (Check("daemon socket", f"{path}: missing (no daemon)",
                      "optional: `make install-user-service`, or run `build123d-launcher serve`"), plan_embedded)
    if st == "symlink":
        return (Check("daemon socket", f"{path}: a symlink (to {g['target']}), not followed",
                      f"remove it (`rm {path}`); the daemon creates the socket itself"), plan_embedded)
    if st == "not-socket":
        return (Check("daemon socket", f"{path}: not a socket ({g['mode']})", f"remove or rename {path}"),
                plan_embedded)
    if st == "refused":
        return (Check("daemon socket", f"{path}: cannot connect: {g['why']}",
                      "start the daemon (`systemctl --user start build123d-launcher.socket` or "
                      f"`build123d-launcher serve`), or remove the stale {path}"), plan_embedded)
    if st == "other-uid":
        return (Check("daemon socket", f"{path}: served by uid {g['uid']}, not by you ({os.getuid()})",
                      "`mcp` refuses it; stop that process or use your own --socket"), plan_embedded)
    if st == "silent":
        return (Check("daemon socket", f"{path}: socket present, no greeting within {g['waited']:.0f} s "
                                       "(a daemon starting its jail, e.g. socket activation)",
                      "run doctor again in ~20 s; `mcp` waits up to 90 s for the greeting"),
                Check("mcp backend", f"daemon at {path} if it greets, else embedded", ""))
    if st == "junk":
        return (Check("daemon socket", f"{path}: something answers that is not the daemon ({g['why']})",
                      f"find what owns {path} (`ss -xlp | grep {os.path.basename(path)}`)"), plan_embedded)
    theirs = g.get("profile", "?")
    state = f"{path}: daemon answers (pid {g.get('pid', '?')}, profile {theirs}, exports to {g.get('output_dir', '?')})"
    if profile_name is not None and theirs != profile_name:
        return (Check("daemon socket", state, f"it runs profile {theirs}, not {profile_name}: `mcp --profile "
                                              f"{profile_name}` runs embedded; restart the daemon with yours"),
                plan_embedded)
    return (Check("daemon socket", state, "", {"path": path, **g}), Check("mcp backend", f"daemon at {path}", ""))


def linger_enabled(user: str, linger_dir: str = LINGER_DIR, run_loginctl: bool = True) -> bool | None:
    """True/False when known (the linger flag file, else ``loginctl``), None when it cannot be told."""
    if os.path.isdir(linger_dir):
        return os.path.exists(os.path.join(linger_dir, user))
    if not run_loginctl or shutil.which("loginctl") is None:
        return None
    try:
        r = subprocess.run(["loginctl", "show-user", user, "-p", "Linger", "--value"], capture_output=True,
                           text=True, timeout=3, errors="replace")
    except (OSError, subprocess.TimeoutExpired):
        return None
    v = r.stdout.strip()
    return {"yes": True, "no": False}.get(v) if r.returncode == 0 else None


def current_user() -> str:
    import pwd
    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        return str(os.getuid())


def check_linger(user: str | None = None, linger_dir: str = LINGER_DIR, run_loginctl: bool = True) -> Check:
    user = user or current_user()
    on = linger_enabled(user, linger_dir, run_loginctl)
    if on is True:
        return Check("linger", f"enabled for {user}", "")
    if on is False:
        return Check("linger", f"off for {user}", LINGER_HINT.format(user=user))
    return Check("linger", "unknown (no systemd-logind here)", "only matters with the systemd user units")


def collect(profile_name: str | None, socket_path: str | None = None) -> list[Check]:
    units = check_units()
    manager = check_manager()
    sock, plan = check_socket(socket_path, profile_name, manager)
    return [units, manager, sock, check_linger(), plan]

"""Checks made before the zygote starts, so a set-up problem names its cause and its fix.

As root the jail runs as an unprivileged host uid (``nobody`` by default), which must be able to
enter every directory on the way to the interpreter, the venv and the ``jail`` package, or
modules imported lazily fail inside the jail with EACCES. Only permission bits are read (no ACLs).
Under ``uvx``/``uv tool`` as root, the package lives in uv's cache or tool directory (and often
runs a uv-managed Python) under /root: the message names that directory and the uv settings that
put it where the jail's uid can read it.
"""
from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import jail
from jail.wire.errors import LayerError


class JailUidCannotRead(LayerError):
    """The jail's uid cannot reach the interpreter/venv/checkout (a set-up problem, not a kernel one)."""


def _can_traverse(path: Path, uid: int, gid: int) -> str | None:
    """Return the first ancestor of ``path`` that ``uid`` cannot enter, or None."""
    p = Path("/")
    for part in path.resolve().parts[1:]:
        try:
            st = p.stat()
        except OSError:
            return str(p)
        mode = st.st_mode
        ok = (mode & stat.S_IXOTH) or (st.st_uid == uid and mode & stat.S_IXUSR) or (
            st.st_gid == gid and mode & stat.S_IXGRP)
        if not ok:
            return str(p)
        p = p / part
    return None


def _under(path: Path, root: Path) -> bool:
    try:
        return path.resolve().is_relative_to(root.resolve())
    except OSError:
        return False


def uv_dirs(env=None, home: Path | None = None) -> dict[str, list[Path]]:
    """Where uv keeps its cache, its tool venvs and the Pythons it installs (env settings, then defaults)."""
    env = os.environ if env is None else env
    home = home or Path.home()
    cache = Path(env.get("XDG_CACHE_HOME") or home / ".cache")
    data = Path(env.get("XDG_DATA_HOME") or home / ".local" / "share")

    def dirs(var: str, *defaults: Path) -> list[Path]:
        return ([Path(env[var])] if env.get(var) else []) + list(defaults)
    return {"cache": dirs("UV_CACHE_DIR", cache / "uv", Path("/root/.cache/uv")),
            "tool": dirs("UV_TOOL_DIR", data / "uv" / "tools", Path("/root/.local/share/uv/tools")),
            "python": dirs("UV_PYTHON_INSTALL_DIR", data / "uv" / "python", Path("/root/.local/share/uv/python"))}


def uv_hint(paths: list[Path], env=None, home: Path | None = None) -> str:
    """What to do when a path the jail needs is in uv's cache, tool or Python directory; "" if none is."""
    found: dict[str, Path] = {}
    for kind, ds in uv_dirs(env, home).items():
        for d in ds:
            if kind not in found and any(_under(p, d) for p in paths):
                found[kind] = d
    if not found:
        return ""
    out = []
    if "cache" in found:
        out.append(f"this launcher runs from uv's cache {found['cache']} (uvx): give uv a cache every user can "
                   "enter, e.g. `mkdir -p -m 0755 /var/tmp/uv && UV_CACHE_DIR=/var/tmp/uv uvx --python /usr/bin/python3 "
                   "--from build123d-launcher build123d-launcher ...`")
    if "tool" in found:
        out.append(f"it is installed by `uv tool install` under {found['tool']}: install it where every user can "
                   "enter, e.g. `UV_TOOL_DIR=/opt/uv-tools UV_TOOL_BIN_DIR=/usr/local/bin uv tool install "
                   "--python /usr/bin/python3 build123d-launcher`")
    if "python" in found:
        out.append(f"its Python is a uv-managed one under {found['python']}: pass `--python /usr/bin/python3` "
                   "(a system Python) or set UV_PYTHON_INSTALL_DIR to a directory every user can enter")
    return "; ".join(out)


def check_jail_can_read(uid: int, gid: int) -> None:
    paths = [Path(sys.prefix), Path(sys.base_prefix), Path(jail.__file__).parent, Path(os.__file__).parent]
    for path in paths:
        bad = _can_traverse(path, uid, gid)
        if bad:
            try:
                mode = stat.filemode(os.stat(bad).st_mode)
            except OSError:
                mode = "unreadable"
            uv = uv_hint([p for p in paths if _can_traverse(p, uid, gid)])
            raise JailUidCannotRead(
                "userns", f"running as root, the jail runs as the unprivileged host uid {uid} (`nobody` unless "
                          f"--jail-uid says otherwise), which cannot enter {bad} (mode "
                          f"{mode}; needed to read {path}). Fix: `chmod o+x {bad}`, "
                          f"or put the venv and checkout under a world-readable directory (not /root), or pass "
                          f"--jail-uid with a uid that can read them" + (f". Under uv: {uv}" if uv else ""))

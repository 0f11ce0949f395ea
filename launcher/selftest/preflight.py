"""Checks made before the zygote starts, so a set-up problem names its cause and its fix.

As root the jail runs as an unprivileged host uid (``nobody`` by default), which must be able to
enter every directory on the way to the interpreter, the venv and the ``jail`` package, or
modules imported lazily fail inside the jail with EACCES. Only permission bits are read (no ACLs).
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


def check_jail_can_read(uid: int, gid: int) -> None:
    paths = [Path(sys.prefix), Path(sys.base_prefix), Path(jail.__file__).parent, Path(os.__file__).parent]
    for path in paths:
        bad = _can_traverse(path, uid, gid)
        if bad:
            try:
                mode = stat.filemode(os.stat(bad).st_mode)
            except OSError:
                mode = "unreadable"
            raise JailUidCannotRead(
                "userns", f"running as root, the jail runs as the unprivileged host uid {uid} (`nobody` unless "
                          f"--jail-uid says otherwise), which cannot enter {bad} (mode "
                          f"{mode}; needed to read {path}). Fix: `chmod o+x {bad}`, "
                          f"or put the venv and checkout under a world-readable directory (not /root), or pass "
                          f"--jail-uid with a uid that can read them")

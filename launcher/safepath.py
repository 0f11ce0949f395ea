"""Reaching a file below a trusted directory by a name that is not trusted.

Shared by exports (launcher/exports.py: writes under the output directory) and
inputs (launcher/inputs.py: reads under the input directory). The name comes
from the AI, so potentially from a prompt injection; the directory is the
user's choice and trusted.

What it blocks:

* following a symlink anywhere below the root: the path is walked one
  component at a time from an fd of the root with ``openat(O_DIRECTORY |
  O_NOFOLLOW)``; a symlink at any component is refused (``ELOOP``/``ENOTDIR``),
  never followed, and a symlink swapped in during the walk is caught too
  (every step opens relative to the fd of the previous one, no path is ever
  resolved again from the root);
* with ``create``: missing sub-directories are made 0700 with ``mkdirat`` and
  re-opened the same way; :meth:`TargetDir.remove_created` removes exactly
  those again (deepest first, only if empty and still the same inode).

What it does not do: check the name's characters (callers do:
``exports.check_filename``, ``inputs.check_input_name``), or decide what the
final component may be (callers open it relative to :attr:`TargetDir.fd`).
Bind mounts below the root are not detected (the user made them).
"""
from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class PathRefused(Exception):
    """A name that does not lead to a usable directory; the message says why."""


def is_symlink(dfd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dfd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def exists(dfd: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=dfd, follow_symlinks=False)
        return True
    except FileNotFoundError:
        return False


def open_subdir(dfd: int, name: str, shown: str, create: bool, made: list | None = None, *,
                error: type[Exception] = PathRefused,
                never: str = "symlinks are never followed") -> int:
    """An fd of directory ``name`` in ``dfd`` (never through a symlink); created 0700 when missing
    and ``create`` (then ``made`` gets True appended: this call made it). FileNotFoundError when
    missing and not ``create``; ``error(message)`` for a symlink, a non-directory or another
    failure (``never`` ends the symlink message)."""
    try:
        return os.open(name, DIR_FLAGS, dir_fd=dfd)
    except FileNotFoundError:
        if not create:
            raise
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENOTDIR):
            kind = "a symlink" if is_symlink(dfd, name) else "not a directory"
            raise error(f"{shown!r} is {kind}; {never}") from None
        raise error(f"cannot open {shown!r}: {e.strerror}") from None
    try:
        os.mkdir(name, 0o700, dir_fd=dfd)
        if made is not None:
            made.append(True)
    except FileExistsError:
        pass
    except OSError as e:
        raise error(f"cannot create directory {shown!r}: {e.strerror}") from None
    try:
        return os.open(name, DIR_FLAGS, dir_fd=dfd)
    except OSError as e:
        if made:
            made.clear()
            try:  # only an empty directory goes (a symlink swapped in is ENOTDIR and stays)
                os.rmdir(name, dir_fd=dfd)
            except OSError:
                pass
        raise error(f"cannot open {shown!r}: {e.strerror}") from None


class TargetDir:
    """The directory that holds a name's last component, reached from the root one component
    at a time without following symlinks; remembers which sub-directories this call created.

    ``fd`` is the target directory, ``fds[0]`` the root. ``remove_created()`` removes, deepest
    first, the directories this call made, each only if still empty and still the very directory
    it made (same device and inode, checked with ``fstatat(parent_fd, name, AT_SYMLINK_NOFOLLOW)``),
    with ``unlinkat(parent_fd, name, AT_REMOVEDIR)`` on the parent fd held since the walk: no path
    is resolved again. ``close()`` closes every fd.
    """

    def __init__(self, root_fd: int):
        self.fds = [root_fd]          # root, then each component's directory
        self.created: list[tuple[int, str, int]] = []  # (parent fd, name, own fd) made by this call

    @property
    def fd(self) -> int:
        return self.fds[-1]

    def remove_created(self) -> int:
        removed = 0
        for parent_fd, name, own_fd in reversed(self.created):
            try:
                mine = os.fstat(own_fd)
                now = os.stat(name, dir_fd=parent_fd, follow_symlinks=False)
                if (now.st_dev, now.st_ino) != (mine.st_dev, mine.st_ino):
                    break  # replaced meanwhile: not ours any more, and nor is what is above it
                os.rmdir(name, dir_fd=parent_fd)
                removed += 1
            except OSError:
                break  # not empty (someone else wrote there), or gone: keep it and its parents
        self.created = []
        return removed

    def close(self) -> None:
        for fd in self.fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self.fds = []

    def __enter__(self) -> "TargetDir":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def walk(root_fd: int, parts: list[str], *, create: bool, error: type[Exception] = PathRefused,
         never: str = "symlinks are never followed") -> TargetDir:
    """The directory that will hold ``parts[-1]``, walked from ``root_fd`` (taken over: closed by
    the TargetDir) without following symlinks.

    With ``create`` false a missing component raises FileNotFoundError (nothing is made)."""
    t = TargetDir(root_fd)
    try:
        for i, p in enumerate(parts[:-1]):
            shown = "/".join(parts[:i + 1])
            made: list = []
            nfd = open_subdir(t.fd, p, shown, create=create, made=made, error=error, never=never)
            if made:
                t.created.append((t.fd, p, nfd))
            t.fds.append(nfd)
        return t
    except BaseException:
        if create:
            t.remove_created()
        t.close()
        raise


def open_root(root: Path, *, create: bool, error: type[Exception] = PathRefused, what: str = "directory") -> int:
    """An fd of the trusted root directory (made 0700 first when ``create``)."""
    if create:
        try:
            os.makedirs(root, mode=0o700, exist_ok=True)
        except OSError as e:
            raise error(f"cannot create the {what} {root}: {e.strerror}") from None
    try:
        return os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as e:
        raise error(f"cannot open the {what} {root}: {e.strerror}") from None

"""Reaching a file below a trusted directory by a name that is not trusted.

Shared by exports.py (writes under the output directory) and inputs.py (reads under the input
directory). The name comes from the AI, so possibly from a prompt injection; the directory is
the user's choice and trusted. :func:`split_relative_name` checks the name itself (characters,
length, relative, no ``..``); callers add their own rules and open the last component relative
to :attr:`TargetDir.fd`.

Blocks: following a symlink anywhere below the root: the path is walked one component at a time
from an fd of the root with ``openat(O_DIRECTORY | O_NOFOLLOW)``, so a symlink at any component,
also one swapped in during the walk, is refused, never followed. With ``create``, the
sub-directories it makes (0700) are removed again by :meth:`TargetDir.remove_created` (deepest
first, only if empty and still the same inode). Does not block: bind mounts below the root (the
user made them).
"""
from __future__ import annotations

import errno
import os
import stat
import unicodedata
from pathlib import Path

MAX_COMPONENT = 255
MAX_TOTAL = 1024


#: Unicode categories refused in file names: controls (C0 and C1), format characters (bidi
#: overrides and isolates, zero-width spaces and joiners, soft hyphen, BOM ...), line/paragraph
#: separators, private use, surrogates, unassigned code points, and spaces other than U+0020.
BAD_CATEGORIES = {"Cc": "a control character", "Cf": "an invisible format character",
                  "Zl": "a line separator", "Zp": "a paragraph separator", "Zs": "a space other than ' '",
                  "Co": "a private-use character", "Cs": "a surrogate", "Cn": "an unassigned code point"}


#: Characters of other categories that render as nothing (fillers, blank braille, grapheme joiner).
INVISIBLE = frozenset({0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x2800, 0x3164, 0xFFA0})


def bad_char(name: str) -> str | None:
    """The first refused character of ``name``, described with its code point (never raw)."""
    if name.isascii():
        i = next((i for i, c in enumerate(name) if ord(c) < 32 or ord(c) == 127), None)
        return None if i is None else f"a control character (U+{ord(name[i]):04X}) at position {i}"
    for i, c in enumerate(name):
        cat = unicodedata.category(c)
        if ord(c) in INVISIBLE:
            return f"an invisible character (U+{ord(c):04X} {unicodedata.name(c, '')}) at position {i}"
        if cat in BAD_CATEGORIES and c != " ":
            label = unicodedata.name(c, "")
            return f"{BAD_CATEGORIES[cat]} (U+{ord(c):04X}{' ' + label if label else ''}) at position {i}"
    return None


def split_relative_name(filename, error: type[Exception], where: str, example: str) -> list[str]:
    """The components of a plain relative name below a trusted directory, or ``error``.

    Refused: a non-string or empty name, NUL, a character that can make a name look like another
    (:func:`bad_char`: controls, format/bidi/zero-width characters, odd spaces, invisible fillers;
    described by code point, never shown raw), over-long names or components, absolute and ``~``
    paths, empty, ``.`` and ``..`` components. ``where`` names the directory in messages
    ("the output directory"), ``example`` is a valid name to suggest."""
    if not isinstance(filename, str) or not filename:
        raise error(f"filename must be a non-empty relative path (relative to {where}), e.g. {example}")
    if "\x00" in filename:
        raise error("filename contains a NUL byte")
    bad = bad_char(filename)
    if bad:
        raise error(f"filename contains {bad}; such characters can make a name look like another "
                    "one (or hide part of it): use letters, digits and punctuation")
    try:
        raw = filename.encode("utf-8")
    except UnicodeEncodeError:
        raise error("filename is not valid UTF-8") from None
    if len(raw) > MAX_TOTAL:
        raise error(f"filename is {len(raw)} bytes long; the limit is {MAX_TOTAL}")
    if filename.startswith("/"):
        raise error(f"absolute paths are refused ({filename[:80]!r}): give a name relative to {where}")
    if filename.startswith("~"):
        raise error(f"'~' paths are refused: give a name relative to {where}")
    parts = filename.split("/")
    for p in parts:
        if p in ("", "."):
            raise error(f"filename {filename[:80]!r} has an empty or '.' component")
        if p == "..":
            raise error(f"'..' is refused in filenames ({filename[:80]!r}): names stay inside {where}")
        if len(p.encode("utf-8")) > MAX_COMPONENT:
            raise error(f"a filename component is {len(p.encode())} bytes long; the limit is {MAX_COMPONENT}")
    return parts


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

"""The output directory's quota: how much it holds, measured without following a symlink.

Blocks: an export that would take the output directory past the profile's
``max_output_dir_bytes`` or ``max_output_dir_files`` (exports.py measures before each write,
under a lock shared by every session of the launcher). The walk itself is bounded: it stops
counting past the file-count cap and never goes deeper than ``MAX_WALK_DEPTH``.
Does not block: files the user (or another program) puts there; they count, nothing else.
"""
from __future__ import annotations

import os
import stat


class QuotaExceeded(ValueError):
    """The write would take the output directory past its quota; the message says which."""


MAX_WALK_DEPTH = 64


def measure_tree(root_fd: int, max_entries: int) -> tuple[int, int]:
    """(bytes, entries) under the directory ``root_fd``: regular files' sizes (a hard-linked
    file counted once) and every entry (files, directories, symlinks, others).

    Walked with ``openat(O_DIRECTORY|O_NOFOLLOW)`` and ``fstatat(AT_SYMLINK_NOFOLLOW)`` from the
    fd (symlinks are counted, never followed), depth-first with at most ``MAX_WALK_DEPTH`` open
    directory fds; stops counting once ``entries`` exceeds ``max_entries`` (the caller refuses
    then), so the cost is bounded by the file-count cap whatever the tree holds. Directories
    deeper than ``MAX_WALK_DEPTH`` are counted but not entered; unreadable ones are skipped.
    """
    total = entries = 0
    seen: set[tuple[int, int]] = set()
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    frames: list = []  # (fd, scandir iterator) per open directory, root first: len(frames) is the depth

    def enter(fd: int) -> None:
        try:
            frames.append((fd, os.scandir(fd)))  # scandir reads a dup of fd; fd itself is closed below
        except OSError:
            os.close(fd)

    try:
        enter(os.dup(root_fd))
        while frames:
            fd, it = frames[-1]
            try:
                e = next(it, None)
            except OSError:
                e = None
            if e is None:
                frames.pop()
                it.close()
                os.close(fd)
                continue
            entries += 1
            if entries > max_entries:
                break
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                if st.st_nlink > 1:
                    key = (st.st_dev, st.st_ino)
                    if key in seen:
                        continue
                    seen.add(key)
                total += st.st_size
            elif stat.S_ISDIR(st.st_mode) and len(frames) < MAX_WALK_DEPTH:
                try:
                    sub = os.open(e.name, flags, dir_fd=fd)
                except OSError:
                    continue
                enter(sub)
    finally:
        for fd, it in frames:
            it.close()
            os.close(fd)
    return total, entries


def check_quota(root_fd: int, limits, new_bytes: int, new_entries: int) -> None:
    """QuotaExceeded if writing ``new_bytes`` in ``new_entries`` more entries would take the output
    directory past the profile's ``max_output_dir_bytes`` / ``max_output_dir_files``."""
    max_bytes, max_files = limits.max_output_dir_bytes, limits.max_output_dir_files
    used, count = measure_tree(root_fd, max_files)
    if count + new_entries > max_files:
        raise QuotaExceeded(f"the output directory already holds {count if count <= max_files else 'over ' + str(max_files)}"
                          f" entries; with this export it would pass the profile's max_output_dir_files "
                          f"({max_files}). Move or delete earlier exports first")
    if used + new_bytes > max_bytes:
        raise QuotaExceeded(f"the output directory holds {used} bytes; this export ({new_bytes} bytes) would take it "
                          f"past the profile's max_output_dir_bytes ({max_bytes}). Move or delete earlier "
                          "exports first")

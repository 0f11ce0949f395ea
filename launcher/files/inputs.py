"""The user's own files, launcher side: list the input directory, read one file from it.

The input directory (``--input-dir`` or the profile's ``[inputs] dir``; none by default) is the
user's choice and trusted, and never in the jail's mount view. For ``import_file`` the launcher
reads one file there and sends its bytes to the session, which parses them in the jail
(jail/cad/importer.py). The file name comes from the AI and is treated as hostile.

Blocks, before any byte is read: names that are not plain relative paths (safepath.py); symlinks
at any component (walked with ``O_NOFOLLOW`` from the directory's fd); anything but a regular
file (a FIFO, socket or device is never opened for reading: ``O_PATH`` first, checked, then
re-opened through ``/proc/self/fd``, same inode); files with more than one hard link (one could
point at a secret elsewhere on the filesystem); files over ``max_input_bytes`` (the read stops at
the cap + 1 whatever ``st_size`` said). Does not block: whatever a file the user put there holds
(what it does to the parser is the jail's business); bind mounts the user made inside it.
"""
from __future__ import annotations

import base64
import errno
import hashlib
import itertools
import keyword
import os
import stat
from pathlib import Path

from jail.wire.caps import IMPORT_FORMATS

from launcher.files import safepath
from launcher.session import SessionError

FORMATS = IMPORT_FORMATS
ALIASES = {"stp": "step"}  # accepted by import_file's schema besides FORMATS
EXTENSIONS = {".step": "step", ".stp": "step", ".brep": "brep", ".brp": "brep", ".stl": "stl",
              ".3mf": "3mf", ".svg": "svg", ".dxf": "dxf"}
#: The jailed side reads one request of at most 64 MiB (jail/wire/protocol.py recv_simple); the bytes
#: travel base64-encoded in it, so no profile can raise the file cap past this.
WIRE_MAX_INPUT = 46 * 1024 * 1024
MAX_LISTED = 500          # list_inputs shows at most this many files
MAX_LIST_DEPTH = 8        # ... found at most this deep
MAX_LIST_SCAN = 20000     # ... looking at no more entries than this

HOW_TO_SET = ("no input directory is configured, so the session cannot read any of your files. Start the "
              "launcher with --input-dir DIR (e.g. `build123d-launcher mcp --input-dir ~/cad-in`), or set "
              "[inputs] dir = \"...\" in the profile, then put the files to import there")


class InputError(SessionError):
    """An input request that is refused; the message says why (shown to the user)."""


def check_input_name(filename) -> list[str]:
    """The components of a plain relative name under the input directory, or InputError."""
    return safepath.split_relative_name(filename, InputError, "the input directory (as listed by list_inputs)",
                                        "'part.step'")


def resolve_format(filename: str, fmt: str = "") -> str:
    """The format to read: ``fmt`` (one of FORMATS or ALIASES), or the extension's."""
    if fmt:
        return ALIASES.get(fmt, fmt)
    ext = os.path.splitext(filename.rsplit("/", 1)[-1])[1].lower()
    if ext not in EXTENSIONS:
        raise InputError(f"cannot tell the format of {filename[:80]!r} from its extension: pass format "
                         f"(one of {', '.join(FORMATS)})")
    return EXTENSIONS[ext]


def _root(input_dir) -> int:
    if not input_dir:
        raise InputError(HOW_TO_SET)
    return safepath.open_root(Path(input_dir), create=False, error=InputError, what="input directory")


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISDIR, "a directory"), (stat.S_ISLNK, "a symlink")):
        if test(mode):
            return name
    return "not a regular file"


def _refuse_entry(st: os.stat_result, shown: str, max_bytes: int) -> None:
    if not stat.S_ISREG(st.st_mode):
        extra = "; symlinks are never followed" if stat.S_ISLNK(st.st_mode) else ""
        raise InputError(f"{shown!r} is {_kind(st.st_mode)}, not a regular file{extra}: only regular files "
                         "are imported")
    if st.st_nlink > 1:
        raise InputError(f"{shown!r} has {st.st_nlink} hard links; files with more than one link are refused "
                         "(a hard link could point at a file outside the input directory). Copy the file instead")
    if st.st_size > max_bytes:
        raise InputError(f"{shown!r} is {st.st_size} bytes; the profile's max_input_bytes is {max_bytes}")


_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


def _open_checked(dfd: int, name: str, st: os.stat_result, shown: str, never: str, max_bytes: int) -> int:
    """A read fd of the regular file ``name`` in ``dfd`` that was ``st`` when checked.

    First an ``O_PATH | O_NOFOLLOW`` fd (opening it has no effect on any file type: a device or
    FIFO swapped in after the check is never really opened), ``fstat``-ed and checked again, then
    re-opened for reading through ``/proc/self/fd/N``, which reaches that very inode (no name is
    resolved again). Without /proc: ``openat(O_NOFOLLOW | O_NONBLOCK | O_NOCTTY)`` directly."""
    try:
        pfd = os.open(name, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dfd)
    except OSError as e:
        raise InputError(f"cannot open {shown!r}: {e.strerror}") from None
    try:
        pst = os.fstat(pfd)
        if (pst.st_dev, pst.st_ino) != (st.st_dev, st.st_ino):
            raise InputError(f"{shown!r} was replaced while it was being opened; try again")
        _refuse_entry(pst, shown, max_bytes)
        try:
            return os.open(f"/proc/self/fd/{pfd}", _READ_FLAGS & ~os.O_NOFOLLOW)
        except FileNotFoundError:
            pass  # no /proc: open by name (a FIFO swapped in cannot block: O_NONBLOCK)
        except OSError as e:
            raise InputError(f"cannot open {shown!r}: {e.strerror}") from None
    finally:
        os.close(pfd)
    try:
        return os.open(name, _READ_FLAGS, dir_fd=dfd)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise InputError(f"{shown!r} is a symlink; {never}") from None
        raise InputError(f"cannot open {shown!r}: {e.strerror}") from None


def read_input(input_dir, filename: str, max_bytes: int) -> tuple[bytes, dict]:
    """The bytes of ``filename`` under ``input_dir`` and ``{"filename", "size", "sha256"}``;
    InputError when refused (see the module docstring)."""
    parts = check_input_name(filename)
    shown = "/".join(parts)
    never = "symlinks are never followed (not even inside the input directory)"
    try:
        t = safepath.walk(_root(input_dir), parts, create=False, error=InputError, never=never)
    except FileNotFoundError:
        raise InputError(f"{shown!r} does not exist in the input directory (see list_inputs)") from None
    with t:
        last = parts[-1]
        try:
            st = os.stat(last, dir_fd=t.fd, follow_symlinks=False)
        except FileNotFoundError:
            raise InputError(f"{shown!r} does not exist in the input directory (see list_inputs)") from None
        except OSError as e:
            raise InputError(f"cannot read {shown!r}: {e.strerror}") from None
        _refuse_entry(st, shown, max_bytes)
        fd = _open_checked(t.fd, last, st, shown, never, max_bytes)
        try:
            st2 = os.fstat(fd)
            if (st2.st_dev, st2.st_ino) != (st.st_dev, st.st_ino):
                raise InputError(f"{shown!r} was replaced while it was being opened; try again")
            _refuse_entry(st2, shown, max_bytes)
            chunks, n = [], 0
            while n <= max_bytes:
                try:
                    b = os.read(fd, min(1 << 20, max_bytes + 1 - n))
                except BlockingIOError:  # cannot happen for a regular file; never wait
                    raise InputError(f"{shown!r} would block; refused") from None
                if not b:
                    break
                chunks.append(b)
                n += len(b)
            if n > max_bytes:
                raise InputError(f"{shown!r} grew past the profile's max_input_bytes ({max_bytes}) while it was read")
        except OSError as e:
            raise InputError(f"cannot read {shown!r}: {e.strerror}") from None
        finally:
            os.close(fd)
    data = b"".join(chunks)
    return data, {"filename": shown, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def list_inputs(input_dir, max_bytes: int) -> dict:
    """``{"input_dir", "files": [{"name", "size", "format"}], "skipped": [{"name", "why"}], "truncated"}``.

    Walked with ``openat(O_DIRECTORY|O_NOFOLLOW)`` from the root fd (symlinks listed as skipped,
    never followed), at most MAX_LIST_DEPTH deep, MAX_LIST_SCAN entries looked at, MAX_LISTED shown.
    Names that import_file would refuse are listed as skipped with the reason."""
    files: list[dict] = []
    skipped: list[dict] = []
    truncated = False
    scanned = 0
    stack = [(_root(input_dir), "")]
    try:
        while stack:
            fd, prefix = stack.pop()
            try:  # never more than the scan budget read from one directory, however large it is
                with os.scandir(fd) as it:
                    entries = sorted(itertools.islice(it, MAX_LIST_SCAN - scanned + 1), key=lambda e: e.name)
            except OSError:
                entries = []
            for e in entries:
                scanned += 1
                if scanned > MAX_LIST_SCAN or len(files) >= MAX_LISTED:
                    truncated = True
                    break
                name = prefix + e.name
                try:
                    st = e.stat(follow_symlinks=False)
                    check_input_name(name)
                except InputError as err:
                    skipped.append({"name": ascii(name)[1:-1][:200], "why": str(err)[:200]})
                    continue
                except OSError:
                    continue
                if stat.S_ISDIR(st.st_mode):
                    if name.count("/") + 1 < MAX_LIST_DEPTH:
                        try:
                            stack.append((os.open(e.name, safepath.DIR_FLAGS, dir_fd=fd), name + "/"))
                        except OSError:
                            pass
                    continue
                try:
                    _refuse_entry(st, name, max_bytes)
                except InputError as err:
                    skipped.append({"name": name[:200], "why": str(err)[:300]})
                    continue
                fmt = EXTENSIONS.get(os.path.splitext(e.name)[1].lower())
                if fmt is None:
                    skipped.append({"name": name[:200], "why": "unknown extension (importable: "
                                                             + ", ".join(sorted(EXTENSIONS)) + ")"})
                    continue
                files.append({"name": name, "size": st.st_size, "format": fmt})
            os.close(fd)
            if truncated:
                break
    finally:
        for fd, _ in stack:
            os.close(fd)
    files.sort(key=lambda f: f["name"])
    return {"input_dir": str(Path(input_dir).absolute()), "files": files, "skipped": skipped[:100],
            "truncated": truncated}


def check_object_name(name) -> str:
    if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name) or name.startswith("__") \
            or not name.isascii():
        raise InputError(f"name must be a plain Python identifier to bind in the session (e.g. 'bracket'), "
                         f"got {ascii(name)[:80]}")
    return name


def import_request(input_dir, filename, name, fmt, max_bytes: int) -> tuple[dict, str, dict]:
    """The jail request for ``import_file`` (bytes read and checked here), the note recorded for
    the audit log, and the file's info."""
    check_object_name(name)
    max_bytes = min(max_bytes, WIRE_MAX_INPUT)
    parts = check_input_name(filename)
    f = resolve_format("/".join(parts), fmt)
    data, info = read_input(input_dir, filename, max_bytes)
    if not data:
        raise InputError(f"{info['filename']!r} is empty")
    req = {"t": "import", "name": name, "format": f, "filename": info["filename"], "sha256": info["sha256"],
           "data": base64.b64encode(data).decode("ascii")}
    note = f"# import_file({info['filename']!r}, name={name!r}, format={f!r}) sha256={info['sha256']}"
    return req, note, {**info, "format": f}


def exposed_by(profile, input_dir) -> str | None:
    """The profile read path (visible to jailed code) that contains ``input_dir``, if any: then
    jailed code could read the input directory directly, which the design rules out."""
    d = os.path.realpath(input_dir)
    for p in getattr(profile, "read_paths", ()):
        rp = os.path.realpath(p)
        if d == rp or d.startswith(rp.rstrip("/") + "/"):
            return p
    return None

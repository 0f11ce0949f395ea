"""The user's own files, launcher side: what list_inputs offers, and reading one for import_file.

The input directory (``--input-dir`` or the profile's ``[inputs] dir``; none by default) is the
user's choice and trusted, and never in the jail's mount view. The file name comes from the AI and
is treated as hostile. One rule, :func:`importable`, decides what both tools accept: a regular file
(no symlink at any component, one hard link, not a FIFO, socket or device) with the extension of a
supported format, no component starting with ``.`` (dot directories are not even entered; their
names, and those of non-CAD files, are never listed), at most ``max_input_bytes``. ``format`` only
has to agree with the extension. :func:`reading` takes the file's bytes from the launcher-wide
budget (inflight.py), reads them once into one buffer (``O_PATH`` first, checked, re-opened through
``/proc/self/fd``, same inode; the read stops at the size checked) for the raw blob to the jail.
Does not block: what a CAD file the user put there holds (parsing it is the jail's business; the
reply is worded by launcher/replies/imports.py); bind mounts the user made inside it.
"""
from __future__ import annotations

import errno
import hashlib
import itertools
import keyword
import os
import stat
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from jail.wire.caps import IMPORT_FORMATS

from launcher.files import inflight, safepath
from launcher.files.inflight import WIRE_MAX_INPUT
from launcher.session import SessionError

FORMATS = IMPORT_FORMATS
ALIASES = {"stp": "step"}  # accepted by import_file's schema besides FORMATS
EXTENSIONS = {".step": "step", ".stp": "step", ".brep": "brep", ".brp": "brep", ".stl": "stl",
              ".3mf": "3mf", ".svg": "svg", ".dxf": "dxf"}
MAX_LISTED = 500          # list_inputs shows at most this many files
MAX_LIST_DEPTH = 8        # ... found at most this deep
MAX_LIST_SCAN = 20000     # ... looking at no more entries than this

HOW_TO_SET = ("no input directory is configured, so the session cannot read any of your files. Start the "
              "launcher with --input-dir DIR (e.g. `build123d-launcher mcp --input-dir ~/cad-in`), or set "
              "[inputs] dir = \"...\" in the profile, then put the files to import there")
OFFERED = ("import_file reads only what list_inputs offers: regular files named *"
           + ", *".join(sorted(EXTENSIONS)) + ", with no part of the name starting with '.'")


class InputError(SessionError):
    """An input request that is refused; the message says why (shown to the user). ``quiet``: the
    name is not listed by list_inputs (a dot name or not a CAD file), only counted."""

    def __init__(self, message: str, quiet: bool = False):
        super().__init__(message)
        self.quiet = quiet


class Missing(InputError):
    """The name is not in the input directory (a literal that names no offered file is no error)."""


def check_input_name(filename) -> list[str]:
    """The components of a plain relative name under the input directory, or InputError."""
    return safepath.split_relative_name(filename, InputError, "the input directory (as listed by list_inputs)",
                                        "'part.step'")


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
        raise InputError(f"{shown!r} is {st.st_size} bytes; the limit is {max_bytes} (the profile's "
                         f"max_input_bytes, at most {WIRE_MAX_INPUT}: what the jail reads in one request)")


def importable(parts: list[str], st: os.stat_result | None, max_bytes: int, fmt: str = "") -> str:
    """The format of the input ``parts`` (checked components) whose ``lstat`` is ``st`` if
    import_file may read it, else InputError. The one rule of list_inputs and import_file; with
    ``st`` None only the name is checked (before anything is opened). ``fmt`` ('' or a format or
    alias) must agree with the extension; it never makes another file importable."""
    shown = "/".join(parts)
    dot = next((p for p in parts if p.startswith(".")), None)
    if dot is not None:
        raise InputError(f"{shown[:200]!r} has a part starting with '.' ({dot[:80]!r}); "
                         f"such files and directories (settings, secrets, .git) are never read. {OFFERED}",
                         quiet=True)
    if st is not None and stat.S_ISLNK(st.st_mode):
        _refuse_entry(st, shown, max_bytes)
    ext = os.path.splitext(parts[-1])[1].lower()
    own = EXTENSIONS.get(ext)
    if own is None:
        raise InputError(f"{shown[:200]!r} is not a CAD file of a supported format"
                         f"{' (' + repr(ext[:20]) + ')' if ext else ' (no extension)'}; format= cannot change "
                         f"that. {OFFERED}", quiet=True)
    if fmt and ALIASES.get(fmt, fmt) != own:
        raise InputError(f"format {fmt[:20]!r} does not match {shown[:200]!r}, whose extension {ext!r} is "
                         f"{own.upper()}: leave format empty (the extension decides) or pass {own!r}")
    if st is not None:
        _refuse_entry(st, shown, max_bytes)
    return own


def resolve_format(filename: str, fmt: str = "") -> str:
    """The format import_file reads ``filename`` as (its extension's), checked by :func:`importable`."""
    return importable(check_input_name(filename), None, 0, fmt)


def _root(input_dir) -> int:
    if not input_dir:
        raise InputError(HOW_TO_SET)
    return safepath.open_root(Path(input_dir), create=False, error=InputError, what="input directory")


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


def _open(input_dir, parts: list[str], max_bytes: int, fmt: str) -> tuple[int, os.stat_result, str]:
    """A read fd of the importable file ``parts``, its checked ``fstat`` and its format."""
    shown = "/".join(parts)
    never = "symlinks are never followed (not even inside the input directory)"
    try:
        t = safepath.walk(_root(input_dir), parts, create=False, error=InputError, never=never)
    except FileNotFoundError:
        raise Missing(f"{shown!r} does not exist in the input directory (see list_inputs)") from None
    with t:
        last = parts[-1]
        try:
            st = os.stat(last, dir_fd=t.fd, follow_symlinks=False)
        except FileNotFoundError:
            raise Missing(f"{shown!r} does not exist in the input directory (see list_inputs)") from None
        except OSError as e:
            raise InputError(f"cannot read {shown!r}: {e.strerror}") from None
        f = importable(parts, st, max_bytes, fmt)
        fd = _open_checked(t.fd, last, st, shown, never, max_bytes)
    try:
        st2 = os.fstat(fd)
        if (st2.st_dev, st2.st_ino) != (st.st_dev, st.st_ino):
            raise InputError(f"{shown!r} was replaced while it was being opened; try again")
        importable(parts, st2, max_bytes, fmt)
        if st2.st_size == 0:
            raise InputError(f"{shown!r} is empty")
        return fd, st2, f
    except BaseException:
        os.close(fd)
        raise


def _read_exactly(fd: int, size: int, shown: str) -> bytearray:
    """The ``size`` bytes of ``fd`` in one buffer (no chunk list joined: one copy of the file)."""
    buf = bytearray(size)
    _read_into(fd, memoryview(buf), shown)
    return buf


def _read_into(fd: int, view: memoryview, shown: str) -> None:
    """Fill ``view`` with the bytes of ``fd``, exactly (InputError if the file shrank or grew)."""
    size, n = len(view), 0
    try:
        with open(fd, "rb", buffering=0, closefd=False) as f:
            while n < size:
                k = f.readinto(view[n:])
                if k is None:  # cannot happen for a regular file; never wait
                    raise InputError(f"{shown!r} would block; refused")
                if not k:
                    raise InputError(f"{shown!r} shrank while it was read; try again")
                n += k
            if f.read(1):
                raise InputError(f"{shown!r} grew while it was read; try again")
    except OSError as e:
        raise InputError(f"cannot read {shown!r}: {e.strerror}") from None
    finally:
        view.release()


@dataclass
class Input:
    """A file read for import_file: its bytes and ``info`` (``filename``, ``size``, ``sha256``, ``format``)."""
    data: bytearray
    info: dict


@contextmanager
def reading(input_dir, filename, max_bytes: int, fmt: str = "", *, wait_s: float = 60.0, budget=None):
    """``with reading(...) as inp``: the checked file's bytes, held in the launcher-wide ``budget``
    (default ``inflight.IMPORTS``) for the block (Busy when no room comes free within ``wait_s``);
    InputError when refused."""
    budget = budget or inflight.IMPORTS
    if input_dir is None:
        raise InputError(HOW_TO_SET)
    max_bytes = min(max_bytes, WIRE_MAX_INPUT)
    parts = check_input_name(filename)
    importable(parts, None, max_bytes, fmt)  # the name alone, before anything is opened
    fd, st, f = _open(input_dir, parts, max_bytes, fmt)
    shown = "/".join(parts)
    try:
        with budget.hold(st.st_size, wait_s):
            data = _read_exactly(fd, st.st_size, shown)
            os.close(fd)
            fd = -1
            info = {"filename": shown, "size": len(data), "sha256": hashlib.sha256(data).hexdigest(), "format": f}
            inp = Input(data, info)
            try:
                yield inp
            finally:
                inp.data = bytearray()  # the budget is given back: so is the memory
                del data
    finally:
        if fd >= 0:
            os.close(fd)


@contextmanager
def reading_many(input_dir, filenames, max_bytes: int, max_total: int, max_files: int, *, wait_s: float = 60.0,
                 budget=None):
    """``with reading_many(...) as (infos, data, refused)``: the files among ``filenames`` that
    :func:`importable` accepts, read (same checked open as :func:`reading`) into one buffer
    ``data`` (their bytes in ``infos`` order), held in ``budget`` as one amount for the block.
    Names list_inputs could not offer and files that do not exist are skipped silently; files
    refused (a symlink, hard links, too large...), and those past ``max_files`` or ``max_total``
    bytes together, are in ``refused`` (``[{"name", "why"}]``)."""
    budget = budget or inflight.IMPORTS
    max_bytes = min(max_bytes, WIRE_MAX_INPUT)
    opened: list[tuple[int, os.stat_result, str, str]] = []  # fd, stat, format, shown
    refused: list[dict] = []
    total = 0
    try:
        for filename in filenames:
            try:
                parts = check_input_name(filename)
                importable(parts, None, max_bytes)
            except InputError:
                continue  # not a name list_inputs could offer: not a file of the input directory
            shown = "/".join(parts)
            try:
                fd, st, f = _open(input_dir, parts, max_bytes, "")
            except Missing:
                continue
            except InputError as e:
                if not e.quiet:
                    refused.append({"name": shown[:200], "why": str(e)[:300]})
                continue
            if len(opened) >= max_files or total + st.st_size > max_total:
                os.close(fd)
                refused.append({"name": shown[:200], "why": f"not sent: the files a call reads are at most {max_files} "
                                                             f"and {max_total} bytes together"})
                continue
            opened.append((fd, st, f, shown))
            total += st.st_size
        with budget.hold(total, wait_s):
            data = bytearray(total)
            view, at, infos = memoryview(data), 0, []
            try:
                for fd, st, f, shown in opened:
                    _read_into(fd, view[at:at + st.st_size], shown)
                    infos.append({"name": shown, "size": st.st_size, "format": f,
                                  "sha256": hashlib.sha256(view[at:at + st.st_size]).hexdigest()})
                    at += st.st_size
            finally:
                view.release()
            for fd, *_ in opened:
                os.close(fd)
            opened = []
            try:
                yield infos, data, refused
            finally:
                data = bytearray()
    finally:
        for fd, *_ in opened:
            os.close(fd)


def read_input(input_dir, filename: str, max_bytes: int, fmt: str = "") -> tuple[bytes, dict]:
    """The bytes of ``filename`` under ``input_dir`` and its info (see :func:`reading`)."""
    with reading(input_dir, filename, max_bytes, fmt) as inp:
        return bytes(inp.data), inp.info


def list_inputs(input_dir, max_bytes: int) -> dict:
    """``{"input_dir", "files": [{"name", "size", "format"}], "skipped": [{"name", "why"}], "hidden",
    "other", "truncated"}``: what :func:`importable` accepts, walked without following a symlink
    (``openat(O_DIRECTORY|O_NOFOLLOW)`` from the root fd), at most MAX_LIST_DEPTH deep, MAX_LIST_SCAN
    entries looked at, MAX_LISTED shown. CAD files it refuses are listed as skipped with the reason;
    dot names (never entered) and other files are only counted (``hidden``, ``other``)."""
    max_bytes = min(max_bytes, WIRE_MAX_INPUT)
    files: list[dict] = []
    skipped: list[dict] = []
    hidden = other = 0
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
                if e.name.startswith("."):
                    hidden += 1
                    continue
                try:
                    st = e.stat(follow_symlinks=False)
                    parts = check_input_name(name)
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
                    fmt = importable(parts, st, max_bytes)
                except InputError as err:
                    if err.quiet:
                        other += 1
                    else:
                        skipped.append({"name": name[:200], "why": str(err)[:300]})
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
            "hidden": hidden, "other": other, "truncated": truncated}


def check_object_name(name) -> str:
    if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name) or name.startswith("__") \
            or not name.isascii():
        raise InputError(f"name must be a plain Python identifier to bind in the session (e.g. 'bracket'), "
                         f"got {ascii(name)[:80]}")
    return name


def import_request(inp: Input, name: str) -> tuple[dict, str]:
    """The jail request for ``import_file`` of ``inp`` (its bytes go as the raw blob beside it) and
    the line the audit log records."""
    i = inp.info
    req = {"t": "import", "name": name, "format": i["format"], "filename": i["filename"], "size": i["size"],
           "sha256": i["sha256"]}
    note = f"# import_file({i['filename']!r}, name={name!r}, format={i['format']!r}) sha256={i['sha256']}"
    return req, note


def exposed_by(profile, input_dir) -> str | None:
    """The profile read path (visible to jailed code) that contains ``input_dir``, if any: then
    jailed code could read the input directory directly, which the design rules out."""
    d = os.path.realpath(input_dir)
    for p in getattr(profile, "read_paths", ()):
        rp = os.path.realpath(p)
        if d == rp or d.startswith(rp.rstrip("/") + "/"):
            return p
    return None

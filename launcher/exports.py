"""Exports, launcher side: the only code that writes a file for the user.

The jailed session serialises the object (jail/serialize.py) and sends the
bytes over its socket; this module writes them under the output directory
(DESIGN.md invariant 5). The file name comes from the AI (so, potentially,
from a prompt injection) and is treated as hostile:

* relative names only: absolute paths, ``..``, ``.``, empty components
  (``a//b``), NUL bytes and control characters are refused, as are names
  with a component over 255 bytes or over 1024 bytes in total;
* the path is walked one component at a time from an fd of the output
  directory with ``O_DIRECTORY | O_NOFOLLOW`` (``openat``): a symlink
  anywhere below the output directory is refused, never followed; missing
  sub-directories are created (0700) with ``mkdirat`` and re-opened the
  same way, so a symlink swapped in meanwhile is caught too;
* no overwrite: the data goes to a fresh temp file in the target directory
  (``O_CREAT | O_EXCL | O_NOFOLLOW``), is fsynced, then ``linkat``-ed to
  its name, which fails if anything (a file, a dangling symlink) is there;
  a reader never sees a half-written file;
* size cap: the profile's ``max_export_bytes`` (checked in the jail and
  again here);
* the format comes from the extension when not given, and must agree with it.

The output directory itself (default ``./build123d-out``) is the user's
choice and is trusted; it is created 0700 when missing.

The reply reports what the jailed side measured when it re-imported the
bytes (volume, bbox): those numbers are untrusted and only validated numbers
are passed on. The launcher never parses the exported file.
"""
from __future__ import annotations

import errno
import hashlib
import math
import os
import secrets
import stat
from pathlib import Path

from .session import SessionError

FORMATS = ("step", "stl", "brep", "svg", "dxf", "3mf")
EXTENSIONS = {".step": "step", ".stp": "step", ".stl": "stl", ".brep": "brep", ".brp": "brep",
              ".svg": "svg", ".dxf": "dxf", ".3mf": "3mf"}
MAX_COMPONENT = 255
MAX_TOTAL = 1024


class ExportError(SessionError):
    """An export request that is refused; the message says why (shown to the user)."""


def check_filename(filename) -> list[str]:
    """The components of a safe relative file name, or ExportError."""
    if not isinstance(filename, str) or not filename:
        raise ExportError("filename must be a non-empty relative path such as 'part.step' or 'v2/part.stl'")
    if "\x00" in filename:
        raise ExportError("filename contains a NUL byte")
    if any(ord(c) < 32 or ord(c) == 127 for c in filename):
        raise ExportError("filename contains a control character")
    try:
        raw = filename.encode("utf-8")
    except UnicodeEncodeError:
        raise ExportError("filename is not valid UTF-8") from None
    if len(raw) > MAX_TOTAL:
        raise ExportError(f"filename is {len(raw)} bytes long; the limit is {MAX_TOTAL}")
    if filename.startswith("/"):
        raise ExportError(f"absolute paths are refused ({filename[:80]!r}): give a name relative to "
                          "the output directory")
    if filename.startswith("~"):
        raise ExportError("'~' paths are refused: give a name relative to the output directory")
    parts = filename.split("/")
    for p in parts:
        if p in ("", "."):
            raise ExportError(f"filename {filename[:80]!r} has an empty or '.' component")
        if p == "..":
            raise ExportError(f"'..' is refused in filenames ({filename[:80]!r}): exports stay inside "
                              "the output directory")
        if len(p.encode("utf-8")) > MAX_COMPONENT:
            raise ExportError(f"a filename component is {len(p.encode())} bytes long; the limit is {MAX_COMPONENT}")
    if parts[-1].startswith(".") and parts[-1].endswith(".tmp"):
        raise ExportError("names of the form '.*.tmp' are reserved for temporary files")
    return parts


def resolve_format(filename: str, fmt) -> str:
    name = filename.rsplit("/", 1)[-1]
    ext = os.path.splitext(name)[1].lower()
    from_ext = EXTENSIONS.get(ext)
    if fmt is None or fmt == "":
        if from_ext is None:
            raise ExportError(f"cannot tell the format from {name!r}: use an extension "
                              f"({', '.join(sorted(EXTENSIONS))}) or pass format")
        return from_ext
    if not isinstance(fmt, str):
        raise ExportError("format must be a string")
    f = fmt.lower().lstrip(".")
    f = {"stp": "step", "brp": "brep"}.get(f, f)
    if f not in FORMATS:
        raise ExportError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    if from_ext != f:
        raise ExportError(f"the extension of {name!r} does not match format {f!r}: name the file "
                          f"'*.{f}' (or leave format empty)")
    return f


def _open_root(output_dir: Path) -> int:
    try:
        os.makedirs(output_dir, mode=0o700, exist_ok=True)
    except OSError as e:
        raise ExportError(f"cannot create the output directory {output_dir}: {e.strerror}") from None
    try:
        return os.open(output_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as e:
        raise ExportError(f"cannot open the output directory {output_dir}: {e.strerror}") from None


def _open_subdir(dfd: int, name: str, shown: str, create: bool) -> int:
    flags = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        return os.open(name, flags, dir_fd=dfd)
    except FileNotFoundError:
        if not create:
            raise
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENOTDIR):
            kind = "a symlink" if _is_symlink(dfd, name) else "not a directory"
            raise ExportError(f"{shown!r} is {kind}; exports never follow symlinks or write through them") from None
        raise ExportError(f"cannot open {shown!r}: {e.strerror}") from None
    try:
        os.mkdir(name, 0o700, dir_fd=dfd)
    except FileExistsError:
        pass
    except OSError as e:
        raise ExportError(f"cannot create directory {shown!r}: {e.strerror}") from None
    try:
        return os.open(name, flags, dir_fd=dfd)
    except OSError as e:
        raise ExportError(f"cannot open {shown!r}: {e.strerror}") from None


def _is_symlink(dfd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dfd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _exists(dfd: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=dfd, follow_symlinks=False)
        return True
    except FileNotFoundError:
        return False


def open_target_dir(output_dir: Path, parts: list[str]) -> int:
    """An fd of the directory that will hold ``parts[-1]``, walked without following symlinks."""
    fd = _open_root(output_dir)
    try:
        for i, p in enumerate(parts[:-1]):
            nfd = _open_subdir(fd, p, "/".join(parts[:i + 1]), create=True)
            os.close(fd)
            fd = nfd
        return fd
    except BaseException:
        os.close(fd)
        raise


def write_new_file(dfd: int, name: str, data: bytes, shown: str) -> None:
    """Atomically create ``name`` in ``dfd`` with ``data``; never replaces anything."""
    if _exists(dfd, name):
        raise ExportError(f"{shown!r} already exists; exports never overwrite (pick another name)")
    tmp = f".{name[:200]}.{secrets.token_hex(6)}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=dfd)
    except OSError as e:
        raise ExportError(f"cannot create a file next to {shown!r}: {e.strerror}") from None
    try:
        try:
            view = memoryview(data)
            while view:
                n = os.write(fd, view)
                view = view[n:]
            os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.link(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd, follow_symlinks=False)
        except FileExistsError:
            raise ExportError(f"{shown!r} already exists; exports never overwrite (pick another name)") from None
        except OSError as e:
            raise ExportError(f"cannot write {shown!r}: {e.strerror}") from None
    except OSError as e:
        raise ExportError(f"cannot write {shown!r}: {e.strerror}") from None
    finally:
        try:
            os.unlink(tmp, dir_fd=dfd)
        except OSError:
            pass
    try:
        os.fsync(dfd)
    except OSError:
        pass


# ------------------------------------------------------------ untrusted meta
def _num(x):
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    return float(x) if math.isfinite(x) else None


def _bbox(b):
    if not isinstance(b, dict):
        return None
    out = {}
    for k in ("min", "max", "size"):
        v = b.get(k)
        if not isinstance(v, list) or len(v) != 3:
            return None
        out[k] = [_num(x) for x in v]
    return out


def _clean_measure(d) -> dict:
    if not isinstance(d, dict):
        return {}
    out = {}
    if "volume" in d and _num(d.get("volume")) is not None:
        out["volume"] = _num(d["volume"])
    if "bbox" in d and _bbox(d.get("bbox")) is not None:
        out["bbox"] = _bbox(d["bbox"])
    for k in ("triangles", "solids", "shapes"):
        v = d.get(k)
        if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2 ** 53:
            out[k] = v
    return out


def export_object(session, output_dir, object_name, filename, format="") -> dict:
    """Export ``object_name`` from ``session`` to ``output_dir/filename``; the reply dict.

    Raises ExportError (a SessionError: the tool layer turns it into ``{"error": ...}``).
    """
    if not isinstance(object_name, str) or not object_name.isidentifier():
        raise ExportError(f"object_name must be a top-level name in the session, got {object_name!r}")
    parts = check_filename(filename)
    fmt = resolve_format(filename, format)
    output_dir = Path(output_dir)
    dfd = open_target_dir(output_dir, parts)
    try:
        shown = "/".join(parts)
        if _exists(dfd, parts[-1]):  # fail before asking the jail for the bytes
            raise ExportError(f"{shown!r} already exists; exports never overwrite (pick another name)")
        meta, data = session.export_bytes(object_name, fmt)
        cap = session.profile.limits.max_export_bytes
        if not isinstance(data, (bytes, bytearray)) or len(data) > cap:
            raise ExportError(f"the export is larger than the profile's max_export_bytes ({cap})")
        write_new_file(dfd, parts[-1], bytes(data), shown)
    finally:
        os.close(dfd)
    reply = {"path": str(output_dir.absolute() / shown), "size": len(data), "format": fmt,
             "sha256": hashlib.sha256(data).hexdigest()}
    check = _clean_measure(meta.get("check"))
    reply.update({k: v for k, v in check.items()})
    source = _clean_measure(meta.get("source"))
    if source:
        reply["source"] = source
    if isinstance(meta.get("view"), str):
        reply["view"] = meta["view"][:200]
    return reply

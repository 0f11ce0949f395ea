"""Exports, launcher side: the only code that writes a file for the user.

The jailed session serialises the object (jail/serialize.py) and sends the
bytes over its socket; this module writes them under the output directory
(docs/ARCHITECTURE.md, rule 5). The file name comes from the AI (so, potentially,
from a prompt injection) and is treated as hostile:

* relative names only: absolute paths, ``..``, ``.``, empty components
  (``a//b``), NUL bytes are refused, as are names with a component over 255
  bytes or over 1024 bytes in total;
* names that could pass for another name are refused: Unicode control
  characters (C0 and C1, e.g. U+0085), format characters (bidi overrides and
  isolates such as U+202E, zero-width characters such as U+200B, the soft
  hyphen U+00AD, tag characters), line/paragraph separators, spaces other
  than U+0020, private-use, surrogate and unassigned code points, components
  made only of dots and spaces, and components that start or end with a
  space or end with a dot. Error messages show the code point (``U+202E``),
  never the raw character;
* the path is walked one component at a time from an fd of the output
  directory with ``O_DIRECTORY | O_NOFOLLOW`` (``openat``): a symlink
  anywhere below the output directory is refused, never followed; missing
  sub-directories are created (0700) with ``mkdirat`` and re-opened the
  same way, so a symlink swapped in meanwhile is caught too;
* no overwrite: the data goes to a fresh temp file in the target directory
  (``O_CREAT | O_EXCL | O_NOFOLLOW``), is fsynced, then ``linkat``-ed to
  its name, which fails if anything (a file, a dangling symlink) is there;
  a reader never sees a half-written file;
* nothing left behind by a failed export: the sub-directories a call
  creates are removed again if it fails (deepest first, each only if empty
  and still the directory it made, by ``unlinkat(parent_fd, name,
  AT_REMOVEDIR)`` on the fds of the walk, no path resolved again); the
  directories are made only once the bytes are back from the jail and
  checked;
* size cap: the profile's ``max_export_bytes`` (checked in the jail and
  again here); a total quota for the output directory,
  ``max_output_dir_bytes`` and ``max_output_dir_files``, measured before each
  write by a bounded walk (``fstatat``, no symlink followed) under a lock
  shared by every session of this launcher;
* SVG: checked for active content (script, event handlers, external
  references, DTDs) by ``jail/svgcheck.py`` and refused, never rewritten;
* the format comes from the extension when not given, and must agree with it.

The output directory itself (default ``./build123d-out``) is the user's
choice and is trusted; it is created 0700 when missing.

The reply reports what the jailed side measured when it re-imported the
bytes (volume, bbox): those numbers are untrusted and only validated numbers
are passed on. The launcher never parses the exported file, except the
outer format of an SVG (markup and attribute syntax, with expat, no DTD):
a byte-level validation of a file the user will open in a browser, which
interprets no CAD data.
"""
from __future__ import annotations

import hashlib
import math
import os
import secrets
import stat
import threading
from pathlib import Path

from jail.wire.svgcheck import SvgRefused, check_svg

from launcher.files import safepath
from launcher.session import SessionError

_WRITE_LOCK = threading.Lock()

FORMATS = ("step", "stl", "brep", "svg", "dxf", "3mf", "py")  # py: the session's script (launcher/script.py)
EXTENSIONS = {".step": "step", ".stp": "step", ".stl": "stl", ".brep": "brep", ".brp": "brep",
              ".svg": "svg", ".dxf": "dxf", ".3mf": "3mf", ".py": "py"}


class ExportError(SessionError):
    """An export request that is refused; the message says why (shown to the user)."""


def check_filename(filename) -> list[str]:
    """The components of a safe relative file name, or ExportError (safepath.split_relative_name, plus:
    no component of only dots and spaces, none that starts or ends with a space or ends with a dot, no
    reserved temp name)."""
    parts = safepath.split_relative_name(filename, ExportError, "the output directory", "'part.step' or 'v2/part.stl'")
    for p in parts:
        if p.strip(". ") == "":
            raise ExportError(f"filename {filename[:80]!r} has a component made only of dots and spaces")
        if p != p.strip(" ") or p.endswith("."):
            raise ExportError(f"filename component {p[:80]!r} starts or ends with a space, or ends with a dot "
                              "(easy to mistake for another name)")
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


# The walk is launcher/safepath.py's (shared with inputs); these names keep exports' messages.
_NEVER = "exports never follow symlinks or write through them"
_is_symlink = safepath.is_symlink
_exists = safepath.exists
TargetDir = safepath.TargetDir


def _open_subdir(dfd: int, name: str, shown: str, create: bool, made: list | None = None) -> int:
    """An fd of directory ``name`` in ``dfd`` (never through a symlink); see safepath.open_subdir."""
    return safepath.open_subdir(dfd, name, shown, create, made, error=ExportError, never=_NEVER)


def open_target_dir(output_dir: Path, parts: list[str], *, create: bool = True) -> TargetDir:
    """The directory that will hold ``parts[-1]``, walked without following symlinks
    (safepath.walk from the output directory's fd).

    With ``create`` false a missing component raises FileNotFoundError (nothing is made)."""
    return safepath.walk(_open_root(output_dir), parts, create=create, error=ExportError, never=_NEVER)


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


# ------------------------------------------------------------ output directory quota
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
    """ExportError if writing ``new_bytes`` in ``new_entries`` more entries would take the output
    directory past the profile's ``max_output_dir_bytes`` / ``max_output_dir_files``."""
    max_bytes, max_files = limits.max_output_dir_bytes, limits.max_output_dir_files
    used, count = measure_tree(root_fd, max_files)
    if count + new_entries > max_files:
        raise ExportError(f"the output directory already holds {count if count <= max_files else 'over ' + str(max_files)}"
                          f" entries; with this export it would pass the profile's max_output_dir_files "
                          f"({max_files}). Move or delete earlier exports first")
    if used + new_bytes > max_bytes:
        raise ExportError(f"the output directory holds {used} bytes; this export ({new_bytes} bytes) would take it "
                          f"past the profile's max_output_dir_bytes ({max_bytes}). Move or delete earlier "
                          "exports first")


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
    shown = "/".join(parts)
    # fail before asking the jail for the bytes (nothing is created yet)
    try:
        probe = open_target_dir(output_dir, parts, create=False)
    except FileNotFoundError:
        pass  # a directory on the way is missing: the file cannot exist
    else:
        try:
            if _exists(probe.fd, parts[-1]):
                raise ExportError(f"{shown!r} already exists; exports never overwrite (pick another name)")
        finally:
            probe.close()
    if fmt == "py":  # the session's successful code as a script (object_name is not used)
        from launcher.files.script import script
        meta, data = {}, script(session)["script"].encode("utf-8", "surrogatepass")
    else:
        meta, data = session.export_bytes(object_name, fmt)
    limits = session.profile.limits
    cap = limits.max_export_bytes
    if not isinstance(data, (bytes, bytearray)) or len(data) > cap:
        raise ExportError(f"the export is larger than the profile's max_export_bytes ({cap})")
    data = bytes(data)
    if fmt == "svg":
        try:
            check_svg(data)
        except SvgRefused as e:
            raise ExportError(f"the SVG from the session was refused, nothing was written: {e}") from None
    with _WRITE_LOCK:  # one export at a time is measured and written (the quota holds across clients)
        t = open_target_dir(output_dir, parts)
        try:
            check_quota(t.fds[0], limits, len(data), 1)  # the walk counts the dirs just made
            write_new_file(t.fd, parts[-1], data, shown)
        except BaseException:
            t.remove_created()
            raise
        finally:
            t.close()
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

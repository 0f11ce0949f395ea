"""Exports, launcher side: the only code that writes a file for the user (docs/ARCHITECTURE.md, rule 5).

The jailed session serialises the object and sends the bytes; this module writes them under the
output directory (the user's choice, trusted, created 0700). The file name comes from the AI, so
possibly from a prompt injection, and is treated as hostile.

Blocks: names that are not plain relative paths or could pass for another name
(:func:`check_filename`, safepath.py); a symlink anywhere below the output directory (walked one
component at a time from its fd, ``O_NOFOLLOW``); overwriting (a fresh temp file, fsynced, then
``linkat``-ed to a free name: no reader sees half a file); leftovers of a failed export (the
directories it made are removed again); files over ``max_export_bytes``; an output directory past
its quota (quota.py); SVGs with active content (jail/wire/svgcheck.py: refused, never rewritten).
Does not block: a session that lies about its own model. The reply's numbers (volume, bbox) are
untrusted and only validated ones are passed on; no export is parsed, except an SVG's markup.
"""
from __future__ import annotations

import hashlib
import math
import os
import secrets
import threading
from pathlib import Path

from jail.wire.caps import EXPORT_FORMATS
from jail.wire.svgcheck import SvgRefused, check_svg

from launcher.files import quota, safepath
from launcher.files.script import session_script
from launcher.session import SessionError

_WRITE_LOCK = threading.Lock()

FORMATS = (*EXPORT_FORMATS, "py")  # py: the session's script (script.py)
ALIASES = {"stp": "step", "brp": "brep"}
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


def canonical_format(fmt):
    """An accepted spelling of a format as its name ('STP', '.step', 'Step' -> 'step'); anything
    else is returned unchanged (the tool's schema then refuses it)."""
    if not isinstance(fmt, str):
        return fmt
    f = fmt.lower().lstrip(".")
    f = ALIASES.get(f, f)
    return f if f in FORMATS else fmt


def resolve_format(filename: str, fmt: str = "") -> str:
    """The format to write: ``fmt`` (one of FORMATS) if the extension agrees, or the extension's."""
    name = filename.rsplit("/", 1)[-1]
    from_ext = EXTENSIONS.get(os.path.splitext(name)[1].lower())
    if not fmt:
        if from_ext is None:
            raise ExportError(f"cannot tell the format from {name!r}: use an extension "
                              f"({', '.join(sorted(EXTENSIONS))}) or pass format")
        return from_ext
    if from_ext != fmt:
        raise ExportError(f"the extension of {name!r} does not match format {fmt!r}: name the file "
                          f"'*.{fmt}' (or leave format empty)")
    return fmt


# The walk is safepath.py's (shared with inputs); these keep exports' messages.
_NEVER = "exports never follow symlinks or write through them"


def open_target_dir(output_dir: Path, parts: list[str], *, create: bool = True) -> safepath.TargetDir:
    """The directory that will hold ``parts[-1]``, walked without following symlinks
    (safepath.walk from the output directory's fd).

    With ``create`` false a missing component raises FileNotFoundError (nothing is made)."""
    root = safepath.open_root(output_dir, create=True, error=ExportError, what="output directory")
    return safepath.walk(root, parts, create=create, error=ExportError, never=_NEVER)


def write_new_file(dfd: int, name: str, data: bytes, shown: str) -> None:
    """Atomically create ``name`` in ``dfd`` with ``data``; never replaces anything."""
    if safepath.exists(dfd, name):
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
    shown = "/".join(parts)
    # fail before asking the jail for the bytes (nothing is created yet)
    try:
        probe = open_target_dir(output_dir, parts, create=False)
    except FileNotFoundError:
        pass  # a directory on the way is missing: the file cannot exist
    else:
        try:
            if safepath.exists(probe.fd, parts[-1]):
                raise ExportError(f"{shown!r} already exists; exports never overwrite (pick another name)")
        finally:
            probe.close()
    if fmt == "py":  # the session's successful code as a script (object_name is not used)
        meta, data = {}, session_script(session)["script"].encode("utf-8", "surrogatepass")
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
            try:
                quota.check_quota(t.fds[0], limits, len(data), 1)  # the walk counts the dirs just made
            except quota.QuotaExceeded as e:
                raise ExportError(str(e)) from None
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

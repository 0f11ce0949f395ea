"""Exports, launcher side: the only code that writes a file for the user (docs/ARCHITECTURE.md, rule 5).

The jailed session serialises the object and sends the bytes; a fresh jailed process that ran no
session code re-reads them (verify.py); only then does this module write them under the output
directory (the user's choice, trusted, created 0700). The file name comes from the AI, so possibly
from a prompt injection, and is treated as hostile.

Blocks: names that are not plain relative paths or could pass for another name (safepath.py);
names a tool runs or loads on its own, extensions outside the export formats (names.py); a file
that is not what its format claims (verify.py: zeros, another format, SVG active content); a
symlink anywhere below the output directory (walked from its fd, ``O_NOFOLLOW``); overwriting (a
fresh temp file, fsynced, then ``linkat``-ed to a free name); leftovers of a failed export; files
over ``max_export_bytes``; an output directory past its quota (quota.py). Does not block: a
session that exports a well-formed model other than the one it was asked for. The reply's numbers
come from the verifier; the session's own are passed on only as ``session_claims``.
"""
from __future__ import annotations

import hashlib
import os
import secrets
import threading
from pathlib import Path

from jail.wire.caps import EXPORT_FORMATS

from launcher.files import names, quota, safepath, verify
from launcher.files.script import session_script
from launcher.session import SessionError

_WRITE_LOCK = threading.Lock()

FORMATS = (*EXPORT_FORMATS, "py")  # py: the session's script (script.py)
ALIASES = {"stp": "step", "brp": "brep"}
EXTENSIONS = names.EXTENSIONS
#: the end of every message about a directory the launcher cannot create or write
SET_OUTPUT_DIR = ("the output directory is set with --output-dir DIR on the server's command line (in the MCP "
                  "client's config, the `args` of build123d-launcher; for the daemon: "
                  "`python -m launcher.daemon.install --output-dir DIR`)")
#: the session's description of a 2D view, passed on only when it is one of the writer's own
VIEWS = ("isometric projection, hidden lines dotted", "as drawn (XY plane)",
         "top view (looking down -Z), visible edges")


class ExportError(SessionError):
    """An export request that is refused; the message says why (shown to the user)."""


def check_filename(filename, fmt: str | None = None, *, extension: bool = True) -> list[str]:
    """The components of a safe relative file name, or ExportError (safepath.split_relative_name, plus:
    no component of only dots and spaces, none that starts or ends with a space or ends with a dot, no
    reserved temp name; names.refusal for ``fmt``, by default the extension's; with ``extension``
    false only names.component_refusal: the caller judges the extension)."""
    parts = safepath.split_relative_name(filename, ExportError, "the output directory", "'part.step' or 'v2/part.stl'")
    for p in parts:
        if p.strip(". ") == "":
            raise ExportError(f"filename {filename[:80]!r} has a component made only of dots and spaces")
        if p != p.strip(" ") or p.endswith("."):
            raise ExportError(f"filename component {p[:80]!r} starts or ends with a space, or ends with a dot "
                              "(easy to mistake for another name)")
    if parts[-1].startswith(".") and parts[-1].endswith(".tmp"):
        raise ExportError("names of the form '.*.tmp' are reserved for temporary files")
    if not extension:
        why = names.component_refusal(parts)
    else:
        why = names.refusal(parts, fmt or EXTENSIONS.get(os.path.splitext(parts[-1])[1].casefold(), ""))
    if why:
        raise ExportError(why)
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
    from_ext = EXTENSIONS.get(os.path.splitext(name)[1].casefold())
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
    try:
        root = safepath.open_root(output_dir, create=True, error=ExportError, what="output directory")
    except ExportError as e:
        raise ExportError(f"{e}; {SET_OUTPUT_DIR}") from None
    try:
        return safepath.walk(root, parts, create=create, error=ExportError, never=_NEVER)
    except ExportError as e:
        if "cannot" not in str(e):
            raise
        raise ExportError(f"{e}; {SET_OUTPUT_DIR}") from None


def _write_temp(dfd: int, name: str, data, shown: str) -> str:
    """A fresh temp file next to ``name`` in ``dfd`` holding ``data``, fsynced; its name."""
    tmp = f".{name[:200]}.{secrets.token_hex(6)}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644, dir_fd=dfd)
    except OSError as e:
        raise ExportError(f"cannot create a file next to {shown!r}: {e.strerror}; {SET_OUTPUT_DIR}") from None
    try:
        try:
            view = memoryview(data)
            while view:
                n = os.write(fd, view)
                view = view[n:]
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as e:
        _unlink_quietly(dfd, tmp)
        raise ExportError(f"cannot write {shown!r}: {e.strerror}; {SET_OUTPUT_DIR}") from None
    return tmp


def _unlink_quietly(dfd: int, name: str) -> None:
    try:
        os.unlink(name, dir_fd=dfd)
    except OSError:
        pass


def _fsync_dir(dfd: int) -> None:
    try:
        os.fsync(dfd)
    except OSError:
        pass


def write_new_file(dfd: int, name: str, data, shown: str) -> None:
    """Atomically create ``name`` in ``dfd`` with ``data``; never replaces anything."""
    if safepath.exists(dfd, name):
        raise ExportError(f"{shown!r} already exists; exports never overwrite (pick another name)")
    tmp = _write_temp(dfd, name, data, shown)
    try:
        os.link(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd, follow_symlinks=False)
    except FileExistsError:
        raise ExportError(f"{shown!r} already exists; exports never overwrite (pick another name)") from None
    except OSError as e:
        raise ExportError(f"cannot write {shown!r}: {e.strerror}") from None
    finally:
        _unlink_quietly(dfd, tmp)
    _fsync_dir(dfd)


def replace_file(dfd: int, name: str, data, shown: str, still_ours) -> None:
    """Atomically replace ``name`` in ``dfd`` with ``data`` (a temp file ``rename``-d over it), only
    if ``still_ours()`` holds just before the rename (the caller's record of what it wrote: a
    file anyone else put or changed there is never replaced); ExportError otherwise."""
    tmp = _write_temp(dfd, name, data, shown)
    try:
        if not still_ours():
            raise ExportError(f"{shown!r} changed since this server wrote it; it is not replaced")
        os.rename(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
    except OSError as e:
        _unlink_quietly(dfd, tmp)
        raise ExportError(f"cannot write {shown!r}: {e.strerror}") from None
    except BaseException:
        _unlink_quietly(dfd, tmp)
        raise
    _fsync_dir(dfd)


def export_object(session, output_dir, object_name, filename, format="", *, verifier) -> dict:
    """Export ``object_name`` from ``session`` to ``output_dir/filename``; the reply dict.

    ``verifier``: the Launcher (or a tool context with ``.launcher``) whose verifier re-checks the
    bytes (verify.check_bytes). Raises ExportError (a SessionError: the tool layer turns it into
    ``{"error": ...}``).
    """
    if not isinstance(object_name, str) or not object_name.isidentifier():
        raise ExportError(f"object_name must be a top-level name in the session, got {object_name!r}")
    parts = check_filename(filename, format or None)
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
    changes: list[str] = []
    if fmt == "py":  # the session's successful code as a script (object_name is not used)
        built = session_script(session)
        meta, data = {}, built["script"].encode("utf-8", "surrogatepass")
        changes = [str(c)[:500] for c in (built.get("changes") or [])][:100]
    else:
        meta, data = session.export_bytes(object_name, fmt)
    limits = session.profile.limits
    cap = limits.max_export_bytes
    if not isinstance(data, (bytes, bytearray)) or len(data) > cap:
        raise ExportError(f"the export is larger than the profile's max_export_bytes ({cap})")
    data = bytes(data)
    checked = verify.check_bytes(verifier, fmt, data, shown)  # ExportError: nothing is written
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
             "sha256": hashlib.sha256(data).hexdigest(), **checked, "checked": verify.CHECKED_BY}
    claims = verify.clean_numbers(meta.get("source"))
    claims.pop("lines", None)
    if claims:
        reply["session_claims"] = claims  # the object's own volume/bbox, as the session reported them
    if meta.get("view") in VIEWS:
        reply["view"] = meta["view"]
    if changes:
        reply["changes"] = changes
    return reply

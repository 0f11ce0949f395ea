"""Files written by user code: delivered to the output directory under exactly the rules of export.

A successful ``execute`` sends the files its code wrote to its virtual scratch directory (the
result's ``files`` + blob, typed by ``validate.written``: sizes that add up, count and byte caps).
They come from a process that ran the user's code, so each is judged here as hostile: an export
format's extension (no ``.py``, log or text file: listed as not delivered), exports.check_filename
(safepath's characters and ``..``, no dot components, no names tools run on their own),
max_export_bytes, the format re-read by the launcher's verifier (SVG also through svgcheck), the
output quota. exports.py's writer then puts it at the same relative name under the output
directory (flat, as ``export``: ``export_step(part, "p.step")`` gives ``OUT/p.step``).

An existing name is replaced only when this launcher delivered that very file (:class:`Record`:
same inode, size, mtime and ctime as written); a file it did not write is never overwritten.
Blocks: a lying file list, hostile names, files not what they claim, overwriting the user's files.
Does not block: well-formed files that are not what the user wanted (listed, labelled untrusted).
"""
from __future__ import annotations

import hashlib
import logging
import os
import stat
import threading
import time
import weakref
from pathlib import Path

from launcher.files import exports, names, quota, safepath, verify
from launcher.replies import sanitize

log = logging.getLogger("build123d_launcher.delivery")

#: every file of one call is re-checked within this many seconds together; the rest is not delivered
CHECK_BUDGET_S = 180.0
#: delivered files remembered per launcher (the oldest are forgotten: then never replaced, only kept)
RECORD_MAX = 50_000
DELIVERED_EXTENSIONS = sorted(e for e, f in names.EXTENSIONS.items() if f != "py")
NOT_OURS = ("already exists and was not delivered by this server: it is kept, never overwritten "
            "(write the file under another name, or move the existing one away)")


class Record:
    """What one launcher delivered: (output root's dev and inode, relative name) -> the written
    file's (dev, inode, size, mtime_ns, ctime_ns). A name is "ours" while the file there is still
    that file, unchanged (any write, rename-over, chmod or link moves ctime)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.files: dict[tuple, tuple] = {}

    @staticmethod
    def _key(root_fd: int, rel: str) -> tuple:
        st = os.fstat(root_fd)
        return st.st_dev, st.st_ino, rel

    @staticmethod
    def _id(st: os.stat_result) -> tuple:
        return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns

    def remember(self, root_fd: int, rel: str, dfd: int, name: str) -> None:
        st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        with self.lock:
            key = self._key(root_fd, rel)
            self.files.pop(key, None)
            self.files[key] = self._id(st)
            while len(self.files) > RECORD_MAX:
                self.files.pop(next(iter(self.files)))

    def owns(self, root_fd: int, rel: str, dfd: int, name: str) -> bool:
        try:
            st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        except OSError:
            return False
        if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
            return False
        with self.lock:
            return self.files.get(self._key(root_fd, rel)) == self._id(st)


_RECORDS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_RECORDS_LOCK = threading.Lock()


def record_of(launcher) -> Record:
    """The Record of ``launcher`` (made on first use, gone with the launcher)."""
    with _RECORDS_LOCK:
        r = _RECORDS.get(launcher)
        if r is None:
            r = _RECORDS[launcher] = Record()
        return r


def shown_name(name: str) -> str:
    """A jailed name made safe to show: every non-ASCII or control character escaped, capped."""
    s = ascii(name)[1:-1]
    return s if len(s) <= 160 else s[:160] + "..."


def _judge(name: str, data, max_bytes: int) -> tuple[list[str], str]:
    """The checked components and format of ``name``, or ExportError saying why it is not delivered."""
    parts = exports.check_filename(name, extension=False)  # characters, '..', hidden and option-like names
    fmt = names.EXTENSIONS.get(os.path.splitext(parts[-1])[1].casefold())
    if fmt == "py":
        raise exports.ExportError("a .py file written by code is never delivered (the script tool writes the "
                                  "session's code); it was discarded with the call's scratch directory")
    if fmt is None:
        raise exports.ExportError("only files of the export formats are delivered (" + ", ".join(DELIVERED_EXTENSIONS)
                                  + "); it was discarded with the call's scratch directory")
    parts = exports.check_filename(name, fmt)  # the rest of export's rules for the format
    if len(data) > max_bytes:
        raise exports.ExportError(f"it is {len(data)} bytes; the profile's max_export_bytes is {max_bytes}")
    return parts, fmt


def _refusal(e: Exception) -> str:
    return sanitize.text(str(e), 400, keep="")


def deliver(ctx, written) -> dict:
    """Deliver ``written`` (a ``validate.Written`` of a successful call) under ``ctx.output_dir``;
    ``{"delivered": [{"name", "path", "size", "format", "sha256", checked numbers..., "checked",
    "replaced"}], "not_delivered": [{"name", "why"}]}`` (+ ``"refused"``: why the whole list was).
    ``ctx``: a ToolSet (``.launcher``, ``.output_dir``, ``.profile``)."""
    out: dict = {"delivered": [], "not_delivered": []}
    if written.refused is not None:
        out["refused"] = sanitize.text(written.refused, 300, keep="") + "; nothing the call wrote was delivered"
        return out
    limits = ctx.profile.limits
    seen: set[str] = set()
    checked: list[tuple[list[str], str, object, dict]] = []
    deadline = time.monotonic() + CHECK_BUDGET_S
    for name, data in written.entries:
        shown = shown_name(name)
        try:
            if name.casefold() in seen:
                raise exports.ExportError("the call listed this name twice (or two names that differ only by case)")
            seen.add(name.casefold())
            parts, fmt = _judge(name, data, limits.max_export_bytes)
            left = deadline - time.monotonic()
            if left < 1.0:
                raise exports.ExportError(f"no time left to re-check it (the call's files get {CHECK_BUDGET_S:g}s)")
            nums = verify.check_bytes(ctx, fmt, data, "/".join(parts), timeout=left)
        except exports.ExportError as e:
            out["not_delivered"].append({"name": shown, "why": _refusal(e)})
            continue
        checked.append((parts, fmt, data, nums))
    if checked:
        _write_all(ctx, checked, out)
    return out


def _write_all(ctx, checked, out: dict) -> None:
    """Write the checked files under the output directory (one batch under exports' write lock:
    the quota is measured once and counted down)."""
    output_dir = Path(ctx.output_dir)
    limits = ctx.profile.limits
    record = record_of(ctx.launcher)
    with exports._WRITE_LOCK:
        try:
            root = safepath.open_root(output_dir, create=True, error=exports.ExportError, what="output directory")
        except exports.ExportError as e:
            for parts, *_ in checked:
                out["not_delivered"].append({"name": "/".join(parts), "why": _refusal(f"{e}; {exports.SET_OUTPUT_DIR}")})
            return
        try:
            used, entries = quota.measure_tree(root, limits.max_output_dir_files)
            for parts, fmt, data, nums in checked:
                rel = "/".join(parts)
                try:
                    replaced, grew, added = _write_one(output_dir, root, parts, data, limits, used, entries, record)
                except exports.ExportError as e:
                    out["not_delivered"].append({"name": rel, "why": _refusal(e)})
                    continue
                except OSError as e:  # e.g. the file vanished between the write and its record
                    out["not_delivered"].append({"name": rel, "why": _refusal(f"cannot write it: {e.strerror or e}")})
                    continue
                digest = hashlib.sha256(data).hexdigest()
                log.info("delivered a file the code wrote: file=%s bytes=%d sha256=%s replaced=%s",
                         sanitize.log_token(rel, 200), len(data), digest, replaced)
                used += grew
                entries += added
                out["delivered"].append({"name": rel, "path": str(output_dir.absolute() / rel), "size": len(data),
                                         "format": fmt, "sha256": digest, **nums,
                                         "checked": verify.CHECKED_BY, "replaced": replaced})
        finally:
            os.close(root)


def _write_one(output_dir, root: int, parts, data, limits, used: int, entries: int, record: Record):
    """Write one file; (replaced, bytes added, entries added), or ExportError."""
    rel = "/".join(parts)
    t = exports.open_target_dir(output_dir, parts)
    try:
        try:
            name = parts[-1]
            old = None
            if safepath.exists(t.fd, name):
                if not record.owns(root, rel, t.fd, name):
                    raise exports.ExportError(f"{rel!r} {NOT_OURS}")
                old = os.stat(name, dir_fd=t.fd, follow_symlinks=False).st_size
            added = (0 if old is not None else 1) + len(t.created)
            grew = len(data) - (old or 0)
            if entries + added > limits.max_output_dir_files or used + grew > limits.max_output_dir_bytes:
                raise exports.ExportError(
                    f"the output directory would pass its quota (max_output_dir_files {limits.max_output_dir_files}, "
                    f"max_output_dir_bytes {limits.max_output_dir_bytes}): move or delete earlier files first")
            if old is None:
                exports.write_new_file(t.fd, name, data, rel)
            else:
                exports.replace_file(t.fd, name, data, rel, lambda: record.owns(root, rel, t.fd, name))
            record.remember(root, rel, t.fd, name)
            return old is not None, grew, added
        except BaseException:
            t.remove_created()
            raise
    finally:
        t.close()


def lines(files: dict | None) -> list[str]:
    """The reply's lines about a call's files (the renderer's; names are checked or escaped)."""
    if not isinstance(files, dict):
        return []
    out = []
    done = files.get("delivered") or []
    if done:
        out.append("Files the code wrote, delivered to the output directory (made by untrusted code; each "
                   "re-read in a fresh jailed process):")
        for f in done:
            nums = ", ".join(f"{k} {f[k]:g}" if isinstance(f[k], float) else f"{k} {f[k]}"
                             for k in ("volume", "solids", "triangles", "shapes", "lines") if k in f)
            out.append(f"  {f['path']} ({str(f['format']).upper()}, {f['size']} bytes{', ' + nums if nums else ''})"
                       f"{' - replaced the file an earlier call delivered' if f.get('replaced') else ''}")
    for f in files.get("not_delivered") or []:
        out.append(f"Not delivered: {f['name']}: {f['why']}")
    if files.get("refused"):
        out.append(f"Not delivered: {files['refused']}")
    return out

"""The scratch directory: one call's files, in this process's memory, under the fake root ``/scratch``.

User code sees ``/scratch`` as its working directory (``jail.cad.fsviews``: ``open``, ``os``,
``os.path``, ``pathlib``, build123d's exporters and importers). Files are bytes held here; nothing
touches a real file system, so the OS jail does not move (native code writing a real path still
fails). The next serving a call starts with an empty tree plus the request's inputs
(:func:`begin`); after a successful call :meth:`Scratch.collect` gives the written files for the
``result`` message's blob; a failed call's process dies with its files.

Blocks: any name outside ``/scratch`` (``..`` that would leave it, other absolute paths:
``PermissionError`` saying what the scratch directory is); names with control, format (bidi,
zero-width), surrogate or private-use characters, over 255 bytes a component or ``MAX_NAME``
characters in all; more than ``max_bytes`` written in all or ``max_files`` entries (``ENOSPC``);
changing an input's bytes (writing its name gives the code its own copy, delivered like any file it
wrote; renaming an input is refused). There are no symlinks, links, devices or FIFOs to make. Missing
directories above a file written are made (code written for a project tree writes ``assets/x.svg``).
Does not block: anything the launcher must re-check (it trusts none of this: names, sizes, formats).
"""
from __future__ import annotations

import errno
import fnmatch
import os
import posixpath
import unicodedata

from jail.wire.caps import SCRATCH_MAX_FILES

__all__ = ["ROOT", "MAX_FILES", "MAX_NAME", "Scratch", "begin", "current", "inputs_from_request"]

ROOT = "/scratch"
MAX_FILES = SCRATCH_MAX_FILES  # files + directories the code may create in one call (jail/wire/caps.py)
MAX_NAME = 200           # characters of a relative path (it becomes a reply field: caps.NAME_CAP)
MAX_COMPONENT = 255      # UTF-8 bytes of one path component (the Linux limit)
MAX_NAME_BYTES = 64 * 1024  # UTF-8 bytes of all names made in one call (the result's listing stays small)
DEFAULT_MAX_BYTES = 100 * 1024 * 1024
_BAD_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Zl", "Zp"})

WHAT = ("only the scratch directory /scratch (this call's working directory) can be used: files written "
        "there are delivered to the output directory when the call succeeds, and the input files "
        "list_inputs offers appear there (writing one gives the code its own copy)")


def _show(p) -> str:
    s = repr(p)
    return s if len(s) <= 80 else s[:77] + "..."


def _cap(p) -> str:
    """A name for an OSError's filename (shown with repr, so escaped), capped."""
    s = p if isinstance(p, str) else repr(p)
    return s if len(s) <= 80 else s[:77] + "..."


class _Node:
    """One file: its bytes, and whether it is a read-only input."""
    __slots__ = ("data", "readonly", "live")

    def __init__(self, data=b"", readonly=False):
        self.data = bytearray(data)
        self.readonly = readonly
        self.live = True


class Scratch:
    """The tree: ``files`` (relative name -> node) and ``dirs`` (relative names, ``""`` = the root)."""

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES, max_files: int = MAX_FILES, inputs=()):
        self.max_bytes = int(max_bytes)
        self.max_files = int(max_files)
        self.files: dict[str, _Node] = {}
        self.dirs: set[str] = {""}
        self.used = 0            # bytes of the files the code wrote (inputs not counted)
        self.made = 0            # entries the code created (inputs and their directories not counted)
        self.name_bytes = 0      # UTF-8 bytes of the names it made (renames included; never given back)
        for name, data in inputs:
            rel = self.resolve(name)
            if not rel or rel in self.files or rel in self.dirs:
                raise ValueError(f"input name {_show(name)} is not a file name or is given twice")
            parts = rel.split("/")
            for i in range(1, len(parts)):
                d = "/".join(parts[:i])
                if d in self.files:
                    raise ValueError(f"input name {_show(name)} is under another input file")
                self.dirs.add(d)
            self.files[rel] = _Node(data, readonly=True)

    # ---------------------------------------------------------------- names
    def resolve(self, path) -> str:
        """The relative name ("" for the root itself) of ``path`` (str, bytes or path-like)."""
        p = os.fspath(path)
        if isinstance(p, bytes):
            try:
                p = p.decode("utf-8")
            except UnicodeDecodeError:
                raise OSError(errno.EINVAL, "file names in the scratch directory must be UTF-8", _cap(path)) from None
        if not isinstance(p, str):
            raise TypeError(f"expected str, bytes or os.PathLike object, not {type(p).__name__}")
        if "\x00" in p:
            raise ValueError("embedded null byte")
        if not p:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", "")
        full = posixpath.normpath(posixpath.join(ROOT, p))
        if full.startswith("//"):
            full = "/" + full.lstrip("/")
        if full == ROOT:
            return ""
        if not full.startswith(ROOT + "/"):
            raise PermissionError(errno.EACCES, f"{_show(p)} is outside the scratch directory: {WHAT}")
        rel = full[len(ROOT) + 1:]
        check_name(rel)
        return rel

    def _parent_ok(self, rel: str, path) -> None:
        parent = posixpath.dirname(rel)
        if parent in self.files:
            raise NotADirectoryError(errno.ENOTDIR, "Not a directory", _cap(path))
        if parent not in self.dirs:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory (its directory does not exist "
                                    "in the scratch directory)", _cap(path))

    def _new_entry(self, path, rel: str = "") -> None:
        if self.made >= self.max_files:
            raise OSError(errno.ENOSPC, f"the scratch directory holds at most {self.max_files} files and "
                          "directories per call", _cap(path))
        self._name_cost(rel, path)
        self.made += 1

    def _name_cost(self, rel: str, path) -> None:
        n = len(rel.encode("utf-8"))
        if self.name_bytes + n > MAX_NAME_BYTES:
            raise OSError(errno.ENOSPC, f"the names made in the scratch directory in one call may hold at most "
                          f"{MAX_NAME_BYTES} bytes in all", _cap(path))
        self.name_bytes += n

    def charge(self, node: _Node, grow: int) -> None:
        """Account ``grow`` more bytes for ``node`` (ENOSPC past the cap)."""
        if grow <= 0:
            if node.live and not node.readonly:
                self.used += grow
            return
        if len(node.data) + grow > self.max_bytes or (node.live and self.used + grow > self.max_bytes):
            self._full()
        if node.live:
            self.used += grow

    def _full(self):
        raise OSError(errno.ENOSPC, f"No space left in the scratch directory: the files of one call may "
                      f"hold at most {self.max_bytes} bytes in all")

    # ---------------------------------------------------------------- queries
    def exists(self, path) -> bool:
        rel = self._quiet(path)
        return rel is not None and (rel in self.files or rel in self.dirs)

    def isfile(self, path) -> bool:
        rel = self._quiet(path)
        return rel is not None and rel in self.files

    def isdir(self, path) -> bool:
        rel = self._quiet(path)
        return rel is not None and rel in self.dirs

    def _quiet(self, path):
        try:
            return self.resolve(path)
        except (OSError, ValueError):
            return None

    def node(self, path) -> _Node:
        rel = self.resolve(path)
        if rel in self.dirs:
            raise IsADirectoryError(errno.EISDIR, "Is a directory", _cap(path))
        n = self.files.get(rel)
        if n is None:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory in the scratch directory", _cap(path))
        return n

    def read_bytes(self, path) -> bytes:
        return bytes(self.node(path).data)

    def size(self, path) -> int:
        rel = self.resolve(path)
        if rel in self.dirs:
            return 0
        return len(self.node(path).data)

    def listdir(self, path=".") -> list[str]:
        rel = self.resolve(path)
        if rel in self.files:
            raise NotADirectoryError(errno.ENOTDIR, "Not a directory", _cap(path))
        if rel not in self.dirs:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", _cap(path))
        pre = rel + "/" if rel else ""
        out = {k[len(pre):].split("/", 1)[0] for k in list(self.files) + list(self.dirs)
               if k and k.startswith(pre)}
        return sorted(out)

    def glob(self, base, pattern: str, recursive: bool = False) -> list[str]:
        """Relative names under ``base`` matching ``pattern`` (``*``/``?``/``[...]`` per component;
        ``**`` any depth when ``recursive``)."""
        start = self.resolve(base)
        if start not in self.dirs:
            return []
        pre = start + "/" if start else ""
        parts = [p for p in pattern.split("/") if p not in ("", ".")]
        out = []
        for name in sorted(list(self.files) + [d for d in self.dirs if d]):
            if name.startswith(pre) and _match(name[len(pre):].split("/"), parts, recursive):
                out.append(name)
        return out

    # ---------------------------------------------------------------- changes
    def open_node(self, path, *, create: bool, truncate: bool, exclusive: bool, write: bool) -> _Node:
        rel = self.resolve(path)
        if rel in self.dirs:
            raise IsADirectoryError(errno.EISDIR, "Is a directory", _cap(path))
        n = self.files.get(rel)
        if n is not None:
            if exclusive:
                raise FileExistsError(errno.EEXIST, "File exists", _cap(path))
            if write and n.readonly:  # copy on write: the code's own file replaces the input's view
                self._new_entry(path, rel)
                copy = _Node()
                if not truncate:
                    self.charge(copy, len(n.data))
                    copy.data[:] = n.data
                n = self.files[rel] = copy
                return n
            if truncate:
                self.charge(n, -len(n.data))
                del n.data[:]
            return n
        if not create:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory in the scratch directory", _cap(path))
        self._walk_parents(rel, path, create=True)
        self._new_entry(path, rel)
        n = self.files[rel] = _Node()
        return n

    def _walk_parents(self, rel: str, path, create: bool) -> None:
        """The directories above ``rel``: a file there is ENOTDIR; a missing one is made when
        ``create`` (code written for a project tree writes ``assets/x.svg`` where that directory
        exists; each one counts as an entry), else ENOENT (``mkdir(parents=False)``)."""
        parts = rel.split("/")
        for i in range(1, len(parts)):
            d = "/".join(parts[:i])
            if d in self.files:
                raise NotADirectoryError(errno.ENOTDIR, "Not a directory", _cap(path))
            if d not in self.dirs:
                if not create:
                    raise FileNotFoundError(errno.ENOENT, "No such file or directory", _cap(path))
                self._new_entry(path, d)
                self.dirs.add(d)

    def write_bytes(self, path, data) -> int:
        data = bytes(data)
        old = self.files.get(self.resolve(path))
        if self.used + len(data) - (len(old.data) if old is not None else 0) > self.max_bytes:
            self._full()  # before the file is made or emptied
        n = self.open_node(path, create=True, truncate=True, exclusive=False, write=True)
        self.charge(n, len(data))
        n.data[:] = data
        return len(data)

    def mkdir(self, path, parents: bool = False, exist_ok: bool = False) -> None:
        rel = self.resolve(path)
        if rel in self.dirs or rel in self.files:
            if exist_ok and rel in self.dirs:
                return
            raise FileExistsError(errno.EEXIST, "File exists", _cap(path))
        self._walk_parents(rel, path, create=parents)
        self._new_entry(path, rel)
        self.dirs.add(rel)

    def remove(self, path) -> None:
        n = self.node(path)  # a file, or IsADirectoryError / FileNotFoundError
        rel = self.resolve(path)
        if not n.readonly:  # an input's view just goes away (the input itself is never changed)
            self.charge(n, -len(n.data))
        n.live = False
        del self.files[rel]

    def rmdir(self, path) -> None:
        rel = self.resolve(path)
        if rel == "":
            raise PermissionError(errno.EACCES, "the scratch directory itself cannot be removed")
        if rel not in self.dirs:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", _cap(path))
        if self.listdir(path):
            raise OSError(errno.ENOTEMPTY, "Directory not empty", _cap(path))
        self.dirs.discard(rel)

    def rename(self, src, dst) -> None:
        """Move a file (replacing a written file at ``dst``) or a directory holding no input."""
        s, d = self.resolve(src), self.resolve(dst)
        if s == "" or d == "":
            raise PermissionError(errno.EACCES, "the scratch directory itself cannot be renamed or replaced")
        if s not in self.files and s not in self.dirs:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", _cap(src))
        if s == d:
            return
        self._parent_ok(d, dst)
        self._name_cost(d, dst)
        if s in self.files:
            if self.files[s].readonly:
                raise PermissionError(errno.EACCES, f"{_show(src)} is an input file: read-only in the scratch directory")
            if d in self.dirs:
                raise IsADirectoryError(errno.EISDIR, "Is a directory", _cap(dst))
            if self.files.get(d) is not None:
                self.remove(dst)  # an input's view there goes away; the moved file is the code's own
            self.files[d] = self.files.pop(s)
            return
        if d == s or d.startswith(s + "/"):
            raise OSError(errno.EINVAL, "cannot move a directory into itself", _cap(dst))
        if d in self.files or (d in self.dirs and self.listdir(dst)):
            raise OSError(errno.ENOTEMPTY, "Directory not empty", _cap(dst))
        pre = s + "/"
        if any(k.startswith(pre) and n.readonly for k, n in self.files.items()):
            raise PermissionError(errno.EACCES, f"{_show(src)} holds input files: read-only in the scratch directory")
        for k in [k for k in self.files if k.startswith(pre)]:
            self.files[d + k[len(s):]] = self.files.pop(k)
        for k in [k for k in self.dirs if k == s or k.startswith(pre)]:
            self.dirs.discard(k)
            self.dirs.add(d + k[len(s):])

    # ---------------------------------------------------------------- the result
    def collect(self) -> tuple[list[dict], bytes]:
        """The files the code wrote (inputs left out), sorted by name: ``[{"name", "size"}]`` and
        their bytes concatenated in that order."""
        names = sorted(k for k, n in self.files.items() if not n.readonly)
        listing = [{"name": k, "size": len(self.files[k].data)} for k in names]
        return listing, b"".join(bytes(self.files[k].data) for k in names)


def check_name(rel: str) -> None:
    """Refuse a relative name no file of the scratch directory may have (OSError EINVAL)."""
    if len(rel) > MAX_NAME:
        raise OSError(errno.ENAMETOOLONG, f"file names in the scratch directory are at most {MAX_NAME} "
                      "characters long", _cap(rel))
    for part in rel.split("/"):
        if len(part.encode("utf-8", "surrogatepass")) > MAX_COMPONENT:
            raise OSError(errno.ENAMETOOLONG, "File name too long", _cap(rel))
    for ch in rel:
        if unicodedata.category(ch) in _BAD_CATEGORIES:
            raise OSError(errno.EINVAL, f"file names in the scratch directory may not hold control, format "
                          f"(bidi, zero-width), surrogate or private-use characters (U+{ord(ch):04X})", _cap(rel))


def _match(name_parts: list[str], pat: list[str], recursive: bool) -> bool:
    if not pat:
        return not name_parts
    if pat[0] == "**" and recursive:
        return any(_match(name_parts[i:], pat[1:], recursive) for i in range(len(name_parts) + 1))
    if not name_parts:
        return False
    return fnmatch.fnmatchcase(name_parts[0], pat[0]) and _match(name_parts[1:], pat[1:], recursive)


def inputs_from_request(listing, blob: bytes) -> list[tuple[str, bytes]]:
    """The request's ``inputs`` (``[{"name", "size"}]``) cut out of ``blob`` (concatenated in that
    order). ValueError when the listing is malformed or its sizes do not add up to the blob."""
    if listing is None:
        listing = []
    if not isinstance(listing, list):
        raise ValueError("inputs must be a list")
    out, pos = [], 0
    for item in listing:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str) \
                or type(item.get("size")) is not int or item["size"] < 0:
            raise ValueError("each input must be {\"name\": str, \"size\": int >= 0}")
        end = pos + item["size"]
        if end > len(blob):
            raise ValueError("the inputs' sizes exceed the bytes sent")
        out.append((item["name"], bytes(blob[pos:end])))
        pos = end
    if pos != len(blob):
        raise ValueError("the inputs' sizes do not add up to the bytes sent")
    return out


_STATE: dict = {"current": None}


def begin(max_bytes: int = DEFAULT_MAX_BYTES, inputs=(), max_files: int = MAX_FILES) -> Scratch:
    """Start this call's scratch directory (empty but for ``inputs``)."""
    s = Scratch(max_bytes, max_files, inputs)
    _STATE["current"] = s
    return s


def current() -> Scratch:
    """This call's scratch directory (an empty one when no call started one)."""
    s = _STATE["current"]
    if s is None:
        s = _STATE["current"] = Scratch()
    return s

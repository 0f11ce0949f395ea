"""``open``, ``os``, ``os.path`` and ``pathlib`` as user code sees them: views over the scratch directory.

Served by layer 8 (``safe_builtins``: :data:`MODULES` replaces the real modules, by name, wherever a
view would serve them; :func:`builtins` adds ``open`` when the profile does not block it;
:func:`stand_ins` gives build123d's path-taking exporters and importers, ``jail.cad.fsexport``).
Every path goes through :mod:`jail.cad.scratch`: the working directory is ``/scratch``, files are
bytes in this process's memory, anything outside is refused with a message saying what the scratch
directory is.

Blocks: the real file system (no call here opens, stats or lists a real path), file descriptors,
processes, the host's environment (``environ`` is an empty dict), symlinks, links, devices, FIFOs,
``chdir``. Does not block what the OS layers stop (native code writing a real path: EPERM), nor
the views being bypassed with the Python layers off.
"""
from __future__ import annotations

import errno
import io
import os as _os
import pathlib as _pathlib
import posixpath as _pp
import stat as _stat
import types

from jail.cad import fsexport, scratch
from jail.cad.scratch import ROOT

__all__ = ["open_", "MODULES", "builtins", "stand_ins", "ScratchIO", "Path"]


def _sc():
    return scratch.current()


# ------------------------------------------------------------------ open
class ScratchIO(io.RawIOBase):
    """A file of the scratch directory, opened: reads and writes go straight to its bytes."""

    def __init__(self, node, name, mode: str, readable: bool, writable: bool, append: bool):
        super().__init__()
        self._node, self._pos = node, 0
        self._r, self._w, self._append = readable, writable, append
        self.name, self.mode = name, mode

    def readable(self):
        return self._r

    def writable(self):
        return self._w

    def seekable(self):
        return True

    def fileno(self):
        raise io.UnsupportedOperation("no file descriptor: this file lives in the scratch directory's memory")

    def readinto(self, b):
        self._check(self._r, "read")
        data = self._node.data
        with memoryview(b) as mv:
            n = max(0, min(len(mv), len(data) - self._pos))
            mv[:n] = data[self._pos:self._pos + n]
        self._pos += n
        return n

    def readline(self, size=-1):
        self._check(self._r, "read")
        data = self._node.data
        end = data.find(b"\n", self._pos)
        end = len(data) if end < 0 else end + 1
        if size is not None and size >= 0:
            end = min(end, self._pos + size)
        out = bytes(data[self._pos:end])
        self._pos = max(self._pos, end)
        return out

    def write(self, b):
        self._check(self._w, "write")
        b = bytes(b)
        data = self._node.data
        if self._append:
            self._pos = len(data)
        end = self._pos + len(b)
        scratch.current().charge(self._node, max(0, end - len(data)))
        if self._pos > len(data):
            data.extend(bytes(self._pos - len(data)))
        data[self._pos:end] = b
        self._pos = end
        return len(b)

    def seek(self, pos, whence=0):
        self._check(True, "seek")
        base = {0: 0, 1: self._pos, 2: len(self._node.data)}.get(whence)
        if base is None:
            raise ValueError(f"invalid whence ({whence!r})")
        new = base + int(pos)
        if new < 0:
            raise OSError(errno.EINVAL, "Invalid argument")
        self._pos = new
        return new

    def tell(self):
        self._check(True, "tell")
        return self._pos

    def truncate(self, size=None):
        self._check(self._w, "truncate")
        size = self._pos if size is None else int(size)
        data = self._node.data
        if size < len(data):
            scratch.current().charge(self._node, size - len(data))
            del data[size:]
        elif size > len(data):
            scratch.current().charge(self._node, size - len(data))
            data.extend(bytes(size - len(data)))
        return size

    def _check(self, ok: bool, what: str):
        if self.closed:
            raise ValueError("I/O operation on closed file.")
        if not ok:
            raise io.UnsupportedOperation(what)


def open_(file, mode="r", buffering=-1, encoding=None, errors=None, newline=None, closefd=True, opener=None):
    """``open`` over the scratch directory (text and binary; r, w, a, x, +)."""
    if isinstance(file, int) or opener is not None:
        raise PermissionError(errno.EPERM, "file descriptors and openers are not available: open a name in the "
                              f"scratch directory ({scratch.WHAT})")
    if not isinstance(mode, str) or len(set(mode)) != len(mode) or set(mode) - set("rwxabt+") \
            or sum(c in mode for c in "rwxa") != 1 or ("b" in mode and "t" in mode):
        raise ValueError(f"invalid mode: {mode!r}")
    binary = "b" in mode
    if binary and (encoding is not None or errors is not None or newline is not None):
        raise ValueError("binary mode doesn't take an encoding, errors or newline argument")
    kind = next(c for c in mode if c in "rwxa")
    plus = "+" in mode
    node = _sc().open_node(file, create=kind != "r", truncate=kind == "w", exclusive=kind == "x",
                           write=kind != "r" or plus)
    raw = ScratchIO(node, file if isinstance(file, (str, bytes)) else _os.fspath(file), mode,
                    readable=kind == "r" or plus, writable=kind != "r" or plus, append=kind == "a")
    if binary:
        return raw
    t = io.TextIOWrapper(raw, encoding=encoding or "utf-8", errors=errors, newline=newline, write_through=True)
    t.mode = mode
    return t


open_.__name__ = open_.__qualname__ = "open"
open_.__module__ = "builtins"


# ------------------------------------------------------------------ os.path
def _abspath(p):
    p = _os.fspath(p)
    if isinstance(p, bytes):
        return _os.fsencode(_abspath(_os.fsdecode(p)))
    return _pp.normpath(_pp.join(ROOT, p))


def _relpath(p, start=None):
    p = _os.fspath(p)
    if isinstance(p, bytes):
        return _os.fsencode(_relpath(_os.fsdecode(p), None if start is None else _os.fsdecode(_os.fspath(start))))
    return _pp.relpath(_abspath(p), _abspath(ROOT if start is None else start))


def _expand(p):
    return _os.fspath(p)


def _getmtime(p):
    if not _sc().exists(p):
        raise FileNotFoundError(errno.ENOENT, "No such file or directory", p)
    return 0.0


def _stat_of(p):
    sc = _sc()
    rel = sc.resolve(p)
    if rel in sc.dirs:
        mode, size = _stat.S_IFDIR | 0o755, 0
    else:
        n = sc.node(p)
        mode, size = _stat.S_IFREG | (0o444 if n.readonly else 0o644), len(n.data)
    return _os.stat_result((mode, 0, 0, 1, 0, 0, size, 0, 0, 0))


def _module(name: str, doc: str, attrs: dict):
    m = _ReadOnly(name, doc)
    own = vars(m)
    own.clear()  # no __loader__, __spec__, __package__
    own.update({"__name__": name, "__doc__": doc, **attrs})
    own["__all__"] = sorted(k for k in attrs if not k.startswith("_"))
    return m


class _ReadOnly(types.ModuleType):
    """A read-only module object (the scratch-directory views)."""
    def __setattr__(self, name, value):
        raise AttributeError(f"module {vars(self).get('__name__', '?')!r} is read-only here")

    def __delattr__(self, name):
        raise AttributeError(f"module {vars(self).get('__name__', '?')!r} is read-only here")

    def __repr__(self):
        return f"<module {vars(self).get('__name__', '?')!r} (scratch directory view)>"


_PURE = ("join", "basename", "dirname", "splitext", "split", "normpath", "isabs", "normcase", "commonpath",
         "commonprefix", "splitdrive")
path_view = _module("os.path", "Path operations; files live in the scratch directory /scratch.", {
    **{n: getattr(_pp, n) for n in _PURE},
    "sep": "/", "altsep": None, "extsep": ".", "pardir": "..", "curdir": ".", "pathsep": ":",
    "devnull": "/dev/null", "supports_unicode_filenames": False,
    "abspath": _abspath, "realpath": lambda p, strict=False: _abspath(p), "relpath": _relpath,
    "expanduser": _expand, "expandvars": _expand,
    "exists": lambda p: _sc().exists(p), "lexists": lambda p: _sc().exists(p),
    "isfile": lambda p: _sc().isfile(p), "isdir": lambda p: _sc().isdir(p),
    "islink": lambda p: False, "ismount": lambda p: False,
    "getsize": lambda p: _sc().size(p), "getmtime": _getmtime, "getctime": _getmtime, "getatime": _getmtime,
})


# ------------------------------------------------------------------ os
class _DirEntry:
    __slots__ = ("name", "path", "_dir")

    def __init__(self, name, path, is_dir):
        self.name, self.path, self._dir = name, path, is_dir

    def is_dir(self, *, follow_symlinks=True):
        return self._dir

    def is_file(self, *, follow_symlinks=True):
        return not self._dir

    def is_symlink(self):
        return False

    def stat(self, *, follow_symlinks=True):
        return _stat_of(self.path)

    def __fspath__(self):
        return self.path

    def __repr__(self):
        return f"<DirEntry {self.name!r}>"


class _ScandirIterator:
    def __init__(self, entries):
        self._it = iter(entries)

    def __iter__(self):
        return self

    def __next__(self):
        return next(self._it)

    def __enter__(self):
        return self

    def __exit__(self, *a):
        return False

    def close(self):
        self._it = iter(())


def _scandir(path="."):
    sc = _sc()
    names = sc.listdir(path)
    return _ScandirIterator([_DirEntry(n, _pp.join(_os.fspath(path), n), sc.isdir(_pp.join(_os.fspath(path), n)))
                             for n in names])


def _makedirs(name, mode=0o777, exist_ok=False):
    _sc().mkdir(name, parents=True, exist_ok=exist_ok)


def _walk(top=".", topdown=True, onerror=None, followlinks=False):
    sc = _sc()
    top = _os.fspath(top)
    try:
        names = sc.listdir(top)
    except OSError as e:
        if onerror is not None:
            onerror(e)
        return
    dirs = [n for n in names if sc.isdir(_pp.join(top, n))]
    files = [n for n in names if n not in dirs]
    if topdown:
        yield top, dirs, files
    for d in dirs:
        yield from _walk(_pp.join(top, d), topdown, onerror)
    if not topdown:
        yield top, dirs, files


def _no_chdir(path):
    raise PermissionError(errno.EPERM, f"the working directory stays /scratch ({scratch.WHAT})")


os_view = _module("os", "Path operations and the scratch directory /scratch (a view of the os module).", {
    "path": path_view, "name": "posix", "sep": "/", "altsep": None, "extsep": ".", "pardir": "..",
    "curdir": ".", "pathsep": ":", "linesep": "\n", "devnull": "/dev/null",
    "environ": {}, "getenv": lambda key, default=None: default,
    "fspath": _os.fspath, "fsencode": _os.fsencode, "fsdecode": _os.fsdecode, "PathLike": _os.PathLike,
    "getcwd": lambda: ROOT, "getcwdb": lambda: ROOT.encode(), "chdir": _no_chdir,
    "listdir": lambda path=".": _sc().listdir(path), "scandir": _scandir, "walk": _walk,
    "mkdir": lambda path, mode=0o777: _sc().mkdir(path), "makedirs": _makedirs,
    "remove": lambda path: _sc().remove(path), "unlink": lambda path: _sc().remove(path),
    "rmdir": lambda path: _sc().rmdir(path),
    "rename": lambda src, dst: _sc().rename(src, dst), "replace": lambda src, dst: _sc().rename(src, dst),
    "stat": _stat_of, "lstat": _stat_of, "error": OSError, "cpu_count": lambda: 1, "urandom": _os.urandom,
    "SEEK_SET": 0, "SEEK_CUR": 1, "SEEK_END": 2,
})
for _k, _v in vars(os_view).items():
    if isinstance(_v, types.FunctionType) and _v.__name__ == "<lambda>":
        _v.__name__ = _v.__qualname__ = _k


# ------------------------------------------------------------------ pathlib
class Path(_pathlib.PurePosixPath):
    """A path whose I/O goes to the scratch directory (``/scratch`` is the working directory)."""
    __slots__ = ()

    @classmethod
    def cwd(cls):
        return cls(ROOT)

    @classmethod
    def home(cls):
        return cls(ROOT)

    def absolute(self):
        return self if self.is_absolute() else type(self)(ROOT, self)

    def resolve(self, strict=False):
        p = type(self)(_abspath(str(self)))
        if strict and not _sc().exists(p):
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", str(self))
        return p

    def expanduser(self):
        return self

    def exists(self, *, follow_symlinks=True):
        return _sc().exists(self)

    def is_file(self):
        return _sc().isfile(self)

    def is_dir(self):
        return _sc().isdir(self)

    def is_symlink(self):
        return False

    def stat(self, *, follow_symlinks=True):
        return _stat_of(self)

    def open(self, mode="r", buffering=-1, encoding=None, errors=None, newline=None):
        return open_(self, mode, buffering, encoding, errors, newline)

    def read_bytes(self):
        return _sc().read_bytes(self)

    def read_text(self, encoding=None, errors=None):
        with self.open("r", encoding=encoding, errors=errors) as f:
            return f.read()

    def write_bytes(self, data):
        return _sc().write_bytes(self, memoryview(data))

    def write_text(self, data, encoding=None, errors=None, newline=None):
        if not isinstance(data, str):
            raise TypeError(f"data must be str, not {type(data).__name__}")
        with self.open("w", encoding=encoding, errors=errors, newline=newline) as f:
            return f.write(data)

    def touch(self, mode=0o666, exist_ok=True):
        sc = _sc()
        if sc.exists(self):
            if not exist_ok:
                raise FileExistsError(errno.EEXIST, "File exists", str(self))
            return
        sc.write_bytes(self, b"")

    def mkdir(self, mode=0o777, parents=False, exist_ok=False):
        _sc().mkdir(self, parents=parents, exist_ok=exist_ok)

    def unlink(self, missing_ok=False):
        try:
            _sc().remove(self)
        except FileNotFoundError:
            if not missing_ok:
                raise

    def rmdir(self):
        _sc().rmdir(self)

    def rename(self, target):
        _sc().rename(self, target)
        return type(self)(target)

    replace = rename

    def iterdir(self):
        for n in _sc().listdir(self):
            yield self / n

    def glob(self, pattern):
        return self._globbed(pattern, "**" in pattern)

    def rglob(self, pattern):
        return self._globbed("**/" + pattern, True)

    def _globbed(self, pattern, recursive):
        base = _abspath(str(self))
        for rel in _sc().glob(self, pattern, recursive):
            yield self / _pp.relpath(_pp.join(ROOT, rel), base)


Path.__module__ = "pathlib"
pathlib_view = _module("pathlib", "Paths; I/O goes to the scratch directory /scratch (a view of pathlib).", {
    "Path": Path, "PosixPath": Path, "PurePath": _pathlib.PurePath, "PurePosixPath": _pathlib.PurePosixPath,
    "PureWindowsPath": _pathlib.PureWindowsPath,
})

#: real module name -> the view user code gets instead, wherever a module view would serve it
MODULES: dict[str, types.ModuleType] = {"os": os_view, "posixpath": path_view, "os.path": path_view,
                                        "pathlib": pathlib_view}


def builtins(blocked) -> dict:
    """The builtins these views add (``open``, unless the profile blocks it)."""
    return {} if "open" in blocked else {"open": open_}


def stand_ins() -> dict[int, object]:
    """``{id(real build123d object): stand-in}`` for the views (``jail.cad.fsexport``)."""
    import sys
    if "build123d" not in sys.modules:  # loaded long before in the jail (the zygote imports it)
        return {}
    return fsexport.stand_ins()

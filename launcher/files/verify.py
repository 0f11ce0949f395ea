"""The format re-check of every file the launcher writes, in a jailed process no user code ran in.

A session's own check proves nothing: after any successful call its processes run whatever user
code left there (a patched serializer, a patched check). So the bytes are handed
(``Session.ask(..., blob=data)``) to a dedicated verifier session of the launcher: forked from
the zygote, fully jailed, never given user code (only ``verify`` requests). Each check runs in a
disposable next, so a file that crashes or hangs a parser kills only that process (reported as a
failure; the next check forks a new one). The verifier is made on first use, replaced when it
died, closed with the launcher, and serves one check at a time (its lock).

:func:`check_bytes` is the one entry point (exports today, files written by user code later):
SVG also passes the launcher-side markup check (jail/wire/svgcheck.py) first. Blocks: a file that
is not what its format claims (jail/cad/verify.py says what each format must be). Does not block:
a well-formed model that is not the one the user wanted.
"""
from __future__ import annotations

import itertools
import logging
import threading

from jail.wire.svgcheck import SvgRefused, check_svg
from launcher.replies import sanitize
from launcher.session import Session, SessionError

log = logging.getLogger("build123d_launcher.verify")

FORMATS = ("step", "brep", "stl", "3mf", "svg", "dxf", "py")
VERIFY_TIMEOUT_S = 120.0      # as the export op: a large STEP takes seconds to read back
CHECKED_BY = "re-read in a fresh jailed process that ran no session code"


class Verifier:
    """One launcher's verifier session, made lazily from its zygote, replaced when dead."""

    _ids = itertools.count(1)

    def __init__(self, launcher):
        self.launcher = launcher
        self.lock = threading.Lock()
        self.session = None
        self.closed = False
        self.made = 0              # how many verifier sessions this launcher started (tests read it)

    def _live_session(self):
        s = self.session
        if s is not None and not s.closed and s.head is not None and s.head.alive():
            return s
        if s is not None:
            log.warning("the verifier session died; starting a new one")
            s.close()
            self.session = None
        self.session = Session(self.launcher._zygote(), self.launcher.profile, f"verify{next(self._ids)}")
        self.made += 1
        return self.session

    def check(self, fmt: str, data: bytes, timeout: float = VERIFY_TIMEOUT_S) -> dict:
        """The verifier's reply for ``data`` as ``fmt``: ``{"ok": True, "check": {...}}`` or
        ``{"ok": False, "error": "..."}`` (typed and bounded here); SessionError if it cannot run."""
        with self.lock:
            if self.closed:
                raise SessionError("the launcher is closing")
            s = self._live_session()
            msg, _ = s.ask({"t": "verify", "format": fmt}, "verify", timeout=timeout, blob=data)
        if msg.get("ok") is True:
            return {"ok": True, "check": clean_numbers(msg.get("check"))}
        return {"ok": False, "error": sanitize.text(str(msg.get("error") or "no reason given"), 300, keep="")}

    def close(self) -> None:
        with self.lock:
            self.closed = True
            s, self.session = self.session, None
        if s is not None:
            s.close()


def verifier_of(launcher_or_ctx) -> Verifier:
    """The Verifier of a Launcher (or of a tool context / ToolSet that has ``.launcher``)."""
    launcher = getattr(launcher_or_ctx, "launcher", launcher_or_ctx)
    v = getattr(launcher, "verifier", None)
    if not isinstance(v, Verifier):
        from launcher.files.exports import ExportError
        raise ExportError("no verifier: files are written only after a re-check in a fresh jailed process")
    return v


def check_bytes(launcher_or_ctx, fmt: str, data: bytes, name: str, timeout: float = VERIFY_TIMEOUT_S) -> dict:
    """Checked numbers of ``data`` as ``fmt`` (volume, bbox, triangles, solids, shapes, lines, as the
    format has them), measured by the verifier; VerifyError (nothing may be written) otherwise.

    ``name`` is only used in messages (the caller has checked it); ``timeout``: the longest the
    re-check may take (its process is killed past it: the file is refused)."""
    from launcher.files.exports import ExportError
    shown = sanitize.text(str(name), 120, keep="")
    if fmt not in FORMATS:
        raise ExportError(f"{shown!r}: no format check for {str(fmt)[:16]!r}; nothing was written")
    if fmt == "svg":
        try:
            check_svg(data)
        except SvgRefused as e:
            raise ExportError(f"the SVG from the session was refused, nothing was written: {e}") from None
    try:
        reply = verifier_of(launcher_or_ctx).check(fmt, bytes(data), timeout)
    except SessionError as e:
        raise ExportError(f"{shown!r} could not be checked, nothing was written: {e}") from None
    if not reply["ok"]:
        raise ExportError(f"{shown!r} is not a valid {fmt.upper()} file, nothing was written: {reply['error']} "
                          f"(the bytes came from the session; a fresh jailed process re-read them)")
    return reply["check"]


# ------------------------------------------------------------------ the verifier's numbers, typed
def _num(x):
    import math
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


def clean_numbers(d) -> dict:
    """Only typed, finite numbers pass (even the verifier's reply is a jailed process's)."""
    if not isinstance(d, dict):
        return {}
    out = {}
    if _num(d.get("volume")) is not None:
        out["volume"] = _num(d["volume"])
    if _bbox(d.get("bbox")) is not None:
        out["bbox"] = _bbox(d["bbox"])
    for k in ("triangles", "solids", "shapes", "lines"):
        v = d.get(k)
        if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2 ** 53:
            out[k] = v
    return out

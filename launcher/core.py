"""The launcher: one zygote, many sessions (up to ``max_sessions``, plus warm spares), one profile.

With ``warm_in_background=True`` (the MCP server) the constructor returns at once and the zygote
starts in the background; the first session waits for it. If the jail cannot start on this host
(no user namespaces, a required layer the kernel lacks, a jail uid that cannot read the venv), the
launcher still exists: :meth:`Launcher.start_error` returns the explanation and the fix
(``explain_layer_error``), and every tool call answers with it.
"""
from __future__ import annotations

import itertools
import logging
import os
import threading
import time
from pathlib import Path

from jail.layers.userns import resolve_jail_uid
from jail.wire.errors import LayerError
from launcher.contain import selflimit
from launcher.files.inputs import exposed_by
from launcher.files.verify import Verifier
from launcher.profile import Profile, load_profile
from launcher.selftest.preflight import JailUidCannotRead, check_jail_can_read
from launcher.session import Session, SessionError
from launcher.session.zygote import Zygote

log = logging.getLogger("build123d_launcher")


class Launcher:
    def __init__(self, profile: Profile | str = "default", *, output_dir: str | os.PathLike | None = None,
                 jail_uid: str | None = None, spare_sessions: int = 1, warm_in_background: bool = False,
                 input_dir: str | os.PathLike | None = None, zygote: Zygote | None = None):
        """``zygote``: an already started one to share (the tests do, one per process): used as long
        as it lives, never stopped by :meth:`close`; it must have been started with this profile's
        userns mode and ``jail_uid`` (ValueError otherwise)."""
        self.profile = load_profile(profile) if isinstance(profile, str) else profile
        selflimit.apply(self.profile)  # the launcher's own memory bound (RLIMIT_AS, receive budget)
        # export() writes here (launcher/files/exports.py); created 0700 on first use
        self.output_dir = Path(os.path.expanduser(output_dir)).absolute() if output_dir else default_output_dir()
        # import_file/list_inputs read here (launcher/files/inputs.py); None: not configured. Never in the jail's view.
        indir = input_dir or self.profile.extra.get("input_dir") or None
        self.input_dir = Path(os.path.expanduser(indir)).absolute() if indir else None
        if self.input_dir is not None:
            if exposed_by(self.profile, self.input_dir):
                log.warning("the input directory %s is inside the jail's read path %s: jailed code can read it "
                            "directly; use a directory outside the profile's [filesystem] read_paths",
                            self.input_dir, exposed_by(self.profile, self.input_dir))
        self.jail_uid = jail_uid
        # re-checks every file before it is written, in a session that never runs user code (files/verify.py)
        self.verifier = Verifier(self)
        self.lock = threading.Lock()
        self.sessions: dict[str, Session] = {}
        self._ids = itertools.count(1)
        self.spare_target = spare_sessions
        self.spares: list[Session] = []
        self._refilling = False
        self._creating = 0
        self._closed = False
        self.zygote: Zygote | None = None
        self._owns_zygote = zygote is None
        self._start_exc: BaseException | None = None
        self._started = threading.Event()
        if zygote is not None:
            if (zygote.userns, zygote.jail_uid) != (self.profile.mode("userns"), jail_uid):
                raise ValueError(f"the shared zygote runs userns={zygote.userns!r} jail_uid={zygote.jail_uid!r}; "
                                 f"this launcher needs userns={self.profile.mode('userns')!r} jail_uid={jail_uid!r}")
            self._preflight()
            self.zygote = zygote
            self._started.set()
            return
        if not warm_in_background:
            self._preflight()
            self.zygote = Zygote(userns=self.profile.mode("userns"), jail_uid=jail_uid)
            self._started.set()
            return
        try:
            self._preflight()
            self.zygote = Zygote(userns=self.profile.mode("userns"), jail_uid=jail_uid, wait=False)
        except Exception as e:  # noqa: BLE001 - reported by start_error(), the server still starts
            self._fail_start(e)
            return
        threading.Thread(target=self._warm, daemon=True, name="zygote-start").start()

    def _preflight(self) -> None:
        if os.geteuid() == 0 and self.profile.on("userns"):
            check_jail_can_read(*resolve_jail_uid(self.jail_uid))

    def _warm(self) -> None:
        t0 = time.monotonic()
        try:
            self.zygote.wait_ready()
        except Exception as e:  # noqa: BLE001
            self._fail_start(e)
            return
        log.info("zygote ready in %.2f s (pid %s)", time.monotonic() - t0, self.zygote.pid)
        self._started.set()

    def _fail_start(self, e: BaseException) -> None:
        self._start_exc = e
        with self.lock:
            closing = self._closed
        if closing:  # close() stopped the zygote while it was starting
            log.debug("zygote start abandoned: the launcher is closing (%s)", e)
        else:
            log.error("the jail cannot start: %s", self.explain(e))
        self._started.set()

    def wait_started(self, timeout: float = 240.0) -> bool:
        return self._started.wait(timeout)

    def start_error(self, timeout: float = 240.0) -> str | None:
        """None once the zygote is ready (waits for it); else why the jail cannot start, and the fix."""
        if not self._started.wait(timeout):
            return f"the jail did not start within {timeout:.0f} s; see the server's log"
        return None if self._start_exc is None else self.explain(self._start_exc)

    def explain(self, e: BaseException) -> str:
        """A start-up or layer failure as the user should read it: what failed, why, how to fix it."""
        if isinstance(e, LayerError):
            return explain_layer_error(e, self.profile)
        return (f"the jail's zygote could not start: {e}. Run `build123d-launcher doctor` in a terminal "
                "for the details of every layer.")

    def explain_layer_error(self, e: LayerError) -> str:
        return explain_layer_error(e, self.profile)

    def _zygote(self) -> Zygote:
        if not self._started.is_set():
            self._started.wait(240.0)
        if self._start_exc is not None:
            raise self._start_exc if isinstance(self._start_exc, LayerError) else \
                SessionError(self.explain(self._start_exc))
        with self.lock:
            if not self.zygote.alive():
                log.warning("the zygote died; starting a new one")
                self.zygote = Zygote(userns=self.profile.mode("userns"), jail_uid=self.jail_uid)
                self._owns_zygote = True
            return self.zygote

    def new_session(self) -> Session:
        """A fresh session; served from a pre-made spare when one is ready (new_session/reset then
        cost one execute), and a new spare is made in the background."""
        with self.lock:
            live = [s for s in self.sessions.values() if not s.closed]
            if len(live) + self._creating >= self.profile.limits.max_sessions:
                raise SessionError(f"the launcher already runs {len(live) + self._creating} sessions "
                                   f"(the profile's max_sessions); close one first")
            self._creating += 1
            s = None
            while self.spares:
                cand = self.spares.pop()
                if not cand.closed and cand.head is not None and cand.head.alive():
                    s = cand
                    break
                cand.close()
            if s is None:
                sid = f"s{next(self._ids)}"
        try:
            if s is None:
                s = Session(self._zygote(), self.profile, sid)
            with self.lock:
                self.sessions[s.id] = s
        finally:
            with self.lock:
                self._creating -= 1
        self._refill_spares()
        return s

    def _refill_spares(self) -> None:
        with self.lock:
            if self._refilling or self._closed or len(self.spares) >= self.spare_target:
                return
            self._refilling = True

        def work():
            try:
                while True:
                    with self.lock:
                        if self._closed or len(self.spares) >= self.spare_target:
                            return
                        sid = f"s{next(self._ids)}"
                    try:
                        s = Session(self._zygote(), self.profile, sid)
                    except Exception as e:  # the next new_session() will report it
                        with self.lock:
                            closing = self._closed
                        if closing:  # close() took the zygote away while the spare was being made
                            log.debug("spare session abandoned: the launcher is closing (%s)", e)
                        else:
                            log.warning("could not pre-make a spare session: %s", e)
                        return
                    with self.lock:
                        if self._closed:
                            s.close()
                            return
                        self.spares.append(s)
            finally:
                with self.lock:
                    self._refilling = False

        threading.Thread(target=work, daemon=True, name="spare-sessions").start()

    def close_session(self, s: Session) -> None:
        s.close()
        with self.lock:
            self.sessions.pop(s.id, None)

    def close(self) -> None:
        with self.lock:
            self._closed = True
            spares, self.spares = self.spares, []
        for s in list(self.sessions.values()) + spares:
            s.close()
        self.sessions.clear()
        self.verifier.close()
        z = self.zygote
        if z is not None and self._owns_zygote:
            if not self._started.is_set() and z.alive():
                z.proc.kill()  # still importing build123d: nothing of value is lost
            z.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


DEFAULT_OUTPUT_NAME = "build123d-out"


def default_output_dir() -> Path:
    """``~/build123d-out``: per user, outside the client's working directory (often the user's
    project, where pytest or an IDE would act on files; ``/`` for GUI apps), visible and easy to
    find, and the systemd unit's default too (``%h/build123d-out``, systemd/)."""
    try:
        home = Path.home()
    except (RuntimeError, KeyError):  # no $HOME and no passwd entry: exports say how to set one
        log.warning("no home directory: export() needs --output-dir")
        return Path("/nonexistent-home") / DEFAULT_OUTPUT_NAME
    return home.absolute() / DEFAULT_OUTPUT_NAME


FIXES = {
    "userns": "user namespaces must be available to this user: check `sysctl kernel.unprivileged_userns_clone=1` "
              "(Debian/Ubuntu), `user.max_user_namespaces` > 0, and on Ubuntu 24.04+ "
              "`kernel.apparmor_restrict_unprivileged_userns=0` (or an AppArmor profile allowing userns)",
    "landlock": "Landlock needs Linux >= 5.13 with `lsm=...,landlock` on the kernel command line",
    "seccomp": "the seccomp filter could not be installed or a syscall it denies is needed on this host",
    "namespaces": "the session's pid/net/ipc/uts/mount namespaces could not be created (nested container?)",
    "mountview": "the private mount view could not be built (mount namespaces restricted?)",
}


def explain_layer_error(e: LayerError, profile=None) -> str:
    """``LayerError`` -> the text a user (or an MCP client) sees: layer, reason, fix, where to look."""
    if isinstance(e, JailUidCannotRead):
        return f"the jail cannot start: {e.reason}"
    name = getattr(profile, "name", None)
    fix = FIXES.get(e.layer, "")
    if e.layer == "userns" and "jail user" in e.reason:
        fix = "pass --jail-uid with an existing user name or a numeric uid (default: nobody)"
    return (f"jail layer '{e.layer}' cannot be applied on this host, so no code runs: {e.reason}. "
            + (f"Fix: {fix}. " if fix else "")
            + f"Run `build123d-launcher doctor{f' --profile {name}' if name else ''}` for every layer's status; a profile may "
              "make a layer best-effort (see profiles/).")

"""The launcher: one zygote, many sessions, one profile, one output directory."""
from __future__ import annotations

import itertools
import logging
import os
import threading
from pathlib import Path

from . import selflimit
from .profile import Profile, load_profile
from .session import Session, SessionError
from .zygote_client import Zygote

log = logging.getLogger("build123d_launcher")


class Launcher:
    def __init__(self, profile: Profile | str = "default", *, output_dir: str | os.PathLike | None = None,
                 jail_uid: str | None = None, spare_sessions: int = 1):
        self.profile = load_profile(profile) if isinstance(profile, str) else profile
        selflimit.apply(self.profile)  # the launcher's own memory bound (RLIMIT_AS, receive budget)
        self.output_dir = Path(output_dir) if output_dir else Path.cwd() / "build123d-out"
        self.jail_uid = jail_uid
        self.lock = threading.Lock()
        self.sessions: dict[str, Session] = {}
        self._ids = itertools.count(1)
        self.spare_target = spare_sessions
        self.spares: list[Session] = []
        self._refilling = False
        self._creating = 0
        self._closed = False
        if os.geteuid() == 0 and self.profile.on("userns"):
            from jail.userns import resolve_jail_uid
            from .preflight import check_jail_can_read
            check_jail_can_read(*resolve_jail_uid(jail_uid))
        self.zygote = Zygote(userns=self.profile.mode("userns"), jail_uid=jail_uid)

    def _zygote(self) -> Zygote:
        with self.lock:
            if not self.zygote.alive():
                log.warning("the zygote died; starting a new one")
                self.zygote = Zygote(userns=self.profile.mode("userns"), jail_uid=self.jail_uid)
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
        self.zygote.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

"""The launcher: one zygote, many sessions, one profile, one output directory."""
from __future__ import annotations

import itertools
import logging
import os
import threading
from pathlib import Path

from .profile import Profile, load_profile
from .session import Session, SessionError
from .zygote_client import Zygote

log = logging.getLogger("build123d_launcher")


class Launcher:
    def __init__(self, profile: Profile | str = "default", *, output_dir: str | os.PathLike | None = None,
                 jail_uid: str | None = None):
        self.profile = load_profile(profile) if isinstance(profile, str) else profile
        self.output_dir = Path(output_dir) if output_dir else Path.cwd() / "build123d-out"
        self.jail_uid = jail_uid
        self.lock = threading.Lock()
        self.sessions: dict[str, Session] = {}
        self._ids = itertools.count(1)
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
        with self.lock:
            live = [s for s in self.sessions.values() if not s.closed]
            if len(live) >= self.profile.limits.max_sessions:
                raise SessionError(f"the launcher already runs {len(live)} sessions "
                                   f"(the profile's max_sessions); close one first")
            sid = f"s{next(self._ids)}"
        s = Session(self._zygote(), self.profile, sid)
        with self.lock:
            self.sessions[sid] = s
        return s

    def close_session(self, s: Session) -> None:
        s.close()
        with self.lock:
            self.sessions.pop(s.id, None)

    def close(self) -> None:
        for s in list(self.sessions.values()):
            s.close()
        self.sessions.clear()
        self.zygote.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

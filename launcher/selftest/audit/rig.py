"""One launcher per column profile, with an attacker session and a bystander session.

The attacker runs the payloads; the bystander holds a secret variable that must survive every
payload unchanged and must never show up in the attacker's reply. A session a payload broke (or
changed: a successful payload leaves names in its namespace) is replaced by a fresh one.
"""
from __future__ import annotations

import time
from pathlib import Path

from launcher.contain.procs import children_of, descendants, exiting, state_of
from launcher.core import Launcher
from launcher.selftest.audit.canaries import Canaries


class Rig:
    """One launcher for one profile, an attacker session and a bystander session."""

    def __init__(self, profile_path: Path, canaries: Canaries, jail_uid=None):
        self.canaries = canaries
        self.profile_path, self.jail_uid = profile_path, jail_uid  # a then: step may start its own daemon
        self.launcher = Launcher(str(profile_path), output_dir=str(canaries.outdir), jail_uid=jail_uid,
                                 input_dir=str(canaries.indir))
        self.ast_on = self.launcher.profile.on("ast_policy")
        self.attacker = None
        self.bystander = None
        self.new_bystander()
        self.new_attacker()

    def _fresh(self, old):
        """Close ``old`` (if any) and return a new session."""
        if old is not None:
            try:
                self.launcher.close_session(old)
            except Exception:
                pass
        return self.launcher.new_session()

    def new_attacker(self) -> None:
        """A fresh attacker session (~0.1 s): after a payload that succeeded (its names stay in the
        namespace and would show up in every later summary) or broke the session."""
        self.attacker = self._fresh(self.attacker)

    def new_bystander(self) -> None:
        self.bystander = self._fresh(self.bystander)
        r = self.bystander.execute(f"bystander_secret = {self.canaries.tokens['bystander']!r}\n")
        if not r.get("ok"):
            raise RuntimeError(f"the bystander session could not set its variable: {r.get('error')}")

    def substitutions(self) -> dict:
        p = self.bystander.pids() if self.bystander else {}
        return {"BYSTANDER_PID": str(p.get("head") or 0), "ZYGOTE_PID": str(self.launcher.zygote.pid),
                "ATTACKER_INIT_PID": str(self.attacker.pids().get("init") or 0)}

    def wait_next(self, timeout: float | None = None) -> None:
        """Wait until the attacker's head has forked its next (then that next is known, not a stray)."""
        if timeout is None:
            self.attacker.ensure_next()
        else:
            self.attacker.ensure_next(timeout=timeout)

    def strays(self, grace_s: float = 3.0) -> set[int]:
        """Processes started by the last call that still run in the attacker's session, after up to
        ``grace_s`` for a SIGKILL the sweep queued to be taken. Call after :meth:`wait_next`."""
        a = self.attacker
        if a.init is None:
            return set()

        def live_strays():  # a process being torn down (~0.3 s for 800 MB) is not running any more
            return {x for x in set(descendants(a.init.pid)) - set(_known_pids(a)) - _spares(a)
                    if state_of(x) not in (None, "Z", "X") and not exiting(x)}
        extra = live_strays()
        deadline = time.monotonic() + grace_s
        while extra and time.monotonic() < deadline:
            time.sleep(0.05)
            extra = live_strays()
        return extra

    def close(self):
        try:
            self.launcher.close()
        except Exception:
            pass


def _spares(session) -> set[int]:
    """The children of the session's new next: it has run no code yet, so all it forks is its idle
    spare (jail/proc/spare.py, after 0.1 s), which the launcher may not have taken yet."""
    nxt = session.pids().get("next")
    return set(children_of(nxt)) if nxt else set()


def _known_pids(session) -> list[int]:
    """The session's own processes: keeper, init, head, next, snapshots. Call after
    ``ensure_next()`` so that the next forked after the call is announced."""
    p = session.pids()
    known = [x for x in (p.get("keeper"), p.get("init"), p.get("head"), p.get("next")) if x]
    return known + list((p.get("snapshots") or {}).values())

"""Snapshots: a session's state kept as a frozen process, which serves as the head when restored.

A snapshot is a next told to park itself instead of serving a call; restoring one makes it say
``restored`` and serve as the head itself (decision 0024: no fork on the restore's path), after
which the old head and what it forked are killed and swept (or, when the old head is a restored
snapshot, parked). The snapshot stays a snapshot: when its time as the head ends it waits again,
unchanged, so it can be restored again. Names are checked here, the count is bounded by the
profile's ``max_snapshots``.

Blocks: a ``restored`` from anyone but the snapshot, snapshots past the cap.
Does not: bound a snapshot's memory on its own (it counts towards ``session_memory_mb``).
"""
from __future__ import annotations

import re
import time

from jail.wire import protocol
from launcher.contain.procs import Proc, children_of
from launcher.session.chain import Chain
from launcher.session.errors import SessionDead, SessionError

SNAPSHOT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class Snapshots:
    """Save, restore, delete and list the snapshots held in ``chain.snapshots`` (under ``lock``)."""

    def __init__(self, chain: Chain, lock, limits, at_boundary=lambda: None):
        self.chain = chain
        self.lock = lock
        self.limits = limits
        # the CPU watchdog continues what it stopped (a session's idle warm-ups can empty its CPU
        # share): a save or restore, like a call, must not wait for a stopped head, next or snapshot
        self.at_boundary = at_boundary

    def save(self, name: str) -> dict:
        with self.lock:
            self.at_boundary()
            try:
                return self._save(name)
            finally:
                self.at_boundary()

    def restore(self, name: str) -> dict:
        with self.lock:
            self.at_boundary()
            try:
                return self._restore(name)
            finally:
                self.at_boundary()

    def _save(self, name: str) -> dict:
        c = self.chain
        if not isinstance(name, str) or not SNAPSHOT_NAME.match(name):
            raise SessionError("snapshot names are 1–64 characters of letters, digits, '_', '.', '-' "
                               "and start with a letter or digit")
        if name in c.snapshots:
            raise SessionError(f"snapshot {name!r} exists; delete it first or pick another name")
        cap = self.limits.max_snapshots
        if len(c.snapshots) >= cap:
            raise SessionError(f"this session already holds {cap} snapshots (the profile's max_snapshots); "
                               f"delete one first: {', '.join(sorted(c.snapshots))}")
        c.ensure_next()
        self.at_boundary()  # the next must be able to take the request
        nxt = c.next
        c.send_next({"t": "snapshot"})
        try:
            c.channel.wait(("snapshot_ok",), nxt.pid, time.monotonic() + 10, watch=nxt)
        except (TimeoutError, SessionDead, protocol.ProtocolError):
            c.discard_next()
            raise SessionError("the snapshot could not be taken (its process did not answer)") from None
        c.bury_spare()  # the next's spare (it was SIGKILLed by the next before it parked)
        c.snapshots[name] = (nxt, time.time())
        c.history.save(name)  # the parked next is a fork of the head: it holds the head's calls
        c.next = None
        return {"name": name, "snapshots": sorted(c.snapshots)}

    def _restore(self, name: str) -> dict:
        c = self.chain
        if name not in c.snapshots:
            raise SessionError(f"no snapshot named {name!r} (have: {', '.join(sorted(c.snapshots)) or 'none'})")
        snap, _ = c.snapshots[name]
        if not snap.alive():
            del c.snapshots[name]
            c.history.delete(name)
            raise SessionError(f"snapshot {name!r} no longer exists (its process was killed)")
        if snap is c.head:
            # restored already, and nothing ran since: a fresh next is all a restore could add
            c.discard_next()
            c.history.restore(name)
            return {"restored": name}
        old_head, old_next = c.head, c.next
        snap.kill(protocol.RESTORE_SIGNAL)
        try:
            # the snapshot says "restored" and serves as the head itself (decision 0024): no fork
            # here; its next follows, and is taken by the next call like after any execute
            c.channel.wait(("restored",), None, time.monotonic() + 10, watch=snap,
                           accept=lambda p: p == snap.pid)
        except (TimeoutError, SessionDead, protocol.ProtocolError):
            gone = snap.wait_dead(0.2)
            # one that does not answer cannot be restored, and must not take the restore late:
            # deleted (code run in the session can do this only with the seccomp layer off)
            c.snapshots.pop(name, None)
            c.history.delete(name)
            c.bury(snap)
            # a snapshot that served as the head and never took its PARK may have forked nexts
            # that read the session socket: they must not take the next request
            self._bury_untracked_children(snap)
            c.sweep_or_defer("failed-restore")
            if gone:
                raise SessionError(f"snapshot {name!r} no longer exists (its process was killed); "
                                   "the session is unchanged") from None
            raise SessionError(f"snapshot {name!r} did not answer the restore and was deleted; the session "
                               "is unchanged") from None
        new_head = snap
        # The old head first: once its SIGKILL (or, for a restored snapshot, PARK) is queued it can
        # fork no replacement for old_next that would serve. It reads the socket: a restore that
        # comes right after a call can find it still blocked in recv() for its promote (under load
        # it may not have run since), and a killed reader can still dequeue the next request.
        c.bury_spare()  # old_next's
        c.bury(old_head, reads_socket=True)
        c.bury(old_next, reads_socket=True)
        c.head, c.next, c.next_nonce = new_head, None, ""
        c.history.restore(name)
        c.head_lost = None
        # what old_head forked untracked (the next it made after the last call): killed here by pidfd
        # and known as dying, so the sweep below finds nothing unknown and needs no cgroup freeze
        # (~20 ms); its child set can only shrink now that it is dead (or parked: a next a parked
        # snapshot forks after this look never serves, jail/proc/chain.py). Snapshots it made, and
        # the new head, are kept.
        if old_head is not None:
            self._bury_untracked_children(old_head)
        c.sweep()  # and kills anything else that is not init, head, a snapshot or dying
        return {"restored": name}

    def _bury_untracked_children(self, p) -> None:
        """SIGKILL the children of ``p`` the launcher does not know, as processes that may read the
        session socket (the launcher's next send waits until they have entered their exit)."""
        c = self.chain
        keep = c.known()
        for ch in children_of(p.pid):
            if ch not in keep:
                try:
                    c.bury(Proc(ch), reads_socket=True)
                except OSError:
                    pass  # gone already, or no fd for it: the sweep handles it

    def delete(self, name: str) -> dict:
        c = self.chain
        with self.lock:
            if name not in c.snapshots:
                raise SessionError(f"no snapshot named {name!r}")
            snap, _ = c.snapshots.pop(name)
            c.history.delete(name)
            if snap is not c.head:  # a restored one serving as the head stays the head, an ordinary one now
                c.bury(snap)
            return {"deleted": name, "snapshots": sorted(c.snapshots)}

    def listing(self) -> list[dict]:
        return [{"name": n, "created": t, "alive": p.alive()} for n, (p, t) in sorted(self.chain.snapshots.items())]

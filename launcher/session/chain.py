"""The processes of one session and their roles: keeper, init, head, next, snapshots, the dying.

The head holds the session's state and forks the ``next`` that serves the following call; a ``ready``
is taken only from a child of the current head. The next serves read-only calls in a child (its idle
``spare``, announced by a ``spare`` message) and stays the next. A call that succeeds promotes its next to head
(the old head is SIGKILLed by pidfd; a restored snapshot serving as the head is parked instead, decision
0024); anything else discards the next and the head forks another.
After every change the sweep kills whatever is not keeper, init, head, next, its spare, a snapshot or dying.
A head that stops serving (code left by an earlier successful call can make it deaf, or make it
never fork its next) is killed with a clear error; the snapshots are kept and one can be restored.
Only when nothing usable is left is the session declared lost (``SessionDead``).

Blocks: a stale or forged ``ready``, strays left by user code, a pid reused under the launcher.
Does not: bound what a head rewritten by earlier user code forks between two sweeps
(``launcher.contain.containment`` says what the cgroup and the seccomp clone filter add).
"""
from __future__ import annotations

import logging
import signal
import time

from jail.wire import protocol
from launcher.contain import deferred_kill
from launcher.contain.containment import SessionContainment, clone_filtered
from launcher.contain.procs import Proc, children_of, kill_strays, ppid_of
from launcher.session.channel import Channel, nonce_of
from launcher.session.errors import SessionDead, SessionError, SessionNotReading
from launcher.session.history import History
from launcher.session.spares import SpareRoles

log = logging.getLogger("build123d_launcher.session")


class Chain(SpareRoles):
    """Who is who in one session's fork chain, and the moves between roles (under the session lock)."""

    def __init__(self, sid: str, keeper_pid: int, channel: Channel, contain: SessionContainment, limits):
        self.id = sid
        self.channel = channel
        self.contain = contain
        self.limits = limits
        self.head_lost: str | None = None  # why the head was killed, while no snapshot has been restored
        self.keeper = Proc(keeper_pid)
        self.init: Proc | None = None
        self._head: Proc | None = None
        self.next: Proc | None = None
        self.next_nonce = ""
        self.next_sent = False  # a request was sent to the next (False: taken ahead, ``prefetch_next``)
        self.spare: Proc | None = None  # the next's idle child for read-only ops (jail/proc/spare.py)
        self.snapshots: dict[str, tuple[Proc, float]] = {}
        self.history = History()  # the launcher's record of the head's and each snapshot's calls
        self.evidence: dict = {}
        self.closed = False
        self._dying: list[Proc] = []
        self._readers: list[Proc] = []  # killed socket readers not yet seen exiting
        self._sweep_pending = False  # the after-call sweep could not run (out of fds): run before the next call
        self._swept: set[int] = set()  # pids a sweep just killed (maybe still dying): never taken as the next
        self._retired: list[Proc] = []  # old heads stopped, to be killed after the reply (retire)

    @property
    def head(self) -> Proc | None:
        return self._head

    @head.setter
    def head(self, p: Proc | None) -> None:
        self._head = self.channel.head = p  # the channel files the head's next_exit reports

    # ------------------------------------------------------------ the next
    def await_ready(self, deadline, *, parent_of_head: int | None = None) -> None:
        """Wait for a `ready` from a child of the head (or, at start, from the first head).

        A ready is consumed from the socket only once: if the launcher itself cannot look at its
        sender right now (out of file descriptors: EMFILE while opening a pidfd or reading /proc),
        the ready is kept for the next attempt and the OSError propagates (this call fails, "the
        launcher could not serve this call"). Dropping it would leave the head's next alive but
        unknown, the head would never fork another, and the session would be declared lost.
        """
        def accept(p):
            try:
                pp = ppid_of(p)
                if self.head is not None:
                    return pp == self.head.pid
                return pp is not None and ppid_of(pp) == parent_of_head
            except OSError:
                return True  # cannot tell now: take the message, usable() decides (and keeps it)

        ch = self.channel
        watch = self.head or self.init
        early, ch.early_ready = ch.early_ready, []
        dying = {p.pid for p in self._dying} | ({self.next.pid} if self.next is not None else set()) | self._swept

        def usable(pid):
            """True/False; OSError (other than the process being gone) propagates."""
            if pid in dying or not accept(pid):
                return False
            try:
                pr = Proc(pid)
            except ProcessLookupError:
                return False
            try:
                return pr.alive()
            finally:
                pr.close()

        candidates = list(early)
        try:
            for pid, nonce in early:
                if usable(pid):
                    break
            else:
                while True:
                    pid, msg, _ = ch.wait(("ready",), None, deadline, watch=watch, accept=accept)
                    nonce = nonce_of(msg)
                    candidates.append((pid, nonce))
                    if usable(pid):  # not a stale ready of a process already killed (a stray swept after a call)
                        break
                    ch.ignored_messages += 1
            head = self.head if self.head is not None else Proc(ppid_of(pid))
            nxt = Proc(pid)
        except OSError as e:
            if isinstance(e, ProcessLookupError):
                raise SessionDead(f"process {getattr(e, 'filename', '') or '?'} vanished") from None
            ch.early_ready = (candidates + ch.early_ready)[-16:]
            raise
        self.head = head
        self.bury_spare()  # a spare left from an earlier next (none, normally)
        self.next, self.next_nonce, self.next_sent = nxt, nonce, False
        self.contain.on_ready(self.head, self.next, [p for p, _ in self.snapshots.values()])  # before any request

    def fork_timeout(self) -> float:
        """How long a head may take to fork its next (milliseconds normally; generous under load)."""
        return max(10.0, min(30.0, float(self.limits.timeout_s)))

    def ensure_next(self, timeout: float | None = None) -> None:
        """Make sure a live next waits for the following request (wait for the head's ``ready``);
        SessionError/SessionDead when the head cannot serve (see ``drop_head``)."""
        if self.closed:
            raise SessionDead("this session is closed")
        self.kill_retired()
        if self._dying:
            self.reap_dying()
        if self._sweep_pending and self.head is not None:
            # the sweep after the last successful call could not run (out of fds): run it now,
            # before any ready is taken, keeping no child of the head (its next among them: the
            # head forks another), so nothing that call started can pose as the next
            self.next = None
            self.sweep(keep_head_children=False)  # OSError again: this call fails, nothing ran
            self._sweep_pending = False
            self.channel.early_ready.clear()  # what it killed is in _swept, never taken as the next
        if self.next is not None:
            if self.next.alive():
                return
            self.bury_spare()  # it left (idle, decision 0026) or was killed: its pidfd is closed once it is reaped
            self.bury(self.next, reads_socket=True)
        if self.head is None:
            self.no_head(self.head_lost or "the session has no head process")
        if not self.head.alive():
            self.drop_head("died")
        self.next = None
        timeout = timeout if timeout is not None else self.fork_timeout()
        try:
            self.await_ready(time.monotonic() + timeout)
            self._swept.clear()
        except TimeoutError:
            self.drop_head(f"did not fork a new child within {timeout:g}s")
        except SessionDead:
            self.drop_head("died")

    def prefetch_next(self, wait_s: float) -> None:
        """Right after a promotion (decision 0028): take the new head's next if it says ready within
        ``wait_s``, so the following call finds it taken. Otherwise, or when anything is off (no head,
        a sweep still to run, out of fds), nothing: that call's ``ensure_next`` waits, and drops a head
        that cannot serve. Never before a pending sweep: what the last call left must not pose as the next."""
        if self.closed or self.head is None or self.next is not None or self._sweep_pending:
            return
        try:
            self.await_ready(time.monotonic() + wait_s)
            self._swept.clear()
        except (TimeoutError, SessionError, OSError):
            pass

    def send_next(self, obj: dict, deadline: float | None = None, blob: bytes = b"") -> None:
        """A request addressed to the current next by its nonce: a request left unread by a
        next that died stays in the socket, and the following next must not run it.

        SessionNotReading (after killing the next: the request may be half-sent) when the
        session does not take it before ``deadline``."""
        self.settle_readers()
        self.next_sent = True
        try:
            self.channel.send({**obj, "to": self.next_nonce}, deadline, blob)
        except SessionNotReading:
            self.discard_next()
            raise

    def discard_next(self) -> None:
        self.bury_spare()
        self.bury(self.next, reads_socket=True)
        self.next = None
        self.sweep()

    def promote(self, nxt: Proc) -> bool:
        """The call ``nxt`` served succeeded: it becomes the head, the old head is killed, and it is
        told so. False when it did not take its promotion (the head is then dropped: state lost)."""
        self.bury_spare()  # it holds the state from before the call
        self.retire(self.head)
        nonce = self.next_nonce
        self.head, self.next = nxt, None
        self.sweep_or_defer("after-call", keep_head_children=False)  # out of fds: promote anyway
        self.settle_readers()
        try:
            self.channel.send({"t": "promote", "to": nonce})
        except SessionError as e:  # cannot happen with a process that reads; the state is lost if it does
            self.drop_head_quietly(f"did not take its promotion ({e})")
            return False
        return True

    # ------------------------------------------------------------ a head that cannot serve
    def drop_head(self, why: str) -> None:
        """The head cannot serve: kill it (and whatever it forked), keep the snapshots, say so."""
        self.bury_spare()
        self.bury(self.head, reads_socket=True)  # one not yet past its promote is blocked in recv()
        self.bury(self.next, reads_socket=True)
        self.head, self.next, self.next_nonce = None, None, ""
        self.history.lose_head()  # its state is gone: so are its calls, until a snapshot is restored
        self.channel.early_ready.clear()
        self.sweep()
        self.head_lost = (f"the session's head process {why} (code run by an earlier successful call can do "
                          "this) and was killed: the session's current state is gone")
        log.warning("session %s: head lost: %s", self.id, why)
        self.no_head(self.head_lost)

    def drop_head_quietly(self, why: str) -> None:
        try:
            self.drop_head(why)
        except SessionError:
            pass

    def no_head(self, why: str) -> None:
        if self.init is None or not self.init.alive():  # the pid namespace goes with it, snapshots too
            raise SessionDead(f"{why}; the session's init process is gone too, and every snapshot with it")
        live = sorted(n for n, (p, _) in self.snapshots.items() if p.alive())
        if live:
            raise SessionError(f"{why}. Its snapshots are kept: restore one ({', '.join(live)}) or reset.")
        raise SessionDead(f"{why}, and it has no snapshot")

    # ------------------------------------------------------------ kills and sweeps
    def known(self) -> set[int]:
        keep = {p.pid for p in (self.init, self.head, self.next, self.spare) if p is not None}
        keep |= {p.pid for p, _ in self.snapshots.values()}
        keep |= {p.pid for p in self._dying}  # already SIGKILLed, still being torn down
        return keep

    def bury(self, p: Proc | None, *, reads_socket: bool = False) -> None:
        """SIGKILL ``p`` without waiting for the kernel to tear it down (that takes ~10-20 ms for a
        process mapping build123d); it can run no more user-space code once the signal is queued.
        A snapshot serving as the head is parked instead (``park``).

        A process that may be blocked in recv() on the session socket (a next, or a head that has not
        read its promote yet) could still take one datagram that arrives before it is scheduled to
        die: with ``reads_socket`` the launcher's next send first waits until it has entered its
        exit, so no request can be lost to it.
        """
        if p is None or self.park(p):
            return
        p.kill()
        self._dying.append(p)
        if reads_socket:
            self._readers.append(p)  # waited for before the launcher sends anything (settle_readers)

    def retire(self, p: Proc | None) -> None:
        """The old head after a successful call: stopped now, SIGKILLed a moment later
        (launcher/contain/deferred_kill.py), so its teardown does not run beside the reply. It is
        blocked reading its pipe from the next; continued meanwhile (by anyone: ``kill -CONT``), it
        sees the pipe close and waits for that next, the new head, which lives on: it forks nothing.
        It counts as dying from now on (kept by the sweeps, never taken as anything)."""
        if p is None or self.park(p):
            return
        if deferred_kill.REAPER.later(p.fd):
            self._retired.append(p)
        else:
            p.kill()
        self._dying.append(p)

    def park(self, p: Proc) -> bool:
        """``p`` stops being the head. When it is a restored snapshot serving as the head (decision
        0024) it is told to wait again (PARK, before its next is promoted or killed: it then forks no
        other) and kept: True. False for any other process (the caller kills it). A snapshot that
        cannot be told (the signal refused) is deleted and killed. (A PARK sent to a queue the session
        filled is not refused but may lose its sender: that snapshot then fails its next restore,
        which deletes it, ``Snapshots.restore``.)"""
        name = next((n for n, (q, _) in self.snapshots.items() if q is p), None)
        if name is None:
            return False
        try:
            signal.pidfd_send_signal(p.fd, protocol.PARK_SIGNAL)
            return True
        except ProcessLookupError:
            return True  # gone: the next restore finds it dead and says so
        except OSError as e:
            log.warning("session %s: snapshot %r could not be parked (%s); it is deleted", self.id, name, e)
            del self.snapshots[name]
            self.history.delete(name)
            return False

    def kill_retired(self) -> None:
        """A call starts: SIGKILL now what ``retire`` stopped (back-to-back calls would otherwise keep
        several stopped old heads at once, each counted in the session's memory and processes)."""
        retired, self._retired = self._retired, []
        for p in retired:
            p.kill()

    def settle_readers(self) -> None:
        """Before a send: every killed process that may block in recv() on the session socket has
        entered its exit (microseconds once it is scheduled; usually long done by the next call)."""
        readers, self._readers = self._readers, []
        for p in readers:
            p.wait_exiting(1.0)

    def dying_pids(self) -> set[int]:
        """The processes killed, or retired to be killed (``retire``), and not seen gone yet."""
        return {p.pid for p in list(self._dying)}

    def reap_dying(self) -> None:
        still = []
        for p in self._dying:
            if p.alive():
                still.append(p)
            else:
                p.close()
        self._dying = still

    def sweep_or_defer(self, what: str, *, keep_head_children: bool = True) -> None:
        """``sweep``; when the launcher is out of fds, it runs before the next call instead (said in the log)."""
        try:
            self.sweep(keep_head_children=keep_head_children)
        except OSError as e:
            log.warning("session %s: the %s sweep failed (%s); it runs before the next call", self.id, what, e)
            self._sweep_pending = True

    def sweep(self, *, keep_head_children: bool = True) -> list[int]:
        """Kill every session process that is not init, head, next, a snapshot or dying.

        After a *failed* call the head's children are its own freshly forked nexts (the
        head has not run user code since the sweep that promoted it), so they are kept.
        When a call *succeeds* its process becomes the head, and its children are whatever
        the user's code forked: then nothing but the known processes is kept.
        """
        self.take_spare()  # announced since the last look: kept like the next
        # without the clone filter the cgroup sweep also kills the head's own fresh next; its ready may
        # be read before it is dead, so what a sweep killed (``_swept``) is never taken as the next
        self._swept |= self.contain.sweep(self.known() | {self.keeper.pid}, self.head,
                                          [p for p, _ in self.snapshots.values()],
                                          head_children_legit=keep_head_children and clone_filtered(self.evidence))
        if self.init is not None:
            keep = self.known()
            if keep_head_children and self.head is not None:
                keep |= set(children_of(self.head.pid))
            killed = kill_strays(self.init.pid, keep, dying=[p.pid for p in self._dying])
            # a next the head forked after ``keep`` was read is killed here too; its ready may be
            # in the socket and it may still be tearing down (alive to a pidfd): never take it
            self._swept.update(killed)
            self.channel.rx.drop_partials(keep)
            if killed:
                log.info("session %s: killed %d process(es) it did not know (left by user code, or a next "
                         "the head forked during the sweep)", self.id, len(killed))
            return killed
        return []

    def sweep_strays(self) -> int:
        """Kill every process that is not the keeper, init, the head, a taken next or a snapshot
        (the watchdog, between calls, with the session lock held). Returns how many were killed."""
        before = self.contain.killed_strays
        self.channel.pump(time.monotonic() + 0.002)  # a spare's offer, sent since the last call
        dropped = 0
        if self.next is not None and not self.next_sent:  # taken ahead (prefetch_next), never used: it goes
            self.take_spare()  # like a next not yet taken, with its spare; the head forks a cold one (0026)
            dropped = 1 + (self.spare is not None)
            self.bury_spare()
            self.bury(self.next, reads_socket=True)
            self.next = None
        killed = self.sweep(keep_head_children=False) or []
        return len(killed) + dropped + self.contain.killed_strays - before

    # ------------------------------------------------------------ lifetime
    def pids(self) -> dict:
        return {"keeper": self.keeper.pid, "init": self.init and self.init.pid, "head": self.head and self.head.pid,
                "next": self.next and self.next.pid, "spare": self.spare and self.spare.pid,
                "snapshots": {n: p.pid for n, (p, _) in self.snapshots.items()}}

    def close(self) -> None:
        """Kill init and the keeper (the pid namespace goes with init), then the session's cgroups."""
        self.closed = True
        procs = [p for p in (self.init, self.keeper) if p is not None]
        for p in procs:
            p.kill()
        for p in procs:
            p.wait_dead(2.0)
        self.contain.close()  # cgroup.kill of whatever is left in the session's cgroups
        for p in [self.init, self.keeper, self.head, self.next, self.spare] + [p for p, _ in self.snapshots.values()] \
                + self._dying:
            if p is not None:
                p.close()

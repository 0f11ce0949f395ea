"""One session, seen from the launcher: a thin façade over its socket, fork chain, calls and snapshots.

Every call goes to the pre-forked, already jailed ``next`` process; the launcher alone decides what
happens after it (``calls.py``), so whatever the code did, a failed call leaves the session exactly
as it was. Messages are accepted only from the process expected to send them (``channel.py``), a
``ready`` only from a child of the current head (``chain.py``). The session-wide bounds the kernel
does not keep here are kept by the launcher's watchdog (``launcher.contain.watchdog``).

Blocks: user code in the launcher (everything runs in the jailed chain), a call outliving its
limit or its cancellation. Does not: bound what the jail itself bounds (``jail.layers``).
"""
from __future__ import annotations

import time

from jail.wire import protocol
from launcher.contain import watchdog
from launcher.contain.containment import SessionContainment
from launcher.contain.procs import Proc
from launcher.replies import validate as replies
from launcher.session.reports import session_cpu_report, session_memory_report
from launcher.session.calls import Calls
from launcher.session.chain import Chain
from launcher.session.lock import SessionLock
from launcher.session.channel import Channel
from launcher.session.errors import SessionError
from launcher.session.snapshots import Snapshots
from launcher.session.startup import start


class Session:
    """One jailed session: ``execute`` and the tools' other calls, snapshots, reports, ``close``."""

    def __init__(self, zygote, profile, sid: str, *, start_timeout: float = 60.0):
        self.zygote = zygote
        self.profile = profile
        self.id = sid
        self.lock = SessionLock()  # re-entrant; runs what the last successful call left to do first
        self.sock, keeper_pid = zygote.spawn(profile)
        # the keeper waits for "go" until it is in the session's cgroup (launcher/contain/containment.py)
        self.contain = SessionContainment(sid, keeper_pid, profile.limits)
        try:
            protocol.send(self.sock, {"t": "go", "cgroup": self.contain.active})
        except OSError:
            pass  # a dead keeper is reported by start()
        self.channel = Channel(self.sock, profile.limits)
        self.chain = Chain(sid, keeper_pid, self.channel, self.contain, profile.limits)
        # the session-wide bounds the kernel does not keep here are kept by the launcher's watchdog
        self.watch = watchdog.SessionWatch(self, memory=not self.contain.memory_bounded,
                                           cpu=not self.contain.cpu_bounded)
        self.calls = Calls(sid, profile.limits, self.lock, self.chain, self.channel, self.watch)
        self.snapshot_store = Snapshots(self.chain, self.lock, profile.limits, self.watch.at_call_boundary)
        try:
            start(self.chain, time.monotonic() + start_timeout)
        except BaseException:
            self.close()
            raise
        if self.watch.active:
            watchdog.WATCHDOG.add(self.watch)

    # ------------------------------------------------------------ what tests, tools and the watchdog read
    @property
    def keeper(self) -> Proc:
        return self.chain.keeper

    @property
    def init(self) -> Proc | None:
        return self.chain.init

    @property
    def head(self) -> Proc | None:
        """After the last successful call's promotion (it follows the reply: ``SessionLock``)."""
        self.lock.settle()
        return self.chain.head

    @property
    def next(self) -> Proc | None:
        self.lock.settle()
        return self.chain.next

    @property
    def snapshots(self) -> dict[str, tuple[Proc, float]]:
        return self.chain.snapshots

    @property
    def evidence(self) -> dict:
        return self.chain.evidence

    @property
    def closed(self) -> bool:
        return self.chain.closed

    @property
    def last_error(self) -> dict | None:
        return self.calls.last_error

    @property
    def last_next_exit(self) -> dict | None:
        return self.channel.last_next_exit

    @property
    def ignored_messages(self) -> int:
        return self.channel.ignored_messages

    @property
    def rx(self) -> protocol.Receiver:
        return self.channel.rx

    # ------------------------------------------------------------ calls
    def execute(self, code: str, timeout_s: float | None = None, *, request: dict | None = None,
                limit_s: float | None = None, blob: bytes = b"",
                record: tuple[str, str | None] | None = None) -> dict:
        """Run ``code`` as a transaction (see ``Calls.execute``); on success the launcher's history
        gains ``record`` (``(script_code, note)``, default ``(code, None)``)."""
        return self.calls.execute(code, timeout_s, request=request, limit_s=limit_s, blob=blob, record=record)

    @property
    def history(self) -> tuple:
        """The launcher's record of the head's successful calls: ``(Entry(call, code, note), ...)``."""
        return self.chain.history.entries()

    def ask(self, request: dict, reply: str, timeout: float | None = None, cap: int | None = None,
            blob: bytes = b""):
        """A read-only request served by a disposable child of the next: (reply message, blob) (see ``Calls.ask``)."""
        return self.calls.ask(request, reply, timeout, cap, blob)

    def state(self) -> list[dict]:
        msg, _ = self.ask({"t": "state"}, "state")
        lim = self.profile.limits
        return replies.objects(msg.get("objects"), max(16 * 1024, lim.max_result_bytes // 2))

    def probe(self) -> dict:
        msg, _ = self.ask({"t": "probe"}, "probe", timeout=20)
        return replies.evidence(msg.get("evidence"))

    def export_bytes(self, name: str, fmt: str) -> tuple[dict, bytes]:
        msg, blob = self.ask({"t": "export", "name": name, "format": fmt}, "export", timeout=120,
                             cap=self.profile.limits.max_export_bytes + 65536)
        meta = replies.export_meta(msg)
        if not meta["ok"]:
            raise SessionError(f"export of {replies.line(name, 200)!r} as {replies.line(fmt, 16)} failed: "
                               f"{meta.get('error', '?')}")
        if meta["size"] != len(blob):
            raise SessionError("export reply size does not match its data")
        return meta, blob

    def ensure_next(self, timeout: float | None = None) -> None:
        """Wait until a next is ready for the following call (after the last call's promotion)."""
        with self.lock:
            self.chain.ensure_next(timeout)

    # ------------------------------------------------------------ cancellation (any thread, no lock)
    def cancel(self) -> bool:
        """Kill the call running now, from any thread, without the session lock: SIGKILL its next
        through the pidfd. The call returns a "cancelled" error and the session is as it was before
        the call (the head is untouched). False when no cancellable call runs."""
        return self.calls.cancellation.cancel()

    def abort_call(self, kind: str, message: str) -> bool:
        """Like cancel(), from the watchdog: the call running now fails with ``kind`` and
        ``message`` (its process is killed; the session is as it was before the call)."""
        return self.calls.cancellation.abort(kind, message)

    def retiring(self) -> set[int]:
        """Processes killed or about to be (the dying, and the old head retired after a success,
        decision 0023): the watchdog neither charges nor stops them (for the watchdog)."""
        return self.chain.dying_pids()

    def running_call(self) -> Proc | None:
        """The process of the call running now, or None between calls (for the watchdog)."""
        return self.calls.cancellation.running()

    def sweep_strays(self) -> int:
        """Kill every process that is not the keeper, init, the head, a taken next or a snapshot
        (the watchdog, between calls, with the session lock held). Returns how many were killed."""
        return self.chain.sweep_strays()

    # ------------------------------------------------------------ snapshots
    def save_snapshot(self, name: str) -> dict:
        return self.snapshot_store.save(name)

    def restore_snapshot(self, name: str) -> dict:
        return self.snapshot_store.restore(name)

    def delete_snapshot(self, name: str) -> dict:
        return self.snapshot_store.delete(name)

    def list_snapshots(self) -> list[dict]:
        return self.snapshot_store.listing()

    # ------------------------------------------------------------ reports and lifetime
    def pids(self) -> dict:
        self.lock.settle()
        return self.chain.pids()

    def memory_report(self) -> dict:
        """Which mechanism bounds the session's memory as a whole, the bound, the peak seen, kills."""
        return session_memory_report(self.profile.limits, self.watch, self.contain)

    def cpu_report(self) -> dict:
        """Which mechanism bounds the session's CPU share, the share, and how often it was throttled."""
        return session_cpu_report(self.profile.limits, self.watch, self.contain)

    def close(self) -> None:
        watchdog.WATCHDOG.remove(self.watch)  # first: continues what it stopped, stops watching
        self.lock.acquire(finish=False)  # a promotion still pending is not worth doing now
        try:
            self.lock.drop_pending()
            if self.chain.closed:
                return
            self.chain.close()  # kills init and the keeper, then the session's cgroups
            self.channel.close()  # gives back what the receiver held to the launcher-wide budget
        finally:
            self.lock.release()

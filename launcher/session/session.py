"""One session, seen from the launcher: a transactional fork chain.

Every call goes to the pre-forked, already jailed ``next`` process. The
launcher alone decides what happens after it (docs/ARCHITECTURE.md, rule 3):

* success: the old head is SIGKILLed (pidfd), strays are killed, and ``next``
  is told to become the head; it forks the following ``next`` off the
  critical path (the reply is returned before that fork is awaited);
* exception, timeout, crash, CPU/memory limit, invalid reply: ``next`` is
  SIGKILLed, strays are killed; the head, untouched, forks a new next;
* a timeout says where: shortly before the limit (0.5 s) ``next`` gets SIGUSR2
  and may answer with a ``partial`` (its line and output so far, rebuilt by
  ``replies.partial`` and shown as the session's report); the SIGKILL comes at
  the limit whether it answers, ignores the signal, dies of it or lies.

So whatever the code did, the session is exactly as it was before a failed
call. Messages are accepted only from the process expected to send them
(kernel-stamped pid), and a ``ready`` only from a child of the current head.

The launcher never blocks on the session: every send has a deadline (a
session that stops reading gets ``SessionNotReading``), every wait has one.
Every reply is bounded while it is read (``jail.wire.protocol.Receiver``: per
expected sender, per other sender, per session, process-wide) and rebuilt
field by field before it is held (``launcher.replies.validate``). A head that stops
serving (code left by an earlier *successful* call can make it deaf, or make
it never fork its next) is killed with a clear error; the snapshots are kept
and one can be restored. Only when nothing usable is left is the session
declared lost (``SessionDead``).
"""
from __future__ import annotations

import hashlib
import logging
import re
import select
import signal
import threading
import time

from jail.wire.errors import LayerError

from jail.wire import protocol
from launcher.replies import validate as replies
from launcher.replies import sanitize
from launcher.contain import watchdog
from launcher.contain.containment import SessionContainment, clone_filtered
from launcher.contain.procs import Proc, children_of, kill_strays, ppid_of
from launcher.session.errors import CallCancelled, SessionDead, SessionError, SessionNotReading

log = logging.getLogger("build123d_launcher.session")

SNAPSHOT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def _nonce(msg: dict) -> str:
    n = msg.get("nonce")
    return n if isinstance(n, str) and len(n) <= 64 else ""


class _TimedOut(TimeoutError):
    """The call hit its wall-clock limit; ``partial`` is what the child said when asked (or None)."""

    def __init__(self, partial: dict | None):
        super().__init__("timed out")
        self.partial = partial


def _err(type_: str, message: str, **kw) -> dict:
    return {"ok": False, "stdout": "", "stderr": "", "truncated": False, "objects": [], "duration_ms": None,
            "error": {"type": type_, "message": message, "line": None, "source_line": None, **kw}}


class Session:
    def __init__(self, zygote, profile, sid: str, *, start_timeout: float = 60.0):
        self.zygote = zygote
        self.profile = profile
        self.id = sid
        self.lock = threading.RLock()
        self.sock, keeper_pid = zygote.spawn(profile)
        # the keeper waits for "go" until it is in the session's cgroup (launcher/containment.py)
        self.contain = SessionContainment(sid, keeper_pid, profile.limits)
        try:
            protocol.send(self.sock, {"t": "go", "cgroup": self.contain.active})
        except OSError:
            pass  # a dead keeper is reported by _start
        lim = profile.limits
        self.rx = protocol.Receiver(self.sock, lim.max_export_bytes + 65536, max_json=max(lim.max_result_bytes, 1 << 20))
        self.tx = protocol.Sender(self.sock)
        self.head_lost: str | None = None  # why the head was killed, while no snapshot has been restored
        self.keeper = Proc(keeper_pid)
        self.init: Proc | None = None
        self.head: Proc | None = None
        self.next: Proc | None = None
        self.snapshots: dict[str, tuple[Proc, float]] = {}
        self.last_error: dict | None = None
        self.last_next_exit: dict | None = None
        self.ignored_messages = 0
        self._dying: list[Proc] = []
        self._early_ready: list[tuple[int, str]] = []  # (pid, nonce) of readies that came early
        self._sweep_pending = False  # the after-call sweep could not run (out of fds): run before the next call
        self._swept: set[int] = set()  # pids just killed by such a deferred sweep: never taken as the next
        self.next_nonce = ""
        self.calls = 0
        self.evidence: dict = {}
        self.closed = False
        self._abort: tuple[str, str] | None = None  # (error type, message) of a call the watchdog killed
        # the session-wide bounds the kernel does not keep here are kept by the launcher's watchdog
        self.watch = watchdog.SessionWatch(self, memory=not self.contain.memory_bounded,
                                           cpu=not self.contain.cpu_bounded)
        try:
            self._start(keeper_pid, time.monotonic() + start_timeout)
        except BaseException:
            self.close()
            raise
        if self.watch.active:
            watchdog.WATCHDOG.add(self.watch)

    def _start(self, keeper_pid: int, deadline: float) -> None:
        """Wait for init to apply the layers, then for the first ready next.

        Fail closed with the layer's name: init announces each layer before
        applying it, and the keeper reports how init ended if it dies.
        """
        applying = None
        while True:
            try:
                pid, msg, _ = self._wait(("init_ok", "jail_error", "applying", "init_exit"), None, deadline,
                                         watch=self.keeper,
                                         accept=lambda p: p == keeper_pid or ppid_of(p) == keeper_pid)
            except (SessionDead, TimeoutError, protocol.ProtocolError) as e:
                raise LayerError(applying or "namespaces",
                                 f"the session could not start ({e or 'timed out'}); no user code ran") from None
            t = msg["t"]
            if t == "applying" and pid != keeper_pid:
                applying = sanitize.log_token(msg.get("layer"), 40)
                continue
            if t == "init_exit" and pid == keeper_pid:
                how = replies.line(msg.get("signal"), 40) or f"exit code {replies.count(msg.get('exit_code'), 255)}"
                raise LayerError(applying or "namespaces",
                                 f"the session's init process died ({how}) while this layer was applied or just "
                                 f"after; no user code ran")
            if t == "jail_error":
                raise LayerError(sanitize.log_token(msg.get("layer"), 40),
                                 replies.line(msg.get("reason"), 2000) or "?")
            if t == "init_ok" and pid != keeper_pid:
                break
        self.init = Proc(pid)
        self.evidence = replies.evidence(msg.get("evidence"))
        try:
            self._await_ready(deadline, parent_of_head=self.init.pid)
        except (SessionDead, TimeoutError, protocol.ProtocolError) as e:
            raise LayerError(applying or "startup", f"the jailed session started but its first process died "
                                                    f"({e or 'timed out'}); likely a syscall the seccomp allowlist "
                                                    f"lacks on this host. No user code ran") from None

    # ------------------------------------------------------------ plumbing
    SMALL_REPLY = 1 << 20  # cap of a message nobody in particular is expected to send (ready, restored, ...)

    def _wait(self, types, pid_expected, deadline, *, watch: Proc | None = None, accept=None,
              cap: int | None = None):
        """Next valid message of one of ``types`` from the expected sender.

        Raises TimeoutError at the deadline, SessionDead if ``watch`` dies first.
        Messages from anyone else are dropped (and counted). ``pid_expected``'s message may be up
        to ``cap`` bytes (default: the profile's ``max_result_bytes``); anyone else's only a small
        one (the Receiver drops the rest as it arrives).
        """
        if pid_expected is not None and pid_expected > 0:
            self.rx.expect(pid_expected, cap or self.profile.limits.max_result_bytes)
        else:
            self.rx.expect(None if accept is not None else -1, self.SMALL_REPLY)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            fds = [self.sock] + ([watch.fd] if watch is not None and watch.fd >= 0 else [])
            r, _, _ = select.select(fds, [], [], left)
            if not r:
                continue
            if self.sock in r:
                try:
                    got = self.rx.read_one()
                except OSError as e:
                    raise SessionDead(f"the session's socket failed: {e}") from None
                if got is None:
                    raise SessionDead("the session's socket closed")
                pid, msg, blob, err = got
                ok_sender = (pid == pid_expected) if pid_expected is not None else bool(accept and accept(pid))
                if pid_expected is None and accept is None:
                    ok_sender = True
                if msg is None and err is None:
                    continue  # more datagrams to come
                if err is not None:
                    if ok_sender and "ready" not in types:  # garbage is only fatal from the process asked
                        raise protocol.ProtocolError(err)
                    self.ignored_messages += 1
                    continue
                if msg["t"] == "next_exit" and self.head is not None and pid == self.head.pid:
                    self.last_next_exit = msg
                    continue
                if ok_sender and msg["t"] in types:
                    return pid, msg, blob
                if msg["t"] == "ready" and len(self._early_ready) < 16:
                    # a next that got ready while we waited for something else
                    self._early_ready.append((pid, _nonce(msg)))
                    continue
                self.ignored_messages += 1
                continue
            if watch is not None and not watch.alive():
                # drain what it may have sent just before dying (bounded: others may keep sending)
                for _ in range(1024):
                    if not select.select([self.sock], [], [], 0)[0]:
                        break
                    try:
                        got = self.rx.read_one()
                    except OSError:
                        break
                    if got is None:
                        break
                    pid, msg, blob, err = got
                    if msg is not None and msg["t"] in types and (pid == pid_expected):
                        return pid, msg, blob
                    if msg is not None and msg["t"] == "next_exit" and self.head and pid == self.head.pid:
                        self.last_next_exit = msg
                    elif msg is not None and msg["t"] == "ready" and len(self._early_ready) < 16:
                        self._early_ready.append((pid, _nonce(msg)))
                raise SessionDead(f"process {watch.pid} died")

    def _pump(self, until: float) -> None:
        """Read (and file: next_exit, early readies) whatever arrives until ``until``."""
        try:
            self._wait((), -1, until)
        except (TimeoutError, SessionDead, protocol.ProtocolError):
            pass

    def _await_ready(self, deadline, *, parent_of_head: int | None = None) -> None:
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

        watch = self.head or self.init
        early, self._early_ready = self._early_ready, []
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
                    pid, msg, _ = self._wait(("ready",), None, deadline, watch=watch, accept=accept)
                    nonce = _nonce(msg)
                    candidates.append((pid, nonce))
                    if usable(pid):  # not a stale ready of a process already killed (a stray swept after a call)
                        break
                    self.ignored_messages += 1
            head = self.head if self.head is not None else Proc(ppid_of(pid))
            nxt = Proc(pid)
        except OSError as e:
            if isinstance(e, ProcessLookupError):
                raise SessionDead(f"process {getattr(e, 'filename', '') or '?'} vanished") from None
            self._early_ready = (candidates + self._early_ready)[-16:]
            raise
        self.head = head
        self.next, self.next_nonce = nxt, nonce
        self.contain.on_ready(self.head, self.next, [p for p, _ in self.snapshots.values()])  # before any request

    def _fork_timeout(self) -> float:
        """How long a head may take to fork its next (milliseconds normally; generous under load)."""
        return max(10.0, min(30.0, float(self.profile.limits.timeout_s)))

    def _ensure_next(self, timeout: float | None = None) -> None:
        if self.closed:
            raise SessionDead("this session is closed")
        if self._dying:
            self._reap_dying()
        if self._sweep_pending and self.head is not None:
            # the sweep after the last successful call could not run (out of fds): run it now,
            # before any ready is taken, keeping no child of the head (its next among them: the
            # head forks another), so nothing that call started can pose as the next
            self.next = None
            killed = self._sweep(keep_head_children=False)  # OSError again: this call fails, nothing ran
            self._sweep_pending = False
            self._early_ready.clear()
            self._swept.update(killed or ())
        if self.next is not None and self.next.alive():
            return
        if self.head is None:
            self._no_head(self.head_lost or "the session has no head process")
        if not self.head.alive():
            self._drop_head("died")
        self.next = None
        timeout = timeout if timeout is not None else self._fork_timeout()
        try:
            self._await_ready(time.monotonic() + timeout)
            self._swept.clear()
        except TimeoutError:
            self._drop_head(f"did not fork a new child within {timeout:g}s")
        except SessionDead:
            self._drop_head("died")

    def _drop_head(self, why: str) -> None:
        """The head cannot serve: kill it (and whatever it forked), keep the snapshots, say so."""
        self._bury(self.head)
        self._bury(self.next, reads_socket=True)
        self.head, self.next, self.next_nonce = None, None, ""
        self._early_ready.clear()
        self._sweep()
        self.head_lost = (f"the session's head process {why} (code run by an earlier successful call can do "
                          "this) and was killed: the session's current state is gone")
        log.warning("session %s: head lost: %s", self.id, why)
        self._no_head(self.head_lost)

    def _no_head(self, why: str) -> None:
        if self.init is None or not self.init.alive():  # the pid namespace goes with it, snapshots too
            raise SessionDead(f"{why}; the session's init process is gone too, and every snapshot with it")
        live = sorted(n for n, (p, _) in self.snapshots.items() if p.alive())
        if live:
            raise SessionError(f"{why}. Its snapshots are kept: restore one ({', '.join(live)}) or reset.")
        raise SessionDead(f"{why}, and it has no snapshot")

    def _known(self) -> set[int]:
        keep = {p.pid for p in (self.init, self.head, self.next) if p is not None}
        keep |= {p.pid for p, _ in self.snapshots.values()}
        keep |= {p.pid for p in self._dying}  # already SIGKILLed, still being torn down
        return keep

    def _bury(self, p: Proc | None, *, reads_socket: bool = False) -> None:
        """SIGKILL ``p`` without waiting for the kernel to tear it down (that takes ~10-20 ms for a
        process mapping build123d); it can run no more user-space code once the signal is queued.

        A process that may be blocked in recv() on the session socket (a next) could still take
        one datagram that arrives before it is scheduled to die: with ``reads_socket`` wait until it
        has entered its exit (microseconds), so the next request cannot be lost to it.
        """
        if p is None:
            return
        p.kill()
        self._dying.append(p)
        if reads_socket:
            p.wait_exiting(1.0)

    def _reap_dying(self) -> None:
        still = []
        for p in self._dying:
            if p.alive():
                still.append(p)
            else:
                p.close()
        self._dying = still

    def _discard_next(self) -> None:
        self._bury(self.next, reads_socket=True)
        self.next = None
        self._sweep()

    def _sweep(self, *, keep_head_children: bool = True) -> None:
        """Kill every session process that is not init, head, next, a snapshot or dying.

        After a *failed* call the head's children are its own freshly forked nexts (the
        head has not run user code since the sweep that promoted it), so they are kept.
        When a call *succeeds* its process becomes the head, and its children are whatever
        the user's code forked: then nothing but the known processes is kept.
        """
        self.contain.sweep(self._known() | {self.keeper.pid}, self.head, [p for p, _ in self.snapshots.values()],
                           head_children_legit=keep_head_children and clone_filtered(self.evidence))
        if self.init is not None:
            keep = self._known()
            if keep_head_children and self.head is not None:
                keep |= set(children_of(self.head.pid))
            killed = kill_strays(self.init.pid, keep, dying=[p.pid for p in self._dying])
            self.rx.drop_partials(keep)
            if killed:
                log.info("session %s: killed %d stray process(es) left by user code", self.id, len(killed))
            return killed
        return []

    SEND_TIMEOUT = 5.0

    def _send_next(self, obj: dict, deadline: float | None = None) -> None:
        """A request addressed to the current next by its nonce: a request left unread by a
        next that died stays in the socket, and the following next must not run it.

        SessionNotReading (after killing the next: the request may be half-sent) when the
        session does not take it before ``deadline``."""
        try:
            self._send({**obj, "to": self.next_nonce}, deadline)
        except SessionNotReading:
            self._discard_next()
            raise

    def _send(self, obj: dict, deadline: float | None = None) -> None:
        deadline = deadline if deadline is not None else time.monotonic() + self.SEND_TIMEOUT
        try:
            self.tx.send(obj, max(deadline, time.monotonic() + 0.5))
        except protocol.SendTimeout:
            raise SessionNotReading(
                "the session's process did not take the request (its socket stayed full): code run by an "
                "earlier successful call has stopped this session's processes from reading. Nothing ran; the "
                "session is unchanged. Restore a snapshot taken before that call, or reset") from None
        except OSError as e:
            raise SessionDead(f"cannot reach the session: {e}") from None

    def _died_reason(self) -> str:
        # the head reaps the dead next and reports its exit status; wait briefly for that
        deadline = time.monotonic() + 0.5
        while self.last_next_exit is None and time.monotonic() < deadline:
            self._pump(min(deadline, time.monotonic() + 0.05))
        ne = self.last_next_exit  # sent by the head: untrusted, shown only as a checked name or number
        if ne and isinstance(ne.get("signal"), str):
            sig = sanitize.log_token(ne["signal"], 24)
            hint = {"SIGXCPU": "the CPU-time limit (RLIMIT_CPU) was reached",
                    "SIGSYS": "a forbidden system call was made (seccomp)",
                    "SIGSEGV": "it crashed (segmentation fault)",
                    "SIGABRT": "it aborted",
                    "SIGKILL": "it was killed (out of memory, or from outside)"}.get(sig, "it was killed")
            return f"the child process died from {sig}: {hint}"
        if ne and replies.count(ne.get("exit_code"), 255) is not None:
            return f"the child process exited with code {ne['exit_code']} before replying"
        return "the child process died before replying"

    # ------------------------------------------------------------ tools
    def execute(self, code: str, timeout_s: float | None = None, *, request: dict | None = None,
                limit_s: float | None = None) -> dict:
        """Run ``code``; ``timeout_s`` may shorten the profile's wall-clock limit, never extend it.

        ``request`` replaces the ``execute`` request with another transaction op (e.g. ``import``,
        launcher/inputs.py) served the same way; ``code`` is then only what the log records, and
        ``limit_s`` (e.g. the profile's ``import_timeout_s``) replaces ``timeout_s`` as the limit."""
        with self.lock:
            lim = self.profile.limits
            limit = lim.timeout_s if limit_s is None else float(limit_s)
            if timeout_s is not None:
                if isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float)) or not timeout_s > 0:
                    return _err("InvalidRequest", "timeout_s must be a positive number of seconds")
                limit = min(float(timeout_s), lim.timeout_s)
            if not isinstance(code, str):
                return _err("InvalidRequest", "code must be a string")
            if len(code.encode("utf-8", "surrogatepass")) > lim.max_code_bytes:
                return self._record(_err("InvalidRequest", f"code is larger than the profile's "
                                                           f"{lim.max_code_bytes}-byte limit"), code, 0.0, "too-large")
            self._ensure_next()
            self.watch.at_call_boundary()  # the next must be able to take the request
            self.calls += 1
            self.last_next_exit = None
            start = time.monotonic()
            try:
                self._send_next(request or {"t": "execute", "code": code}, start + limit)
            except SessionNotReading as e:
                return self._record(_err("SessionNotReading", str(e)), code, start, "not-reading")
            nxt = self.next
            try:
                try:
                    _pid, msg, _ = self._wait_cancellable(("result",), nxt, start + limit - self._grace(limit))
                except TimeoutError:
                    msg = self._last_words(nxt, start + limit)  # _TimedOut (with what it said) at the limit
                result = self._validate_result(msg)
            except CallCancelled:
                self._discard_next()
                if self._abort is not None:  # the watchdog killed it (a session-wide bound)
                    kind, why = self._abort
                    return self._record(_err(kind, why), code, start, "memory")
                return self._record(_err("Cancelled", "the call was cancelled and its process killed; "
                                                      "the session is unchanged"), code, start, "cancelled")
            except TimeoutError as e:
                self._discard_next()
                return self._record(self._timeout_result(limit, getattr(e, "partial", None)),
                                    code, start, "timeout")
            except SessionDead:
                reason = self._died_reason()
                self._discard_next()
                return self._record(_err("ChildDied", f"{reason}; the session is unchanged"), code, start, "died")
            except protocol.ProtocolError as e:
                self._discard_next()
                return self._record(_err("ProtocolError", f"the child sent an invalid reply "
                                                          f"({sanitize.text(str(e), 300, keep='')}) and was "
                                                          "killed; the session is unchanged"), code, start, "protocol")
            except Exception as e:  # noqa: BLE001 - MemoryError, a launcher bug: the cleanup still runs
                log.exception("session %s: reading the reply failed", self.id)
                self._discard_next()
                return self._record(_err("LauncherError", f"the launcher could not handle the reply "
                                                          f"({type(e).__name__}); the child was killed and the "
                                                          "session is unchanged"), code, start, "launcher-error")
            if not result["ok"]:
                self._discard_next()
                return self._record(result, code, start, "error")
            over = self.watch.memory is not None and self.watch.over_after_call(self)
            if over:  # the state it would leave is over session_memory_mb (no kernel bound here)
                self._discard_next()
                return self._record(_err("SessionMemoryLimit", over), code, start, "memory")
            # success: nxt becomes head
            self._bury(self.head)
            nonce = self.next_nonce
            self.head, self.next = nxt, None
            try:
                self._sweep(keep_head_children=False)
            except OSError as e:  # the launcher is out of fds: promote anyway, sweep before the next call
                log.warning("session %s: the after-call sweep failed (%s); it runs before the next call", self.id, e)
                self._sweep_pending = True
            try:
                self._send({"t": "promote", "to": nonce})
            except SessionError as e:  # cannot happen with a process that reads; the state is lost if it does
                self._drop_head_quietly(f"did not take its promotion ({e})")
                result["stderr"] += ("\n[launcher: the call ran, but its process then stopped reading and was "
                                     "killed: the session's state is gone; restore a snapshot or reset]\n")
            return self._record(result, code, start, "ok")

    # ------------------------------------------------------------ timeouts that say where
    @staticmethod
    def _grace(limit: float) -> float:
        """How long before the hard limit the running child is asked where it is."""
        return min(0.5, limit * 0.25)

    def _last_words(self, nxt: Proc, hard: float) -> dict:
        """Near the limit: SIGUSR2 the child (its runner's handler answers with a ``partial``: the
        line it is on and the output so far), then wait until the hard limit for its real result.
        Returns the result if it comes in time; otherwise raises _TimedOut carrying the partial
        reply (or None). Nothing depends on the child answering: user code may replace the
        handler (no answer), die of the signal (a timeout all the same) or lie (it is shown as
        the child's report); the caller SIGKILLs it either way."""
        nxt.kill(signal.SIGUSR2)
        got = None
        try:
            while True:
                _pid, msg, _ = self._wait_cancellable(("result", "partial"), nxt, hard)
                if msg["t"] == "result":
                    return msg
                if got is None:
                    got = replies.partial(msg, max_output_bytes=self.profile.limits.max_output_bytes)
        except (TimeoutError, SessionDead):
            raise _TimedOut(got) from None

    def _timeout_result(self, limit: float, partial: dict | None) -> dict:
        r = _err("ExecutionTimeout", f"execution exceeded the {limit:g}s wall-clock limit and was killed; "
                                     "the session is unchanged")
        if partial is not None:
            r["stdout"], r["stderr"] = partial["stdout"], partial["stderr"]
            r["error"].update(line=partial["line"], source_line=partial["source_line"],
                              context=partial["context"], reported=True)
            if partial.get("function"):
                r["error"]["function"] = partial["function"]
            if partial["origin"] is not None:
                r["error"]["origin"] = partial["origin"]
        return r

    def _drop_head_quietly(self, why: str) -> None:
        try:
            self._drop_head(why)
        except SessionError:
            pass

    def _validate_result(self, msg: dict) -> dict:
        """The reply rebuilt with strict types, safe text and the profile's caps (launcher/replies.py)."""
        lim = self.profile.limits
        return replies.result(msg, max_output_bytes=lim.max_output_bytes, max_result_bytes=lim.max_result_bytes)

    def _record(self, result: dict, code: str, start: float, outcome: str) -> dict:
        self.watch.at_call_boundary()  # nothing the CPU watchdog stopped is left stopped after a call
        dur = (time.monotonic() - start) * 1000 if start else 0.0
        result["wall_ms"] = round(dur, 2)
        if not result.get("ok"):
            self.last_error = {**(result.get("error") or {}), "outcome": outcome}
            line = self.last_error.get("line")
            if isinstance(line, int) and line > 0 and not self.last_error.get("source_line"):
                lines = code.splitlines()
                if line <= len(lines):
                    self.last_error["source_line"] = replies.line(lines[line - 1], replies.SOURCE_LINE_CAP)
        err = result.get("error") or {}
        layer = err.get("rule") or err.get("type") or "-"  # from the jail: one escaped token, no forged fields
        logging.getLogger("build123d_launcher.audit").info(
            "execute session=%s sha256=%s outcome=%s duration_ms=%.1f layer=%s", sanitize.log_token(self.id),
            hashlib.sha256(code.encode("utf-8", "surrogatepass")).hexdigest()[:16], outcome, dur,
            sanitize.log_token(layer if isinstance(layer, str) else "-"))
        return result

    # ------------------------------------------------------------ cancellation
    _cancel_lock = threading.Lock()  # class-wide: held for a few instructions only
    _busy: Proc | None = None        # the next a cancellable call waits on
    _cancel_hit: Proc | None = None  # the next cancel() killed

    def cancel(self) -> bool:
        """Kill the call running now, from any thread, without the session lock: SIGKILL its next
        through the pidfd. The call returns a "cancelled" error and the session is as it was before
        the call (the head is untouched). False when no cancellable call runs."""
        with self._cancel_lock:
            nxt = self._busy
            if nxt is None:
                return False
            self._cancel_hit = nxt
            nxt.kill()
            return True

    def abort_call(self, kind: str, message: str) -> bool:
        """Like cancel(), from the watchdog: the call running now fails with ``kind`` and
        ``message`` (its process is killed; the session is as it was before the call)."""
        with self._cancel_lock:
            nxt = self._busy
            if nxt is None or self._cancel_hit is nxt:
                return False
            self._abort = (kind, message)
            self._cancel_hit = nxt
            nxt.kill()
            return True

    def sweep_strays(self) -> int:
        """Kill every process that is not the keeper, init, the head, a taken next or a snapshot
        (the watchdog, between calls, with the session lock held). Returns how many were killed."""
        before = self.contain.killed_strays
        killed = self._sweep(keep_head_children=False) or []
        return len(killed) + self.contain.killed_strays - before

    def _wait_cancellable(self, types, nxt: Proc, deadline, **kw):
        """``_wait`` for ``nxt``'s reply; CallCancelled if cancel() hit it (even after the reply came)."""
        with self._cancel_lock:
            self._busy, self._cancel_hit, self._abort = nxt, None, None
        try:
            got = self._wait(types, nxt.pid, deadline, watch=nxt, **kw)
        except (TimeoutError, SessionDead, protocol.ProtocolError):
            if self._disarm(nxt):
                raise CallCancelled() from None
            raise
        if self._disarm(nxt):
            raise CallCancelled()
        return got

    def _disarm(self, nxt: Proc) -> bool:
        with self._cancel_lock:
            self._busy = None
            hit, self._cancel_hit = self._cancel_hit is nxt, None
            return hit

    def ask(self, request: dict, reply: str, timeout: float | None = None, cap: int | None = None):
        """Serve a read-only request from a disposable next (it exits after replying); its reply
        may be up to ``cap`` bytes (default: the profile's ``max_result_bytes``)."""
        try:
            return self._ask_served(request, reply, timeout, cap)
        finally:
            self.watch.at_call_boundary()  # nothing the CPU watchdog stopped is left stopped after a call

    def _ask_served(self, request: dict, reply: str, timeout: float | None, cap: int | None):
        with self.lock:
            self._ensure_next()
            self.watch.at_call_boundary()
            nxt = self.next
            timeout = timeout or max(self.profile.limits.timeout_s, 10.0)
            deadline = time.monotonic() + timeout
            self._send_next(request, deadline)
            try:
                _pid, msg, blob = self._wait_cancellable((reply,), nxt, deadline, cap=cap)
            except CallCancelled:
                self._discard_next()
                if self._abort is not None:
                    raise SessionError(f"{request['t']}: {self._abort[1]}") from None
                raise SessionError(f"{request['t']} was cancelled; the session is unchanged") from None
            except TimeoutError:
                self._discard_next()
                raise SessionError(f"{request['t']} did not finish within {timeout:g}s") from None
            except SessionDead:
                reason = self._died_reason()
                self._discard_next()
                raise SessionError(f"{request['t']} failed: {reason}") from None
            except protocol.ProtocolError as e:
                self._discard_next()
                raise SessionError(f"{request['t']}: invalid reply from the child "
                                   f"({sanitize.text(str(e), 300, keep='')}); the session is unchanged") from None
            except Exception as e:  # noqa: BLE001 - MemoryError, a launcher bug: the cleanup still runs
                log.exception("session %s: reading the %s reply failed", self.id, request["t"])
                self._discard_next()
                raise SessionError(f"{request['t']}: the launcher could not handle the reply "
                                   f"({type(e).__name__}); the session is unchanged") from None
            self._discard_next()
            return msg, blob

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

    # ------------------------------------------------------------ snapshots
    def save_snapshot(self, name: str) -> dict:
        with self.lock:
            if not isinstance(name, str) or not SNAPSHOT_NAME.match(name):
                raise SessionError("snapshot names are 1–64 characters of letters, digits, '_', '.', '-' "
                                   "and start with a letter or digit")
            if name in self.snapshots:
                raise SessionError(f"snapshot {name!r} exists; delete it first or pick another name")
            cap = self.profile.limits.max_snapshots
            if len(self.snapshots) >= cap:
                raise SessionError(f"this session already holds {cap} snapshots (the profile's max_snapshots); "
                                   f"delete one first: {', '.join(sorted(self.snapshots))}")
            self._ensure_next()
            nxt = self.next
            self._send_next({"t": "snapshot"})
            try:
                self._wait(("snapshot_ok",), nxt.pid, time.monotonic() + 10, watch=nxt)
            except (TimeoutError, SessionDead, protocol.ProtocolError):
                self._discard_next()
                raise SessionError("the snapshot could not be taken (its process did not answer)") from None
            self.snapshots[name] = (nxt, time.time())
            self.next = None
            return {"name": name, "snapshots": sorted(self.snapshots)}

    def restore_snapshot(self, name: str) -> dict:
        with self.lock:
            if name not in self.snapshots:
                raise SessionError(f"no snapshot named {name!r} (have: {', '.join(sorted(self.snapshots)) or 'none'})")
            snap, _ = self.snapshots[name]
            if not snap.alive():
                del self.snapshots[name]
                raise SessionError(f"snapshot {name!r} no longer exists (its process was killed)")
            old_head, old_next = self.head, self.next
            snap.kill(signal.SIGUSR1)

            try:
                # the new head says "restored" as soon as it is forked (its next follows, and is
                # taken by the next call like after any successful execute)
                pid, msg, _ = self._wait(("restored",), None, time.monotonic() + 10, watch=snap,
                                         accept=lambda p: ppid_of(p) == snap.pid)
            except (TimeoutError, SessionDead, protocol.ProtocolError):
                if not snap.wait_dead(0.2):
                    raise SessionError(f"snapshot {name!r} did not fork a new head; the session is unchanged") \
                        from None
                self.snapshots.pop(name, None)
                self._bury(snap)
                raise SessionError(f"snapshot {name!r} no longer exists (its process was killed); "
                                   "the session is unchanged") from None
            try:
                new_head = Proc(pid)
            except OSError:
                raise SessionError(f"the head restored from {name!r} died at once; the session is unchanged") \
                    from None
            # The old head first: once its SIGKILL is queued it can fork no replacement for old_next.
            self._bury(old_head)
            self._bury(old_next, reads_socket=True)
            self.head, self.next, self.next_nonce = new_head, None, ""
            self.head_lost = None
            # what old_head forked untracked (the next it made after the last call): killed here by pidfd
            # and known as dying, so the sweep below finds nothing unknown and needs no cgroup freeze
            # (~20 ms); its child set can only shrink now that it is dead. Snapshots it made are kept.
            if old_head is not None:
                keep = self._known()
                for c in children_of(old_head.pid):
                    if c not in keep:
                        try:
                            self._bury(Proc(c), reads_socket=True)
                        except OSError:
                            pass  # gone already, or no fd for it: the sweep handles it
            self._sweep()  # and kills anything else that is not init, head, a snapshot or dying
            return {"restored": name}

    def delete_snapshot(self, name: str) -> dict:
        with self.lock:
            if name not in self.snapshots:
                raise SessionError(f"no snapshot named {name!r}")
            snap, _ = self.snapshots.pop(name)
            self._bury(snap)
            return {"deleted": name, "snapshots": sorted(self.snapshots)}

    def list_snapshots(self) -> list[dict]:
        return [{"name": n, "created": t, "alive": p.alive()} for n, (p, t) in sorted(self.snapshots.items())]

    # ------------------------------------------------------------ lifetime
    def pids(self) -> dict:
        return {"keeper": self.keeper.pid, "init": self.init and self.init.pid, "head": self.head and self.head.pid,
                "next": self.next and self.next.pid,
                "snapshots": {n: p.pid for n, (p, _) in self.snapshots.items()}}

    def memory_report(self) -> dict:
        """Which mechanism bounds the session's memory as a whole, the bound, the peak seen, kills."""
        lim = self.profile.limits.session_memory_mb * 1024 * 1024
        m = self.watch.memory
        if m is not None:
            return {"mechanism": "watchdog", "limit_bytes": lim, "peak_bytes": m.peak, "kills": m.kills,
                    "last_bytes": m.last_total, "exact_reads": m.precise_reads}
        return {"mechanism": self.contain.memory_mechanism, "limit_bytes": lim,
                "peak_bytes": self.contain.memory_peak_bytes(), "kills": self.contain.oom_kills()}

    def cpu_report(self) -> dict:
        """Which mechanism bounds the session's CPU share, the share, and how often it was throttled."""
        c = self.watch.cpu
        if c is not None:
            return {"mechanism": "watchdog", "cpus": c.cpus, "throttled": c.throttled}
        return {"mechanism": "cgroup-v2", "cpus": self.profile.limits.session_cpus,
                "throttled": self.contain.cpu_throttled()}

    def close(self) -> None:
        watchdog.WATCHDOG.remove(self.watch)  # first: continues what it stopped, stops watching
        with self.lock:
            if self.closed:
                return
            self.closed = True
            procs = [p for p in (self.init, self.keeper) if p is not None]
            for p in procs:
                p.kill()
            for p in procs:
                p.wait_dead(2.0)
            self.contain.close()  # cgroup.kill of whatever is left in the session's cgroups
            for p in [self.init, self.keeper, self.head, self.next] + [p for p, _ in self.snapshots.values()] \
                    + self._dying:
                if p is not None:
                    p.close()
            self.rx.close()  # gives back what it held to the launcher-wide budget
            try:
                self.sock.close()
            except OSError:
                pass

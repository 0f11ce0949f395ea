"""Calls: a transaction on the pre-forked, jailed ``next``, and the read-only call ``ask`` (served by a
disposable child of the next, which stays the next).

The launcher alone decides what happens after a call (docs/ARCHITECTURE.md, rule 3):

* success: the next becomes the head (``Chain.promote``); the old head and strays are killed. That is
  done after the reply, before the lock lets anything else at the session (decision 0028);
* exception, timeout, crash, CPU/memory limit, invalid reply, cancel: the next is SIGKILLed, strays
  are killed; the head, untouched, forks a new next. So a failed call leaves the session as it was;
* a timeout says where: shortly before the limit the next gets SIGUSR2 and may answer with a
  ``partial`` (its line and output so far), shown as the child's report; the SIGKILL comes at the
  limit whether it answers, ignores the signal, dies of it or lies.

Every reply is rebuilt field by field before it is held (``launcher.replies.validate``).
Blocks: a call past its wall-clock limit, a reply that lies about its shape. Does not: bound the
session as a whole (``launcher.contain``).
"""
from __future__ import annotations

import logging
import os
import signal
import time

from jail.wire import protocol
from jail.wire.caps import SCRATCH_MAX_FILES
from launcher.contain.procs import Proc, ppid_of
from launcher.contain.watchdog import SessionWatch
from launcher.replies import sanitize
from launcher.replies import validate as replies
from launcher.session.reports import log_call, log_silent_timeout
from launcher.session.cancel import Cancellation
from launcher.session.chain import Chain
from launcher.session.channel import Channel
from launcher.session.errors import CallCancelled, SessionDead, SessionError, SessionNotReading

log = logging.getLogger("build123d_launcher.session")


PREFETCH_S = 0.25  # after a promotion: how long the new head's next may take to say ready before the next call waits for it


class TimedOut(TimeoutError):
    """The call hit its wall-clock limit; ``partial`` is what the child said when asked (or None)."""

    def __init__(self, partial: dict | None):
        super().__init__("timed out")
        self.partial = partial


def error_result(type_: str, message: str, **kw) -> dict:
    return {"ok": False, "stdout": "", "stderr": "", "truncated": False, "objects": [], "duration_ms": None,
            "error": {"type": type_, "message": message, "line": None, "source_line": None, **kw}}


def grace(limit: float) -> float:
    """How long before the hard limit the running child is asked where it is: a quarter of the limit,
    at most 1 s (on a loaded host a busy child may take a few hundred ms to be scheduled and answer)."""
    return min(1.0, limit * 0.25)


class Calls:
    """Serves one session's calls (under the session lock) and keeps the last error."""

    def __init__(self, sid: str, limits, lock, chain: Chain, channel: Channel, watch: SessionWatch):
        self.id = sid
        self.limits = limits
        self.lock = lock
        self.chain = chain
        self.channel = channel
        self.watch = watch
        self.cancellation = Cancellation(channel)
        self.last_error: dict | None = None
        #: the files the last successful ``execute`` wrote (its result's ``files`` and blob, checked
        #: by ``validate.written``); empty after any other call. Read under ``lock`` by the execute
        #: tool, which delivers them (launcher/files/delivery.py).
        self.written = replies.Written()

    # ------------------------------------------------------------ transactions
    def execute(self, code: str, timeout_s: float | None = None, *, request: dict | None = None,
                limit_s: float | None = None, blob: bytes = b"",
                record: tuple[str, str | None] | None = None) -> dict:
        """Run ``code``; ``timeout_s`` replaces the profile's wall-clock limit (``timeout_s``), up to its
        ``max_timeout_s`` (above it: refused, naming the key).

        ``request`` replaces the ``execute`` request with another transaction op (e.g. ``import``,
        launcher/files/inputs.py) served the same way; ``code`` is then only what the log records, and
        ``limit_s`` (e.g. the profile's ``import_timeout_s``) replaces ``timeout_s`` as the limit.
        On success the head's history (``chain.history``) gains ``record`` = ``(script_code, note)``,
        by default ``(code, None)``, and the result's ``call`` is its number there; nothing is recorded
        for a call that failed in any way. The promotion follows the reply (``_promote``)."""
        chain, cancellation = self.chain, self.cancellation
        rec = (code, None) if record is None else record
        if not (isinstance(rec, tuple) and len(rec) == 2 and isinstance(rec[0], str)
                and (rec[1] is None or isinstance(rec[1], str))):
            raise TypeError("record must be (script_code: str, note: str | None) or None")
        with self.lock:
            lim = self.limits
            limit = lim.timeout_s if limit_s is None else float(limit_s)
            if timeout_s is not None:
                if isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float)) or not timeout_s > 0:
                    return error_result("InvalidRequest", "timeout_s must be a positive number of seconds")
                if timeout_s > lim.max_timeout_s:
                    return error_result("InvalidRequest", f"timeout_s {timeout_s:g} is above the profile's maximum, "
                                                          f"max_timeout_s = {lim.max_timeout_s:g} s; ask for at most that")
                limit = float(timeout_s)
            if not isinstance(code, str):
                return error_result("InvalidRequest", "code must be a string")
            if len(code.encode("utf-8", "surrogatepass")) > lim.max_code_bytes:
                return self._record(error_result("InvalidRequest", f"code is larger than the profile's "
                                                                   f"{lim.max_code_bytes}-byte limit"),
                                    code, 0.0, "too-large")
            self.written = replies.Written()
            self.watch.at_call_boundary()  # the head must be able to fork its next, the next to say ready
            chain.ensure_next()
            self.watch.at_call_boundary()  # the next must be able to take the request
            self.channel.last_next_exit = None
            start = time.monotonic()
            try:
                chain.send_next(request or {"t": "execute", "code": code}, start + limit, blob)
            except SessionNotReading as e:
                return self._record(error_result("SessionNotReading", str(e)), code, start, "not-reading")
            nxt = chain.next
            self.watch.serving = frozenset({nxt.pid})  # the CPU share stops the session's others, not this one
            cap = self.result_cap()
            try:
                try:
                    _pid, msg, blob = cancellation.wait(("result",), nxt, start + limit - grace(limit), cap=cap)
                except TimeoutError:
                    msg, blob = self._last_words(nxt, start + limit, cap)  # TimedOut (with what it said) at the limit
                result = self._validate_result(msg)
            except CallCancelled:
                chain.discard_next()
                if cancellation.aborted is not None:  # the watchdog killed it (a session-wide bound)
                    kind, why = cancellation.aborted
                    return self._record(error_result(kind, why), code, start, "memory")
                return self._record(error_result("Cancelled", "the call was cancelled and its process killed; "
                                                              "the session is unchanged"), code, start, "cancelled")
            except TimeoutError as e:
                if getattr(e, "partial", None) is None:
                    log_silent_timeout(self.id, chain)  # before the kill: what each process was doing
                chain.discard_next()
                return self._record(self._timeout_result(limit, getattr(e, "partial", None)),
                                    code, start, "timeout")
            except SessionDead:
                reason = self._died_reason()
                chain.discard_next()
                return self._record(error_result("ChildDied", f"{reason}; the session is unchanged"),
                                    code, start, "died")
            except protocol.ProtocolError as e:
                chain.discard_next()
                return self._record(error_result("ProtocolError", f"the child sent an invalid reply "
                                                                  f"({sanitize.text(str(e), 300, keep='')}) and was "
                                                                  "killed; the session is unchanged"),
                                    code, start, "protocol")
            except Exception as e:  # noqa: BLE001 - MemoryError, a launcher bug: the cleanup still runs
                log.exception("session %s: reading the reply failed", self.id)
                chain.discard_next()
                return self._record(error_result("LauncherError", f"the launcher could not handle the reply "
                                                                  f"({type(e).__name__}); the child was killed and "
                                                                  "the session is unchanged"),
                                    code, start, "launcher-error")
            if not result["ok"]:
                chain.discard_next()
                return self._record(result, code, start, "error")
            over = self.watch.memory is not None and self.watch.over_after_call(chain)
            if over:  # the state it would leave is over session_memory_mb (no kernel bound here)
                chain.discard_next()
                return self._record(error_result("SessionMemoryLimit", over), code, start, "memory")
            # success: the launcher's history gains the call (the head's: lost with it should the
            # promotion fail), and nxt becomes the head after the reply has gone (decision 0028)
            result["call"] = chain.history.record(*rec)
            if (request or {}).get("t", "execute") == "execute":  # the files it wrote, for the tool to deliver
                self.written = replies.written(msg, blob, max_files=SCRATCH_MAX_FILES,
                                               max_bytes=lim.max_export_bytes)
            self.lock.defer(lambda: self._promote(nxt))
            return self._record(result, code, start, "ok")

    def _promote(self, nxt: Proc) -> None:
        """After a successful call's reply, before anything else touches the session (the lock runs
        it, launcher/session/lock.py): ``nxt`` becomes the head (the old head is retired, strays
        swept), then the new head's next is taken if it says ready within ``PREFETCH_S``. A next that
        did not take its promotion costs the head (``Chain.promote``): the following call says so."""
        if self.chain.promote(nxt):
            self.chain.prefetch_next(PREFETCH_S)

    def result_cap(self) -> int:
        """The largest result message taken: the reply (``max_result_bytes``) and the files the call
        wrote in its blob (at most ``max_export_bytes``, the scratch directory's cap)."""
        return self.limits.max_result_bytes + self.limits.max_export_bytes

    # ------------------------------------------------------------ timeouts that say where
    def _last_words(self, nxt: Proc, hard: float, cap: int | None = None) -> tuple[dict, bytes]:
        """Near the limit: SIGUSR2 the child (its runner's handler answers with a ``partial``: the
        line it is on and the output so far), then wait until the hard limit for its real result.
        Returns the result (and its blob) if it comes in time; otherwise raises TimedOut carrying the partial
        reply (or None). Nothing depends on the child answering: user code may replace the
        handler (no answer), die of the signal (a timeout all the same) or lie (it is shown as
        the child's report); the caller SIGKILLs it either way."""
        nxt.kill(signal.SIGUSR2)
        got = None
        try:
            while True:
                _pid, msg, blob = self.cancellation.wait(("result", "partial"), nxt, hard, cap=cap)
                if msg["t"] == "result":
                    return msg, blob
                if got is None:
                    got = replies.partial(msg, max_output_bytes=self.limits.max_output_bytes)
        except (TimeoutError, SessionDead):
            raise TimedOut(got) from None

    def _timeout_result(self, limit: float, partial: dict | None) -> dict:
        """The launcher's own timeout error; with ``reported`` set, the fields copied from ``partial``
        (already typed by ``validate.partial``) are the session's report, which the renderers show
        below the launcher's first line, labelled, never in it (launcher/tools/text.py)."""
        r = error_result("ExecutionTimeout", f"execution exceeded the {limit:g}s wall-clock limit and was killed; "
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

    def _died_reason(self) -> str:
        # the head reaps the dead next and reports its exit status; wait briefly for that
        deadline = time.monotonic() + 0.5
        while self.channel.last_next_exit is None and time.monotonic() < deadline:
            self.channel.pump(min(deadline, time.monotonic() + 0.05))
        ne = self.channel.last_next_exit  # sent by the head: untrusted, shown only as a checked name or number
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

    def _validate_result(self, msg: dict) -> dict:
        """The reply rebuilt with strict types, safe text and the profile's caps (launcher/replies/validate.py)."""
        lim = self.limits
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
        log_call(self.id, code, outcome, dur, layer)
        return result

    # ------------------------------------------------------------ disposable ops
    def ask(self, request: dict, reply: str, timeout: float | None = None, cap: int | None = None,
            blob: bytes = b""):
        """Serve a read-only request (plus raw ``blob`` bytes) from a disposable process: the next's spare
        (the next stays) or the next itself (then discarded); its reply may be up to ``cap`` bytes (default: the profile's ``max_result_bytes``)."""
        try:
            return self._ask_served(request, reply, timeout, cap, blob)
        finally:
            self.watch.at_call_boundary()  # nothing the CPU watchdog stopped is left stopped after a call

    def _ask_served(self, request: dict, reply: str, timeout: float | None, cap: int | None, blob: bytes):
        """The next's spare (a child) says ``serving`` (echoing this request's random ``rid``: it read
        this very request), replies and exits; the reply is taken from that child only (its first of the
        expected type; it is SIGKILLed and sweeps run before any other request), and the next stays
        the next. A next without a spare serves the op itself and is discarded, as every ask did
        before. Any failure discards the next and sweeps (the child with it), as for a transaction."""
        chain = self.chain
        with self.lock:
            self.watch.at_call_boundary()  # the head must be able to fork its next, the next to say ready
            chain.ensure_next()
            self.watch.at_call_boundary()
            nxt = chain.next
            timeout = timeout or max(self.limits.timeout_s, 10.0)
            deadline = time.monotonic() + timeout
            rid = os.urandom(8).hex()
            chain.send_next({**request, "rid": rid}, deadline, blob)
            # it hands the request to its spare or serves it itself
            self.watch.serving = frozenset({nxt.pid} | ({chain.spare.pid} if chain.spare is not None else set()))
            server: Proc | None = None
            try:
                server = self._server(nxt, rid, deadline)
                self.watch.serving = frozenset({server.pid})
                _pid, msg, blob = self.cancellation.wait((reply,), nxt, deadline, sender=server, cap=cap)
                msg.pop("rid", None)
            except CallCancelled:
                self._drop_server(server)
                if self.cancellation.aborted is not None:
                    raise SessionError(f"{request['t']}: {self.cancellation.aborted[1]}") from None
                raise SessionError(f"{request['t']} was cancelled; the session is unchanged") from None
            except TimeoutError:
                self._drop_server(server)
                raise SessionError(f"{request['t']} did not finish within {timeout:g}s") from None
            except SessionDead:
                reason = self._died_reason()
                self._drop_server(server)
                raise SessionError(f"{request['t']} failed: {reason}") from None
            except protocol.ProtocolError as e:
                self._drop_server(server)
                raise SessionError(f"{request['t']}: invalid reply from the child "
                                   f"({sanitize.text(str(e), 300, keep='')}); the session is unchanged") from None
            except Exception as e:  # noqa: BLE001 - MemoryError, a launcher bug: the cleanup still runs
                log.exception("session %s: reading the %s reply failed", self.id, request["t"])
                self._drop_server(server)
                raise SessionError(f"{request['t']}: the launcher could not handle the reply "
                                   f"({type(e).__name__}); the session is unchanged") from None
            if server.pid == nxt.pid:  # it served the op itself: it may have changed, it exits
                chain.discard_next()
            else:
                chain.keep_next_after(server)
            return msg, blob

    def _server(self, nxt: Proc, rid: str, deadline: float) -> Proc:
        """The process that serves this read-only request: the first to say ``serving`` with its
        ``rid`` among the next and its children (SessionDead when it is gone before it is held)."""
        def accept(pid):
            try:
                return pid == nxt.pid or ppid_of(pid) == nxt.pid
            except OSError:
                return False
        while True:
            pid, msg, _ = self.cancellation.wait(("serving",), nxt, deadline, accept=accept)
            if msg.get("rid") == rid:
                break
            self.channel.ignored_messages += 1
        if pid == nxt.pid:
            return nxt
        try:
            server = Proc(pid)
        except OSError:
            raise SessionDead(f"process {pid} vanished") from None
        if ppid_of(pid) != nxt.pid:  # the pidfd now pins it: still the next's child, not a reused pid
            server.close()
            raise SessionDead(f"process {pid} vanished")
        return server

    def _drop_server(self, server: Proc | None) -> None:
        """A failed read-only call: the next is SIGKILLed and the child serving it too, then the sweep."""
        if server is not None and server is not self.chain.next:
            self.chain.bury(server, reads_socket=True)
        self.chain.discard_next()

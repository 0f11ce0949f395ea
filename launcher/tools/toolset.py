"""The tools of one client connection, independent of transport (embedded MCP server, daemon, CLI).

A :class:`ToolSet` owns one session (created on first use), checks a call's arguments against
the tool's declared schema (launcher/tools/table.py) and runs its handler, one call at a time.
A session's own failures (exceptions, timeouts, crashes) come back as result dicts, never as
exceptions: the session survives them. ``cancel()``, from any thread, kills the running child
through the session (pidfd); the call returns a "cancelled" error with the session as it was.
A launcher whose jail cannot start (``Launcher.start_error``) still serves: every call returns
the explanation and the fix.
"""
from __future__ import annotations

import collections
import logging
import threading
import time

from jail.wire.errors import LayerError

from launcher.session import Session, SessionDead, SessionError
from launcher.tools import table
from launcher.tools.schema import ArgumentError

log = logging.getLogger("build123d_launcher.tools")


class ToolSet:
    """The tools of one client connection: one session, created on first use."""

    def __init__(self, launcher):
        self.launcher = launcher
        self.session: Session | None = None
        self.lock = threading.Lock()
        self._running: Session | None = None  # the session a call is running on (for cancel)
        self._cl = threading.Lock()            # guards _current/_running/_cancelled (never held long)
        self._current = None                   # call_id of the call running now
        self._cancelled: collections.deque = collections.deque(maxlen=64)  # call_ids cancelled early

    @property
    def output_dir(self):
        return self.launcher.output_dir

    @property
    def profile(self):
        return self.launcher.profile

    # ---------------------------------------------------------- sessions
    def _session(self) -> Session:
        if self.session is None or self.session.closed:
            self.session = self.launcher.new_session()
        return self.session

    def drop_session(self) -> None:
        """Close the current session (caller holds the lock)."""
        if self.session is not None:
            self.launcher.close_session(self.session)
            self.session = None

    def with_session(self, fn):
        """``fn(session)``, its session errors turned into ``{"error": ...}`` (caller holds the lock)."""
        try:
            s = self._session()
            with self._cl:
                self._running = s
            try:
                return fn(s)
            finally:
                with self._cl:
                    self._running = None
        except SessionDead as e:
            self.drop_session()
            return {"error": f"the session was lost ({e}); a new, empty one starts with the next call. "
                             "Snapshots of the old session are gone."}
        except SessionError as e:
            return {"error": str(e)}
        except LayerError as e:
            explain = getattr(self.launcher, "explain_layer_error", None)
            return {"error": explain(e) if explain else
                    f"jail layer '{e.layer}' cannot be applied, so no code runs: {e.reason}"}
        except OSError as e:  # e.g. the launcher ran out of file descriptors
            log.debug("call failed in the launcher", exc_info=True)
            return {"error": f"the launcher could not serve this call: {e.strerror or e}; "
                             "the session is unchanged if it existed"}

    # ---------------------------------------------------------- calls
    def call(self, tool: str, args: dict, call_id=None) -> dict:
        """Run one tool call. ``call_id`` (any hashable, e.g. an object()) lets ``cancel(call_id)``
        target this call only, also before it has started (it then never runs)."""
        t = table.get(tool)
        if t is None:
            return {"error": f"unknown tool {tool!r}; tools: {', '.join(table.NAMES)}"}
        try:
            args = t.check(args)
        except ArgumentError as e:
            return {"error": f"bad arguments for {tool}: {e}"}
        with self.lock:
            with self._cl:
                if call_id is not None and call_id in self._cancelled:
                    return {"error": "the call was cancelled before it started; the session is unchanged"}
                self._current = call_id if call_id is not None else object()
            try:
                return self._call_locked(t, args)
            finally:
                with self._cl:
                    self._current = None

    def _call_locked(self, t, args: dict) -> dict:
        start_error = self.launcher.start_error()  # the jail cannot start: say why and how to fix it
        if start_error:
            return {"error": start_error}
        if not t.needs_session:
            return t.handler(self, None, **args)
        return self.with_session(lambda s: t.handler(self, s, **args))

    def cancel(self, call_id=None) -> None:
        """Cancel call ``call_id`` (default: the call running now), from any thread; returns at once.

        A call that has not started yet never runs. A running one has its child killed as soon as
        it waits on one (Session.cancel, through the pidfd); a phase that cannot be cancelled
        (e.g. a restore) runs to its end. A finished call is not affected.
        """
        with self._cl:
            if call_id is None:
                call_id = self._current
                if call_id is None:
                    return
            self._cancelled.append(call_id)
        threading.Thread(target=self._cancel_loop, args=(call_id,), daemon=True, name="cancel").start()

    def _cancel_loop(self, call_id) -> None:
        while True:
            with self._cl:  # held across Session.cancel: no later call can start and be hit instead
                if self._current is not call_id and self._current != call_id:
                    return
                s = self._running
                if s is not None and s.cancel():
                    return
            time.sleep(0.002)  # the call is between two cancellable waits: try again

    def close(self) -> None:
        with self.lock:
            self.drop_session()


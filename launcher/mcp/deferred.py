"""A backend set up in the background, so the MCP server answers at once.

``build123d-launcher mcp`` must answer ``initialize`` and ``tools/list`` within a
second. Choosing its backend can take longer: connecting to a socket-activated
daemon waits for the daemon's greeting (it starts its zygote first), and an
embedded launcher starts a zygote. :class:`DeferredBackend` runs that set-up in a
thread; ``call`` waits for it, and a set-up that failed (no daemon on a required
socket, a jail that cannot start) is returned by every call as an error, so the
MCP client sees why instead of a closed connection. :meth:`DeferredBackend.warming` says whether a
call would wait now (the set-up, or an embedded launcher's zygote, is not ready), and
:meth:`DeferredBackend.wait_warm` waits for that, so the MCP server can tell the client.

Blocks: nothing (start-up plumbing). ``cancel`` before the backend exists marks
the call so it never runs.
"""
from __future__ import annotations

import collections
import threading
import time


class DeferredBackend:
    def __init__(self, make, *, timeout: float = 300.0):
        self.timeout = timeout
        self._ready = threading.Event()
        self._lock = threading.Lock()
        self._backend = None
        self._error: str | None = None
        self._closed = False
        self._cancelled: collections.deque = collections.deque(maxlen=64)
        threading.Thread(target=self._run, args=(make,), daemon=True, name="backend-setup").start()

    def _run(self, make) -> None:
        try:
            backend = make()
        except SystemExit as e:  # connect_backend(required=True) exits with the message
            self._error = str(e.code) if isinstance(e.code, str) else f"the launcher could not start ({e.code})"
        except Exception as e:  # noqa: BLE001 - reported by every call
            self._error = f"the launcher could not start: {type(e).__name__}: {e}"
        else:
            with self._lock:
                closed = self._closed
                if not closed:
                    self._backend = backend
            if closed:
                _close(backend)
        finally:
            self._ready.set()

    @property
    def backend(self):
        """The backend once set up (None before, or if it failed)."""
        return self._backend

    def wait(self, timeout: float | None = None) -> bool:
        return self._ready.wait(self.timeout if timeout is None else timeout)

    def warming(self) -> bool:
        """True while a call would wait for the jail: the set-up runs (connecting to a daemon that
        starts its zygote, or making the launcher), or the embedded launcher's zygote is starting."""
        if not self._ready.is_set():
            return True
        started = getattr(getattr(self._backend, "launcher", None), "wait_started", None)
        return started is not None and not started(0)

    def wait_warm(self, timeout: float | None = None) -> None:
        """Wait (at most ``timeout``, default :attr:`timeout`) until :meth:`warming` is False."""
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        if not self._ready.wait(max(0.0, deadline - time.monotonic())):
            return
        started = getattr(getattr(self._backend, "launcher", None), "wait_started", None)
        if started is not None:
            started(max(0.0, deadline - time.monotonic()))

    def call(self, tool: str, args: dict, call_id=None) -> dict:
        if not self._ready.wait(self.timeout):
            return {"error": f"the launcher did not start within {self.timeout:.0f} s; see the server's log"}
        if self._error is not None:
            return {"error": self._error}
        with self._lock:
            if call_id is not None and call_id in self._cancelled:
                return {"error": "the call was cancelled before it started; the session is unchanged"}
        return self._backend.call(tool, args, call_id)

    def cancel(self, call_id) -> None:
        with self._lock:
            backend = self._backend
            if backend is None:
                self._cancelled.append(call_id)
                return
        backend.cancel(call_id)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            backend, self._backend = self._backend, None
        if backend is not None:
            _close(backend)


def _close(backend) -> None:
    try:
        backend.close()
    except Exception:  # noqa: BLE001
        pass
    launcher = getattr(backend, "launcher", None)
    if launcher is not None:
        launcher.close()

"""What a session call can raise; every message is meant for the user (it becomes the tool's reply)."""
from __future__ import annotations


class SessionError(RuntimeError):
    """A request the session cannot serve; the message is meant for the user."""


class SessionDead(SessionError):
    """Nothing usable is left of the session (its socket, its init or every process that could serve)."""


class SessionNotReading(SessionError):
    """The session's process did not take a request before the deadline (its socket stayed full)."""


class CallCancelled(SessionError):
    """The running call was cancelled (Session.cancel): its child was killed, the session is as before."""

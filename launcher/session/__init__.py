"""One session seen from the launcher: the zygote client and the transactional fork chain it drives.

``Session`` (``session.py``) is a façade over ``channel.py`` (the socket), ``chain.py`` (the
processes' roles), ``calls.py`` (transactions, ``ask``, timeouts), ``cancel.py``, ``snapshots.py``
and ``reports.py``; ``zygote.py`` starts the zygote and asks it for sessions.
"""
from launcher.session.errors import CallCancelled, SessionDead, SessionError, SessionNotReading
from launcher.session.session import Session

__all__ = ["CallCancelled", "Session", "SessionDead", "SessionError", "SessionNotReading"]

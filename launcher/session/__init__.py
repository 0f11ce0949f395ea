"""One session seen from the launcher: the zygote client and the transactional fork chain it drives."""
from launcher.session.errors import CallCancelled, SessionDead, SessionError, SessionNotReading
from launcher.session.session import Session

__all__ = ["CallCancelled", "Session", "SessionDead", "SessionError", "SessionNotReading"]

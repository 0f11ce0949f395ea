"""The session's successful calls, recorded by the launcher: the only source of the script.

Each call that succeeded (``execute``, and ``import_file`` through ``record=``) adds one
:class:`Entry` to the head's :class:`Line`; a snapshot keeps the head's line at the moment it was
taken; restoring it makes the head's line that one again; a head that is lost (a failed
promotion, a head that died) has an empty one. Lines are immutable, so a snapshot is an O(1) copy
that nothing can change afterwards. A new session (``reset``) starts empty. The code a session
may make the launcher keep is bounded: past :data:`MAX_BYTES` recorded in all, the line keeps
counting calls but no code (``complete`` False: the script says it is not kept).

Blocks: a session rewriting its history (the session's own list in ``jail/cad/history.py`` only
numbers calls for its error reports; nothing here is read back from the jail), failed, timed-out
and cancelled calls in the script (the caller records only after a promotion that took), a
session growing the launcher's memory through its history.
Does not block: what the recorded code does; the script built from it is untrusted code.
"""
from __future__ import annotations

from typing import NamedTuple

MAX_BYTES = 4 * 1024 * 1024   # code and notes recorded per session, in all (the script's cap is 8 MB)


class Entry(NamedTuple):
    call: int            # "call N": 1 for the first successful call of the head's line
    code: str            # the code as the script should show it (for an import: code that reads the file)
    note: str | None     # a launcher note for the call's marker ("import_file: part.step"), or None


class Line(NamedTuple):
    entries: tuple[Entry, ...] = ()
    next_call: int = 1
    complete: bool = True  # False: past MAX_BYTES, the calls are counted but their code is not kept


class History:
    """The head's line and each snapshot's (under the session lock, like the chain)."""

    def __init__(self) -> None:
        self.head = Line()
        self._snapshots: dict[str, Line] = {}
        self._recorded = 0  # bytes ever recorded by this session: what the lines can hold in all

    def next_call(self) -> int:
        """The number the next successful call gets (the jail numbers its ``<execute-N>`` the same way)."""
        return self.head.next_call

    def record(self, code: str, note: str | None = None) -> int:
        """The head ran ``code`` successfully (and was promoted): append it; returns its call number."""
        if not isinstance(code, str) or not (note is None or isinstance(note, str)):
            raise TypeError("history entries are (str, str | None)")
        h = self.head
        n = h.next_call
        self._recorded += len(code) + len(note or "")
        if h.complete and self._recorded <= MAX_BYTES:
            self.head = Line(h.entries + (Entry(n, code, note),), n + 1, True)
        else:
            self.head = Line((), n + 1, False)
        return n

    def save(self, name: str) -> None:
        """A snapshot of the head was taken under ``name``."""
        self._snapshots[name] = self.head

    def restore(self, name: str) -> None:
        """The head was restored from snapshot ``name``."""
        self.head = self._snapshots.get(name, Line())

    def delete(self, name: str) -> None:
        """Snapshot ``name`` is gone (deleted, or its process was found dead)."""
        self._snapshots.pop(name, None)

    def lose_head(self) -> None:
        """The head was killed and its state is gone: until a restore there is nothing to show."""
        self.head = Line()

    def entries(self) -> tuple[Entry, ...]:
        return self.head.entries

    @property
    def complete(self) -> bool:
        return self.head.complete

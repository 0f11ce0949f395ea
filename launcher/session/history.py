"""The session's successful calls, recorded by the launcher: the only source of the script.

Each call that succeeded (``execute``, and ``import_file`` through ``record=``) adds one
:class:`Entry` to the history of the head; a snapshot keeps the head's history at the moment it
was taken; restoring it makes the head's history that one again; a head that is lost (a failed
promotion, a head that died) has none. Histories are tuples of immutable entries, so a snapshot
is an O(1) copy that nothing can change afterwards. A new session (``reset``) starts empty.

Blocks: a session rewriting its history (the session's own list in ``jail/cad/history.py`` only
numbers calls for its error reports; nothing here is read back from the jail), failed, timed-out
and cancelled calls in the script (the caller records only after a promotion that took).
Does not block: what the recorded code does; the script built from it is untrusted code.
"""
from __future__ import annotations

from typing import NamedTuple


class Entry(NamedTuple):
    call: int            # "call N": 1 for the first successful call of the session's current line
    code: str            # the code as the script should show it (for an import: code that reads the file)
    note: str | None     # a launcher note for the call's marker ("import_file: part.step"), or None


class History:
    """The head's entries and each snapshot's (under the session lock, like the chain)."""

    def __init__(self) -> None:
        self.head: tuple[Entry, ...] = ()
        self._snapshots: dict[str, tuple[Entry, ...]] = {}

    def next_call(self) -> int:
        """The number the next successful call gets (the jail numbers its ``<execute-N>`` the same way)."""
        return self.head[-1].call + 1 if self.head else 1

    def record(self, code: str, note: str | None = None) -> int:
        """The head ran ``code`` successfully (and was promoted): append it; returns its call number."""
        if not isinstance(code, str) or not (note is None or isinstance(note, str)):
            raise TypeError("history entries are (str, str | None)")
        n = self.next_call()
        self.head = self.head + (Entry(n, code, note),)
        return n

    def save(self, name: str) -> None:
        """A snapshot of the head was taken under ``name``."""
        self._snapshots[name] = self.head

    def restore(self, name: str) -> None:
        """The head was restored from snapshot ``name``."""
        self.head = self._snapshots.get(name, ())

    def delete(self, name: str) -> None:
        """Snapshot ``name`` is gone (deleted, or its process was found dead)."""
        self._snapshots.pop(name, None)

    def lose_head(self) -> None:
        """The head was killed and its state is gone: until a restore there is nothing to show."""
        self.head = ()

    def entries(self) -> tuple[Entry, ...]:
        return self.head

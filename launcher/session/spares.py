"""The next's spare and the child that serves a read-only call, seen from the launcher (part of ``Chain``).

The next serves read-only ops in its spare (jail/proc/spare.py; forked while idle, announced by a
``spare`` message); without one it serves the op itself and is discarded. The launcher keeps at most
one spare per next, the first announced child of the next (pid pinned by pidfd), counts it as sanctioned in sweeps and
SIGKILLs it whenever the next leaves its role; after a read-only reply it SIGKILLs the server and
sweeps, and the next stays.

Blocks: a spare outliving its next, a server outliving its reply. Does not: check what the spare
says (it is one of the session's processes, as untrusted as the next).
"""
from __future__ import annotations

import logging

from launcher.contain.procs import Proc, ppid_of

log = logging.getLogger("build123d_launcher.session")


class SpareRoles:
    """Mixed into ``Chain`` (which holds ``next``, ``spare``, ``channel`` and ``bury``/``sweep``)."""

    def take_spare(self) -> None:
        """The next's spare: the first sender of a ``spare`` offer that is a child of the next (at most
        one; dead or dying ones too, so that a sweep counts them as dying, not as strays)."""
        if self.next is None:
            return  # offers wait for a next (stale ones fail the parent check below)
        offers, self.channel.spare_offers = self.channel.spare_offers, []
        if self.spare is not None:
            return
        for pid in offers:  # never raises: out of fds, an unknown spare is a stray to the sweep
            p = None
            try:
                if ppid_of(pid) == self.next.pid:
                    p = Proc(pid)
                    if ppid_of(pid) == self.next.pid:  # the pidfd pins it: not a reused pid
                        self.spare, p = p, None
                        return
            except OSError:
                pass
            finally:
                if p is not None:
                    p.close()

    def bury_spare(self) -> None:
        """The next leaves its role (or a read-only call used its spare): SIGKILL the spare."""
        self.take_spare()
        self.bury(self.spare, reads_socket=True)
        self.spare = None

    def keep_next_after(self, server: Proc) -> None:
        """A read-only call succeeded: SIGKILL the next's child that served it (it replied; it may
        linger, or have forked) and sweep; the next, untouched, serves the following call."""
        self.take_spare()
        if self.spare is not None and self.spare.pid == server.pid:
            self.spare.close()
            self.spare = None
        self.bury(server, reads_socket=True)
        try:
            self.sweep()
        except OSError as e:  # out of fds: the next may have company the sweep did not see; let it go
            log.warning("session %s: the sweep after a read-only call failed (%s); it runs before the next call",
                        self.id, e)
            self.bury_spare()
            self.bury(self.next)
            self.next = None
            self._sweep_pending = True


"""The host-side traps of the audit, set once for a whole run: a cell is judged by them.

Leaks (:mod:`.planted`): random tokens that must not appear anywhere in a reply. Network
(:mod:`.network`): host listeners that must see no connection or datagram. Files: the temporary
``$HOME``, the output directory and marker-named entries must not change. Signals
(:mod:`.watchers`): a recorder process with the jail's uid must receive no signal, not be stopped,
traced or killed. Responsiveness: the launcher's stall timer. Everything is removed on close.
"""
from __future__ import annotations

import os
from pathlib import Path

from launcher.selftest.audit.network import UNIX_SOCKET_NAME, Listeners
from launcher.selftest.audit.planted import PlantedSecrets, marked_dirs, remove_marked, token
from launcher.selftest.audit.watchers import SignalRecorder, StallTimer

#: What ``$HOME`` holds after set-up; anything else there after a payload is removed.
HOME_ENTRIES = {"secret.txt", ".ssh", ".bashrc", "secret.npy", "secret.svg", "secret.step", "secret.brep",
                "secret.stl", UNIX_SOCKET_NAME, "cad-inputs"}


class Canaries:
    """The traps, as a context manager; ``events`` collects what fired (network, signals)."""

    def __init__(self, jail_uid=None):
        self.mark = "b123d-audit-" + token(4)
        self.events: list[str] = []
        self.secrets = PlantedSecrets(self.mark)
        self.listeners: Listeners | None = None
        self.recorder = SignalRecorder(jail_uid, self.events)
        self.timer = StallTimer()

    def __enter__(self):
        try:
            self.secrets.plant()
            self.listeners = Listeners(self.secrets.home, self.mark, self.events)
            self.listeners.open()
            self.recorder.start()
            self.timer.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        self.timer.stop()
        self.recorder.stop()
        if self.listeners is not None:
            self.listeners.close()
        self.secrets.close()
        for d in marked_dirs():
            remove_marked(Path(d), self.mark)

    # -- shortcuts to what a cell reads
    @property
    def tokens(self) -> dict[str, str]:
        return self.secrets.tokens

    @property
    def home(self) -> Path:
        return self.secrets.home

    @property
    def outdir(self) -> Path:
        return self.secrets.outdir

    @property
    def indir(self) -> Path:
        return self.secrets.indir

    def fs_snapshot(self) -> dict:
        return self.secrets.fs_snapshot()

    def leak_markers(self) -> dict[str, str]:
        return self.secrets.leak_markers()

    def restore(self) -> None:
        """After an escape: undo what the payload did so the next one starts clean."""
        self.secrets.restore(HOME_ENTRIES)

    def values(self, extra: dict | None = None) -> dict[str, str]:
        """The placeholder values substituted into payloads (see ``payloads.PLACEHOLDERS``)."""
        s, n = self.secrets, self.listeners
        h = s.home
        v = {
            "SECRET": str(h / "secret.txt"), "SECRET_DIR": str(h), "SSH_KEY": str(h / ".ssh" / "id_rsa"),
            "BASHRC": str(h / ".bashrc"),
            "SECRET_NPY": str(h / "secret.npy"), "SECRET_STL": str(h / "secret.stl"),
            "SECRET_STEP": str(h / "secret.step"), "SECRET_BREP": str(h / "secret.brep"),
            "SECRET_SVG": str(h / "secret.svg"), "SECRET_NUM": s.secret_num,
            "TMP_SECRET": str(s.tmp_secret), "SHM_SECRET": str(s.shm_secret),
            "SYSV_KEY": str(s.sysv_key or 0),
            "TCP_PORT": str(n.tcp_port), "TCP6_PORT": str(n.tcp6_port), "UDP_PORT": str(n.udp_port),
            "UNIX_PATH": n.unix_path, "ABSTRACT_NAME": n.abstract_name,
            "SIGPID": str(self.recorder.pid), "LAUNCHER_PID": str(os.getpid()),
            "OUTDIR": str(s.outdir), "MARK": self.mark, "HOST_CWD": os.getcwd(),
            "INDIR": str(s.indir), "INDIR_SECRET": str(s.indir / "customer-part.txt"),
            "INDIR_STEP": str(s.indir / "part.step"),
            "FORGED": s.tokens["forged"], "FORGED_REVERSED": s.tokens["forged"][::-1],
        }
        v.update(extra or {})
        return v

"""One zygote per test process, shared by the module-scoped ``launcher`` fixtures.

A zygote start costs ~3.4 CPU-seconds (``import build123d``); the module fixtures used to start
one each, some 60 per ``make test`` (about 100 s of its wall time on two workers). A zygote holds
no state of its sessions: each ``spawn`` carries its profile, so launchers on different profiles
with the same userns mode and jail uid can share one (``Launcher(zygote=...)`` checks that).

Tests that kill, count or trace the zygote's own processes start their own ``Launcher`` without
one. A shared zygote found dead is replaced; :func:`close_all` stops them when the run ends.
"""
from __future__ import annotations

import threading

_lock = threading.Lock()
_zygotes: dict = {}


def shared(profile) -> object:
    """A live zygote for ``profile`` (a name, a path or a loaded Profile), started on first use."""
    from launcher.profile import load_profile
    from launcher.session.zygote import Zygote
    prof = profile if hasattr(profile, "mode") else load_profile(str(profile))
    key = prof.mode("userns")
    with _lock:
        z = _zygotes.get(key)
        if z is None or not z.alive():
            if z is not None:
                z.close()
            z = _zygotes[key] = Zygote(userns=key)
        return z


def close_all() -> None:
    with _lock:
        zs = list(_zygotes.values())
        _zygotes.clear()
    for z in zs:
        z.close()


def on_shared_zygote(profile, **kw):
    """``Launcher(profile, **kw)`` on the process' shared zygote for ``profile``'s userns mode."""
    from launcher.core import Launcher
    return Launcher(profile, zygote=shared(profile), **kw)

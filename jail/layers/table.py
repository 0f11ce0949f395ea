"""The orchestrator: applies the "session, once" OS layers in the order of docs/ARCHITECTURE.md.

Runs in the session init (pid 1 of the session's namespaces) before any user
code exists; every head, next and snapshot inherits the result through fork.
Layers are never re-applied (seccomp filters and Landlock domains stack).

Fail closed: a layer the profile marks ``required`` that cannot be applied
raises :class:`LayerError` and the session never starts. A ``best-effort``
layer that fails is recorded as skipped (with the reason) for ``doctor``.
"""
from __future__ import annotations

import functools
import os

from jail.wire.errors import LayerError


def _run(profile, evidence: dict, on_layer, layer: str, fn, *args, **kw) -> None:
    mode = profile.mode(layer)
    if mode == "off":
        evidence[layer] = {"status": "off"}
        return
    if on_layer is not None:
        on_layer(layer)
    try:
        ev = fn(*args, **kw)
    except LayerError as e:
        if mode == "required":
            raise
        evidence[layer] = {"status": "skipped", "reason": e.reason}
        return
    except Exception as e:  # a bug in a layer must not open the jail
        if mode == "required":
            raise LayerError(layer, f"{type(e).__name__}: {e}") from None
        evidence[layer] = {"status": "skipped", "reason": f"{type(e).__name__}: {e}"}
        return
    evidence[layer] = {"status": "applied", **(ev or {})}


def apply_session_layers(profile, evidence: dict, on_layer=None) -> dict:
    """Layers 3–6 (2 was applied by the caller's unshare). Mutates and returns ``evidence``.

    ``on_layer(name)`` is called before each layer, so that if a layer kills the
    process the launcher can still say which one it was.
    """
    from jail.layers import landlock
    from jail.layers import mountview
    from jail.layers import namespaces
    from jail.layers import privileges
    from jail.layers import rlimits
    from jail.layers import seccomp as seccomp_filter

    run = functools.partial(_run, profile, evidence, on_layer)
    own_mount_ns = evidence.get("namespaces", {}).get("status") == "applied"
    if profile.on("namespaces") and own_mount_ns:
        evidence["namespaces"].update(namespaces.finish_in_init())
    lim = profile.limits
    run("rlimits", rlimits.apply_rlimits,
        memory_mb=lim.memory_mb, nproc=lim.nproc, nofile=lim.nofile, cpu_s=lim.cpu_s)
    if own_mount_ns:
        run("mountview", mountview.apply_mount_view, list(profile.read_paths), list(profile.devices),
            mount_proc=True)
    else:  # no mount namespace of our own: never mount on the host
        run("mountview", _raise, "mountview", "no private mount namespace (namespaces layer off)")
    read_paths = list(profile.read_paths)
    if evidence.get("mountview", {}).get("status") == "applied":
        # the view's /proc is the session's own procfs (only its processes); the host's is never granted
        read_paths.append("/proc")
    run("landlock", landlock.apply_landlock, read_paths, list(profile.devices),
        min_abi=profile.require_landlock_abi)
    run("privileges", privileges.drop_privileges)
    run("seccomp", seccomp_filter.apply_seccomp, list(profile.seccomp_allow), list(profile.seccomp_kill),
        list(profile.seccomp_enosys), default_action=profile.seccomp_default)
    try:
        os.chdir("/")
    except OSError:
        pass
    return evidence


def _raise(layer, reason):
    raise LayerError(layer, reason)

"""Every jail layer, in the order it is applied, and the one helper that applies a stage of them.

Each process of the fork chain applies its stage from :data:`TABLE`: the zygote ``zygote``
(``python -m jail.proc.zygote``), each session's keeper ``keeper``, the session init (pid 1 of
the session's namespaces, before any user code exists) ``init``; head, next and snapshots
inherit the result through fork. The Python layers (``call``) are applied by jail/cad for each
call. Layers are never re-applied (seccomp filters and Landlock domains stack).

Fail closed: a layer the profile marks ``required`` that cannot be applied raises
:class:`LayerError` (a bug in a layer counts as a failure) and no user code runs. A
``best-effort`` layer that fails is recorded as skipped, with the reason, for ``doctor``.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

from jail.layers import landlock, mountview, namespaces, privileges, rlimits, seccomp, userns
from jail.wire.errors import LayerError
from jail.wire.profile import LAYERS as PROFILE_LAYERS, Profile

STAGES = ("zygote", "keeper", "init", "call")


@dataclass
class Context:
    """What a stage's layers read: the evidence so far (updated in place) and the profile
    (None in the zygote, which has none: its jail uid comes from the command line)."""
    evidence: dict
    profile: Profile | None = None
    jail_uid: str | None = None


def _userns(ctx: Context) -> dict:
    return userns.enter_user_namespace(ctx.jail_uid)


def _namespaces(ctx: Context) -> None:
    namespaces.unshare_session()


def _namespaces_in_init(ctx: Context) -> dict:
    return namespaces.finish_in_init()


def _rlimits(ctx: Context) -> dict:
    lim = ctx.profile.limits
    return rlimits.apply_rlimits(memory_mb=lim.memory_mb, nproc=lim.nproc, nofile=lim.nofile, cpu_s=lim.cpu_s)


def _own_mount_ns(ctx: Context) -> bool:
    return ctx.evidence.get("namespaces", {}).get("status") == "applied"


def _mountview(ctx: Context) -> dict:
    if not _own_mount_ns(ctx):  # never mount on the host
        raise LayerError("mountview", "no private mount namespace (namespaces layer off)")
    return mountview.apply_mount_view(list(ctx.profile.read_paths), list(ctx.profile.devices), mount_proc=True)


def _landlock(ctx: Context) -> dict:
    read_paths = list(ctx.profile.read_paths)
    if ctx.evidence.get("mountview", {}).get("status") == "applied":
        # the view's /proc is the session's own procfs (only its processes); the host's is never granted
        read_paths.append("/proc")
    return landlock.apply_landlock(read_paths, list(ctx.profile.devices), min_abi=ctx.profile.require_landlock_abi)


def _privileges(ctx: Context) -> dict:
    return privileges.drop_privileges()


def _seccomp(ctx: Context) -> dict:
    p = ctx.profile
    return seccomp.apply_seccomp(list(p.seccomp_allow), list(p.seccomp_kill), list(p.seccomp_enosys),
                                 default_action=p.seccomp_default)


@dataclass(frozen=True)
class Layer:
    number: str                  # as in docs/ARCHITECTURE.md and SECURITY.md
    name: str                    # the profile's [layers] key
    stage: str                   # the process that applies it (STAGES)
    apply: Callable[[Context], dict | None] | None   # None: applied by jail/cad, per call
    blocks: str
    then: tuple[str, Callable[[Context], dict]] | None = None   # a second step, once applied, in a later stage


TABLE: tuple[Layer, ...] = (
    Layer("1", "userns", "zygote", _userns, "host capabilities: the jail is one unprivileged host uid"),
    Layer("2", "namespaces", "keeper", _namespaces, "other processes, the network, host IPC, hostname, "
          "mounts and cgroup path; a per-session RLIMIT_NPROC", then=("init", _namespaces_in_init)),
    Layer("3", "rlimits", "init", _rlimits, "memory, processes, files, CPU per call, priority; every file write"),
    Layer("4a", "mountview", "init", _mountview, "every path not listed (no existence oracle), every write"),
    Layer("4b", "landlock", "init", _landlock, "opening anything outside the read paths, exec, TCP (ABI 4)"),
    Layer("5", "privileges", "init", _privileges, "every capability, securebits, setuid gains (no_new_privs)"),
    Layer("6", "seccomp", "init", _seccomp, "every syscall outside the profile's groups (jail/layers/syscalls.py)"),
    Layer("7", "ast_policy", "call", None, "imports and calls outside the policy (jail/cad/policy.py, per call)"),
    Layer("8", "builtins", "call", None, "dangerous builtins (jail/cad/safe_builtins.py, the session namespace)"),
)
if tuple(layer.name for layer in TABLE) != PROFILE_LAYERS:  # one order: the profile's [layers] keys
    raise ImportError("jail/layers/table.py and jail/wire/profile.py LAYERS disagree")


def _apply(layer: Layer, mode: str, ctx: Context, on_layer) -> None:
    evidence = ctx.evidence
    if mode == "off":
        evidence[layer.name] = {"status": "off"}
        return
    if on_layer is not None:
        on_layer(layer.name)
    try:
        ev = layer.apply(ctx)
    except LayerError as e:
        if mode == "required":
            raise
        evidence[layer.name] = {"status": "skipped", "reason": e.reason}
        return
    except Exception as e:  # a bug in a layer must not open the jail
        if mode == "required":
            raise LayerError(layer.name, f"{type(e).__name__}: {e}") from None
        evidence[layer.name] = {"status": "skipped", "reason": f"{type(e).__name__}: {e}"}
        return
    evidence[layer.name] = {"status": "applied", **(ev or {})}


def apply_stage(stage: str, modes: Mapping[str, str], ctx: Context, on_layer=None) -> dict:
    """Apply the layers of ``stage`` in table order, each with its mode (``required`` /
    ``best-effort`` / ``off``) from ``modes``. Mutates and returns ``ctx.evidence``.

    ``on_layer(name)`` is called before each layer, so that if a layer kills the process the
    launcher can still say which one it was. A second step (``then``) of a layer applied in an
    earlier stage runs first, and fails closed whatever the mode.
    """
    if stage not in STAGES[:3]:
        raise ValueError(f"no process applies stage {stage!r}")
    for layer in TABLE:
        if layer.then and layer.then[0] == stage and ctx.evidence.get(layer.name, {}).get("status") == "applied":
            ctx.evidence[layer.name].update(layer.then[1](ctx))
        if layer.stage == stage:
            _apply(layer, modes[layer.name], ctx, on_layer)
    return ctx.evidence

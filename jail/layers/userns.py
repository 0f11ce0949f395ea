"""Layer 1: the zygote's user namespace.

Blocks: every capability the zygote (and so every session) has in the host's
user namespace. After this the zygote is uid 0 only inside a namespace whose
uid 0 maps to one unprivileged host uid: the launcher's own uid when it runs
unprivileged, ``nobody`` (or ``--jail-uid``) when it runs as root. Files the
jail can reach are then limited by that host uid's permissions too.

Does not block: anything that uid may do on the host; the later layers
(namespaces, filesystem view, seccomp) restrict that. Must run while the
process is single-threaded (the kernel refuses ``CLONE_NEWUSER`` otherwise).
"""
from __future__ import annotations

import errno
import os
import pwd

import prctl

from jail.layers.libc import CLONE_NEWUSER, unshare

from jail.wire.errors import LayerError


def _explain(e: OSError) -> str:
    hints = []
    try:
        if open("/proc/sys/kernel/apparmor_restrict_unprivileged_userns").read().strip() == "1":
            hints.append("Ubuntu restricts unprivileged user namespaces "
                         "(kernel.apparmor_restrict_unprivileged_userns=1): run "
                         "`sudo sysctl kernel.apparmor_restrict_unprivileged_userns=0`, or install an "
                         "AppArmor profile granting `userns` to the venv's python")
    except OSError:
        pass
    try:
        if open("/proc/sys/kernel/unprivileged_userns_clone").read().strip() == "0":
            hints.append("kernel.unprivileged_userns_clone=0: run `sudo sysctl kernel.unprivileged_userns_clone=1`")
    except OSError:
        pass
    try:
        if open("/proc/sys/user/max_user_namespaces").read().strip() == "0":
            hints.append("user.max_user_namespaces=0: run `sudo sysctl user.max_user_namespaces=15000`")
    except OSError:
        pass
    if e.errno == errno.EINVAL:
        hints.append("the process is multi-threaded (a library started a thread before the jail)")
    if e.errno == errno.EPERM and not hints:
        hints.append("refused by a seccomp filter or container runtime around the launcher "
                     "(e.g. a systemd unit with RestrictNamespaces= that omits 'user')")
    return f"unshare(CLONE_NEWUSER) failed: {errno.errorcode.get(e.errno, e.errno)} ({e.strerror})" + (
        "; " + "; ".join(hints) if hints else "")


def resolve_jail_uid(spec: str | int | None) -> tuple[int, int]:
    """Host uid/gid the jail maps to when the launcher is root."""
    if spec is None:
        spec = "nobody"
    try:
        pw = pwd.getpwnam(spec) if isinstance(spec, str) and not spec.isdigit() else pwd.getpwuid(int(spec))
        return pw.pw_uid, pw.pw_gid
    except KeyError:
        if isinstance(spec, str) and not spec.isdigit():
            raise LayerError("userns", f"jail user {spec!r} does not exist") from None
        return int(spec), int(spec)


def write_maps(pid: str | int, inside: int, outside_uid: int, outside_gid: int) -> None:
    with open(f"/proc/{pid}/setgroups", "w") as f:
        f.write("deny")
    with open(f"/proc/{pid}/uid_map", "w") as f:
        f.write(f"{inside} {outside_uid} 1\n")
    with open(f"/proc/{pid}/gid_map", "w") as f:
        f.write(f"{inside} {outside_gid} 1\n")


def enter_user_namespace(jail_uid: str | int | None = None) -> dict:
    """Drop to an unprivileged host uid (if root) and unshare a user namespace.

    Returns evidence: host uid/gid mapped and the uid_map read back.
    """
    if os.getuid() == 0 or os.geteuid() == 0:
        uid, gid = resolve_jail_uid(jail_uid)
        if uid == 0:
            raise LayerError("userns", "refusing to map the jail to host uid 0")
        try:
            os.setgroups([])
            os.setresgid(gid, gid, gid)
            os.setresuid(uid, uid, uid)
            prctl.set_dumpable(True)  # a uid change clears it, and /proc/self/*_map would become root's
        except OSError as e:
            raise LayerError("userns", f"could not drop to uid {uid}: {e}") from None
    uid, gid = os.getuid(), os.getgid()
    try:
        unshare(CLONE_NEWUSER)
    except OSError as e:
        raise LayerError("userns", _explain(e)) from None
    try:
        write_maps("self", 0, uid, gid)
    except OSError as e:
        raise LayerError("userns", f"writing uid/gid maps failed: {e}") from None
    return {"host_uid": uid, "host_gid": gid, "uid_map": open("/proc/self/uid_map").read().split()}

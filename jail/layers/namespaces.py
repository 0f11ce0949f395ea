"""Layer 2: the session's namespaces (user, pid, net, ipc, uts, mount, cgroup). Applied by the keeper.

Blocks: seeing or signalling processes outside the session (pid); any network access (a new
network namespace whose loopback is never brought up: even abstract AF_UNIX names and 127.0.0.1
are private and dead); host System V IPC and POSIX queues (ipc); hostname changes leaking out
(uts); mount changes leaking out (mount, used by the read-only view); the host's cgroup path
(cgroup namespace, rooted at the session's own cgroup: the keeper joins it first). A nested user
namespace makes ``RLIMIT_NPROC`` a per-session budget (a fork bomb cannot starve another
session); init then sets ``user.max_user_namespaces`` to 0 inside.

Does not block: anything inside the session; the later layers do that. The caller must fork
after this: the *child* is pid 1 of the new pid namespace (``finish_in_init`` runs there).
"""
from __future__ import annotations

import errno
import os
import socket

from jail.wire.errors import LayerError
from jail.layers.libc import (CLONE_NEWCGROUP, CLONE_NEWIPC, CLONE_NEWNET, CLONE_NEWNS, CLONE_NEWPID,
                   CLONE_NEWUSER, CLONE_NEWUTS, unshare)
from jail.layers.userns import write_maps

FLAGS = CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWNS | CLONE_NEWCGROUP


def unshare_session() -> None:
    uid, gid = os.getuid(), os.getgid()
    try:
        unshare(FLAGS)
    except OSError as e:
        raise LayerError("namespaces", f"unshare(user|pid|net|ipc|uts|mnt|cgroup) failed: "
                         f"{errno.errorcode.get(e.errno, e.errno)} ({e.strerror})") from None
    try:
        write_maps("self", 0, uid, gid)
    except OSError as e:
        raise LayerError("namespaces", f"writing the session's uid/gid maps failed: {e}") from None


def finish_in_init() -> dict:
    """Run as pid 1 of the new namespaces: hostname, no nested user namespaces."""
    if os.getpid() != 1:
        raise LayerError("namespaces", f"session init is pid {os.getpid()}, not 1: pid namespace missing")
    try:
        socket.sethostname("build123d-jail")
    except OSError:
        pass
    try:
        with open("/proc/sys/user/max_user_namespaces", "w") as f:
            f.write("0")
    except OSError:
        pass  # reported by the seccomp layer, which denies unshare/setns anyway
    ifaces = []
    try:  # per-process view of the network namespace (sysfs would show the host's)
        with open("/proc/self/net/dev") as f:
            for line in f.read().splitlines()[2:]:
                name, _, rest = line.partition(":")
                ifaces.append(name.strip())
        with open("/proc/self/net/route") as f:
            routes = max(0, len(f.read().splitlines()) - 1)
    except OSError:
        routes = None

    return {"pid": os.getpid(), "netns": os.readlink("/proc/self/ns/net"),
            "pidns": os.readlink("/proc/self/ns/pid"), "interfaces": ifaces,
            "routes": routes}

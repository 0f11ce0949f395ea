"""The doctor's probe: facts read back inside a jailed ``next`` (a disposable op).

What it does: reads ``/proc/self`` (uid map, capabilities, seccomp mode, namespaces, rlimits,
scheduling class) and tries a few forbidden things (stat of secrets, a socket, a write to ``/``)
so ``doctor`` can show each layer's evidence from the inside.

Blocks nothing: it runs after every layer is applied and only reports.
"""
from __future__ import annotations

import errno
import os
import resource
import socket


def probe_evidence(msg: dict) -> dict:
    """What `doctor` shows: facts read back inside a jailed next."""
    ev: dict = {}
    try:
        with open("/proc/self/status") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("Uid", "Gid", "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb", "NoNewPrivs",
                         "Seccomp", "Seccomp_filters", "NSpid"):
                    ev[k] = v.strip()
    except OSError as e:
        ev["status_error"] = str(e)
    for name in ("uid_map", "gid_map"):
        try:
            ev[name] = open(f"/proc/self/{name}").read().split()
        except OSError as e:
            ev[name] = f"unreadable: {e.strerror}"
    for ns in ("net", "pid", "user", "mnt", "ipc", "uts"):
        try:
            ev[f"ns_{ns}"] = os.readlink(f"/proc/self/ns/{ns}")
        except OSError as e:
            ev[f"ns_{ns}"] = f"unreadable: {e.strerror}"
    try:
        ev["net_dev"] = [l.split(":")[0].strip() for l in open("/proc/self/net/dev").read().splitlines()[2:]]
    except OSError as e:
        ev["net_dev"] = f"unreadable: {e.strerror}"
    ev["rlimits"] = {n: resource.getrlimit(getattr(resource, n)) for n in
                     ("RLIMIT_AS", "RLIMIT_NPROC", "RLIMIT_NOFILE", "RLIMIT_FSIZE", "RLIMIT_CORE", "RLIMIT_CPU",
                      "RLIMIT_NICE", "RLIMIT_RTPRIO")}
    try:  # the scheduling class, read from /proc (field 41 of stat) rather than by a syscall
        with open("/proc/self/stat") as f:
            policy = int(f.read().rsplit(")", 1)[1].split()[38])
        ev["sched"] = {0: "SCHED_OTHER", 1: "SCHED_FIFO", 2: "SCHED_RR", 3: "SCHED_BATCH", 5: "SCHED_IDLE",
                       6: "SCHED_DEADLINE"}.get(policy, str(policy))
    except (OSError, ValueError, IndexError) as e:
        ev["sched"] = f"unreadable: {e}"
    try:
        ev["routes"] = max(0, len(open("/proc/self/net/route").read().splitlines()) - 1)
    except OSError as e:
        ev["routes"] = f"unreadable: {e.strerror}"
    ev["pid"] = os.getpid()
    ev["uid"] = os.getuid()
    probes = {}
    for label, path in (("home", os.path.expanduser("~root")), ("etc_shadow", "/etc/shadow"),
                        ("etc_passwd", "/etc/passwd"), ("tmp", "/tmp")):
        try:
            os.stat(path)
            probes[label] = "visible"
        except OSError as e:
            probes[label] = errno.errorcode.get(e.errno, str(e.errno))
    try:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.close()
        probes["socket_inet"] = "created"
    except OSError as e:
        probes["socket_inet"] = errno.errorcode.get(e.errno, str(e.errno))
    try:
        os.close(os.open("/probe-write", os.O_WRONLY | os.O_CREAT, 0o600))
        probes["write_root"] = "created"
    except OSError as e:
        probes["write_root"] = errno.errorcode.get(e.errno, str(e.errno))
    ev["probes"] = probes
    return ev

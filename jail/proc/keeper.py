"""The two set-up processes of a session, forked from the zygote; neither runs user code.

    keeper   forked from the zygote; joins the session's cgroup (the launcher's ``go``), applies
             the ``keeper`` stage of jail/layers/table.py (the session's namespaces), forks init
             and reports how it ended. Outside the session's pid namespace, never jailed by
             seccomp, holds nothing but the session socket.
    init     pid 1 of the session: applies the ``init`` stage (the OS layers, once), forks the
             first head (jail/proc/chain.py), then only reaps.

Blocks nothing itself: the layers it applies do. Fail closed: a required layer that cannot be
applied is reported as ``jail_error`` and the process exits before any head exists.
"""
from __future__ import annotations

import os
import signal
import socket

import prctl

from jail.layers.table import Context, apply_stage
from jail.proc.chain import exit_description, head_main, send_or_exit, send_quiet
from jail.wire import protocol
from jail.wire.errors import LayerError

SOCK_FD = 3


def _detach_stdio(keep: int) -> None:
    devnull = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    if devnull > 2:
        os.close(devnull)
    if keep != SOCK_FD:
        os.dup2(keep, SOCK_FD)
        os.close(keep)
    os.closerange(SOCK_FD + 1, 65536)


def keeper_main(sock_fd: int, profile) -> None:
    """Entry point in the process the zygote forks for a new session."""
    code = 0
    try:
        prctl.set_pdeathsig(signal.SIGKILL)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        _detach_stdio(sock_fd)
        os.setpgid(0, 0)  # one process group per session: the zygote kills it if the launcher dies
        sock = socket.socket(fileno=SOCK_FD)
        ctx = Context(evidence={"containment": _contain_keeper(sock)}, profile=profile)
        try:
            apply_stage("keeper", profile.layers, ctx)
        except LayerError as e:
            send_or_exit(sock, {"t": "jail_error", "layer": e.layer, "reason": e.reason})
            os._exit(3)
        pid = os.fork()
        if pid == 0:
            init_main(sock, ctx)
            os._exit(0)
        while True:
            try:
                _, status = os.waitpid(pid, 0)
                # tells the launcher how init ended (e.g. killed by a layer while applying it)
                send_quiet(sock, {"t": "init_exit", **exit_description(status)})
                break
            except ChildProcessError:
                break
            except InterruptedError:
                continue
    except BaseException:
        code = 4
    os._exit(code)


def _contain_keeper(sock) -> dict:
    """Before any namespace or jail layer: make every process of the session the OOM killer's
    first choice (``oom_score_adj`` 1000 is inherited and cannot be lowered again without
    CAP_SYS_RESOURCE in the host), then wait until the launcher has put this process in the
    session's cgroup (its ``go``), so that everything forked from here on is inside it and the
    cgroup namespace made next is rooted there."""
    ev: dict = {}
    try:
        with open("/proc/self/oom_score_adj", "w") as f:
            f.write("1000")
        ev["oom_score_adj"] = int(open("/proc/self/oom_score_adj").read())
    except (OSError, ValueError) as e:
        ev["oom_score_adj"] = f"not set: {e}"
    sock.settimeout(60)
    try:
        while True:
            got = protocol.recv_simple(sock, 4096)
            if got is None:
                os._exit(0)
            if got[0].get("t") == "go":
                ev["cgroup"] = bool(got[0].get("cgroup"))
                break
    except OSError:
        os._exit(0)  # the launcher never said go
    sock.settimeout(None)
    return ev


def init_main(sock, ctx: Context) -> None:
    prctl.set_pdeathsig(signal.SIGKILL)
    # orphans (a replaced head's children) must come back to us, not to the host's init:
    # pid 1 of a pid namespace gets them anyway; without one, being a subreaper does it
    prctl.set_child_subreaper(True)
    try:
        apply_stage("init", ctx.profile.layers, ctx,
                    on_layer=lambda name: send_or_exit(sock, {"t": "applying", "layer": name}))
    except LayerError as e:
        send_or_exit(sock, {"t": "jail_error", "layer": e.layer, "reason": e.reason})
        os._exit(3)
    except BaseException as e:
        send_or_exit(sock, {"t": "jail_error", "layer": "internal", "reason": f"{type(e).__name__}: {e}"})
        os._exit(3)
    try:
        os.chdir("/")
    except OSError:
        pass
    send_or_exit(sock, {"t": "init_ok", "evidence": ctx.evidence})
    pid = os.fork()
    if pid == 0:
        try:
            head_main(sock, ctx.profile, None)
        finally:
            os._exit(0)
    # pid 1: reap everything, forever; the launcher ends the session by killing us
    while True:
        try:
            os.wait()
        except ChildProcessError:
            os._exit(0)
        except InterruptedError:
            pass

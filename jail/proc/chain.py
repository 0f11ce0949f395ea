"""The processes of one session, all forked from the zygote (see docs/ARCHITECTURE.md).

    keeper   forked from the zygote; unshares the session's namespaces, forks
             init, waits for it. Outside the session's pid namespace, never
             jailed by seccomp, never runs user code, holds no socket.
    init     pid 1 of the session: applies the OS layers once (jail/apply.py),
             forks the first head, then only reaps. Never runs user code.
    head     holds the session's state (the exec namespace); forks ``next``
             and waits on a pipe; when that pipe reaches EOF (next died, or
             became a snapshot) it forks a new next. Reports the exit status
             of a dead next to the launcher.
    next     a copy of head, already jailed, waiting for one command (having
             first paid its copy-on-write faults, ``runner.warm``). It is the
             only process that reads the session socket. ``execute`` runs the
             user code here: on success the launcher kills the old head and
             tells this process to become the head; on failure it is killed.
    snapshot a former next frozen in ``sigwaitinfo``; SIGUSR1 *from outside the
             session* (``si_pid == 0``) makes it fork a new head (which says
             ``restored`` at once, then forks its next).

Everything these processes send is untrusted by the launcher (a process that
ran user code may have been rewritten by it): they can lie about their own
session's results, but all of them are inside the same jail.
"""
from __future__ import annotations

import gc
import os
import signal
import socket


from jail.proc import ops  # imported here, before any layer is applied (the keeper imports us)


from jail.wire import protocol

SOCK_FD = 3


def _send(sock, obj, blob=b""):
    try:
        protocol.send(sock, obj, blob)
    except OSError:
        os._exit(0)


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


def _send_quiet(sock, obj) -> None:
    try:
        protocol.send(sock, obj)
    except OSError:
        pass


def keeper_main(sock_fd: int, profile) -> None:
    """Entry point in the process the zygote forks for a new session."""
    import prctl
    from jail.wire.errors import LayerError
    from jail.layers import namespaces

    code = 0
    try:
        prctl.set_pdeathsig(signal.SIGKILL)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        _detach_stdio(sock_fd)
        os.setpgid(0, 0)  # one process group per session: the zygote kills it if the launcher dies
        sock = socket.socket(fileno=SOCK_FD)
        evidence: dict = {"containment": _contain_keeper(sock)}
        if profile.on("namespaces"):
            try:
                namespaces.unshare_session()
                evidence["namespaces"] = {"status": "applied"}
            except LayerError as e:
                if profile.required("namespaces"):
                    _send(sock, {"t": "jail_error", "layer": e.layer, "reason": e.reason})
                    os._exit(3)
                evidence["namespaces"] = {"status": "skipped", "reason": e.reason}
        else:
            evidence["namespaces"] = {"status": "off"}
        pid = os.fork()
        if pid == 0:
            init_main(sock, profile, evidence)
            os._exit(0)
        while True:
            try:
                _, status = os.waitpid(pid, 0)
                # tells the launcher how init ended (e.g. killed by a layer while applying it)
                _send_quiet(sock, {"t": "init_exit", **_exit_description(status)})
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


def init_main(sock, profile, evidence) -> None:
    import prctl
    from jail.wire.errors import LayerError
    from jail.layers.table import apply_session_layers

    prctl.set_pdeathsig(signal.SIGKILL)
    # orphans (a replaced head's children) must come back to us, not to the host's init:
    # pid 1 of a pid namespace gets them anyway; without one, being a subreaper does it
    prctl.set_child_subreaper(True)
    try:
        apply_session_layers(profile, evidence,
                             on_layer=lambda name: _send(sock, {"t": "applying", "layer": name}))
    except LayerError as e:
        _send(sock, {"t": "jail_error", "layer": e.layer, "reason": e.reason})
        os._exit(3)
    except BaseException as e:
        _send(sock, {"t": "jail_error", "layer": "internal", "reason": f"{type(e).__name__}: {e}"})
        os._exit(3)
    _send(sock, {"t": "init_ok", "evidence": evidence})
    pid = os.fork()
    if pid == 0:
        try:
            head_main(sock, profile, None)
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


def _exit_description(status: int) -> dict:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        return {"signal": name}
    return {"exit_code": os.waitstatus_to_exitcode(status)}


def head_main(sock, profile, namespace) -> None:
    from jail.cad import runner

    if namespace is None:
        namespace = runner.new_namespace(list(profile.allowed_imports), list(profile.blocked_calls),
                                         python_layers=profile.on("builtins"))
    while True:
        gc.collect()
        gc.freeze()
        r, w = os.pipe()
        try:
            pid = os.fork()
        except OSError as e:
            _send(sock, {"t": "head_error", "reason": f"fork failed: {e}"})
            os.close(r)
            os.close(w)
            import time
            time.sleep(0.5)
            continue
        if pid == 0:
            os.close(r)
            try:
                next_main(sock, profile, namespace, w)
            except BaseException:
                os._exit(0)
            # next_main returns only when this process must become the head (promoted after a
            # successful call, or restored from a snapshot): continue this loop as the head.
            # A loop, not a call: heads chain for the whole session, frames must not pile up.
            continue
        os.close(w)
        became_snapshot = False
        while True:
            try:
                b = os.read(r, 1)
            except InterruptedError:
                continue
            if not b:
                break
            if b == b"S":
                became_snapshot = True
        os.close(r)
        if not became_snapshot:
            # EOF without "S": the next is dead or dying; wait for it (the launcher
            # SIGKILLs a next that keeps running after closing its pipe)
            while True:
                try:
                    _, status = os.waitpid(pid, 0)
                    _send(sock, {"t": "next_exit", "pid_in_ns": pid, **_exit_description(status)})
                    break
                except ChildProcessError:
                    break
                except InterruptedError:
                    continue
        _reap_dead_children()


def _reap_dead_children() -> None:
    """Reap any other dead child (snapshots the launcher deleted): zombies count against RLIMIT_NPROC."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def next_main(sock, profile, namespace, head_pipe_w: int) -> None:
    """Serve one command (looked up in jail/ops.py's OPS). Returns only when this process must
    become the head (promoted after a successful transaction, or restored from a snapshot);
    otherwise exits."""
    from jail.cad import runner

    ctx = ops.OpContext(namespace, profile, send=lambda m: _send_quiet(sock, m))
    # Requests carry the nonce of the next they are for: one left unread in the socket by a
    # next that was killed is skipped here instead of being run a second time.
    nonce = os.urandom(8).hex()
    _send(sock, {"t": "ready", "nonce": nonce})
    try:  # an optimisation only: a failure here (e.g. MemoryError at the RLIMIT_AS edge) must not cost the call
        runner.warm(namespace, **ctx.policy())
    except Exception:  # noqa: BLE001
        pass
    while True:
        got = protocol.recv_simple(sock)
        if got is None:
            os._exit(0)
        msg, _ = got
        if msg.get("to") != nonce:
            continue
        op = ops.OPS.get(msg.get("t"))
        if op is None:
            _send(sock, {"t": "error", "reason": f"unknown op {str(msg.get('t'))[:40]!r}"})
            continue
        if op.kind == ops.DISPOSABLE:
            reply, blob = ops.run_disposable(op, msg, ctx)
            _send(sock, reply, blob)
            os._exit(0)
        if op.kind == ops.TRANSACTION:
            result = op.handler(msg, ctx)
            _send(sock, {"t": op.reply, **result})
            if not result.get("ok"):
                os._exit(0)
            while True:
                got = protocol.recv_simple(sock)
                if got is None:
                    os._exit(0)
                if got[0].get("to") == nonce:
                    break
            if got[0]["t"] != "promote":
                os._exit(0)
            os.close(head_pipe_w)
            return
        if op.kind == ops.SNAPSHOT:
            # block SIGUSR1 *before* saying ok: an immediate restore must not kill us
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
            try:
                os.write(head_pipe_w, b"S")
            except OSError:
                pass
            os.close(head_pipe_w)
            _send(sock, {"t": op.reply})
            snapshot_main(sock, profile, namespace)  # returns in a restored head
            return


def _in_pid_namespace() -> bool:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("NSpid:"):
                    return len(line.split()) > 2
    except OSError:
        pass
    return True  # unknown: be strict


def snapshot_main(sock, profile, namespace) -> None:
    """Wait frozen; on a restore fork a child and *return in it* (it becomes the head)."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1, signal.SIGCHLD})
    # In a pid namespace the launcher is invisible, so its signals carry si_pid == 0 and any
    # other sender is a process of this session. Without one (test profiles with the
    # namespaces layer off) there is nothing to tell them apart by.
    strict = _in_pid_namespace()
    while True:
        info = signal.sigwaitinfo({signal.SIGUSR1, signal.SIGCHLD})
        if info.si_signo == signal.SIGCHLD:
            _reap_dead_children()  # heads restored from us that were replaced since
            continue
        if strict and info.si_pid != 0:  # sent from inside the session: not the launcher
            continue
        try:
            pid = os.fork()
        except OSError:
            continue
        if pid == 0:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR1, signal.SIGCHLD})
            _send(sock, {"t": "restored"})  # the launcher takes the sender (a child of the snapshot) as head
            return

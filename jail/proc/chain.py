"""The state-holding processes of a session: head, next, snapshot (see docs/ARCHITECTURE.md).

    head     holds the session's state (the exec namespace); forks ``next`` and waits on a pipe;
             at EOF (next died, or became a snapshot) it forks a new next, reporting a dead
             next's exit status to the launcher.
    next     a copy of head, already jailed, waiting for one command (after paying its
             copy-on-write faults, ``runner.warm``); the only reader of the session socket. It
             serves the ops of jail/proc/ops.py: a read-only (DISPOSABLE) op in its ``spare``
             (a child forked while idle, jail/proc/spare.py) that replies and exits, and stays
             the next; without a spare it serves the op itself and exits; a transaction itself: after a
             successful ``execute`` the launcher kills the old head and tells this process to
             become the head, otherwise it exits.
    snapshot a former next frozen in ``sigwaitinfo``; SIGUSR1 *from outside the session*
             (``si_pid == 0``) makes it fork a new head (which says ``restored`` at once).

All of them run jailed (jail/proc/keeper.py's init applied the layers before forking the first
head). Everything they send is untrusted by the launcher: a process that ran user code may have
been rewritten by it, so they can lie about their own session's results, but all are in one jail.
"""
from __future__ import annotations

import dataclasses
import gc
import os
import select
import signal
import time

from jail.cad import runner
from jail.proc import ops
from jail.proc import spare as spare_mod
from jail.proc.spare import Spare
from jail.wire import protocol


def send_or_exit(sock, obj, blob=b""):
    """Send to the launcher; a process whose launcher is gone has nothing left to do."""
    try:
        protocol.send(sock, obj, blob)
    except OSError:
        os._exit(0)


def send_quiet(sock, obj) -> None:
    try:
        protocol.send(sock, obj)
    except OSError:
        pass


def exit_description(status: int) -> dict:
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        return {"signal": name}
    return {"exit_code": os.waitstatus_to_exitcode(status)}


def head_main(sock, profile, namespace) -> None:
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
            send_or_exit(sock, {"t": "head_error", "reason": f"fork failed: {e}"})
            os.close(r)
            os.close(w)
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
                    send_or_exit(sock, {"t": "next_exit", "pid_in_ns": pid, **exit_description(status)})
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
    """Serve one command (looked up in jail/proc/ops.py's OPS). Returns only when this process must
    become the head (promoted after a successful transaction, or restored from a snapshot);
    otherwise exits."""
    ctx = ops.OpContext(namespace, profile, send=lambda m: send_quiet(sock, m))
    # Requests carry the nonce of the next they are for: one left unread in the socket by a
    # next that was killed is skipped here instead of being run a second time.
    nonce = os.urandom(8).hex()
    send_or_exit(sock, {"t": "ready", "nonce": nonce})
    try:  # an optimisation only: a failure here (e.g. MemoryError at the RLIMIT_AS edge) must not cost the call
        runner.warm(namespace, **ctx.policy())
    except Exception:  # noqa: BLE001
        pass
    # a request's bytes: a file to import, or an export the launcher's verifier re-reads (max_export_bytes)
    cap = max(64 * 1024 * 1024, profile.limits.max_export_bytes + (1 << 20))
    base = ctx
    spare = Spare(lambda m, b: serve_in_child(sock, m, dataclasses.replace(base, blob=b)), (head_pipe_w,))
    while True:
        if not spare.pid and not select.select([sock], [], [], spare_mod.IDLE_S)[0]:
            # idle: pay the fork of the following read-only op now
            spare.start(lambda: send_quiet(sock, {"t": "spare"}),
                        lambda stop: runner.warm_idle(namespace, stop, cad=False, **base.policy()))
            try:  # the fork shared every page with the spare again: pay the call's copies now, while idle
                runner.warm_idle(namespace, lambda: protocol.waiting(sock), **base.policy())
            except Exception:  # noqa: BLE001 - an optimisation only
                pass
        got = protocol.recv_simple(sock, cap)
        if got is None:
            os._exit(0)
        msg, blob = got
        if msg.get("to") != nonce:
            continue
        ctx = dataclasses.replace(base, blob=blob)
        op = ops.OPS.get(msg.get("t"))
        if op is None:
            send_or_exit(sock, {"t": "error", "reason": f"unknown op {str(msg.get('t'))[:40]!r}"})
            continue
        if op.kind == ops.DISPOSABLE:
            # served by the spare, which replies and exits: still the next; without one, by the next
            if not spare.hand(msg, blob):
                serve_disposable(sock, op, msg, ctx, head_pipe_w)  # exits
            continue
        spare.kill()  # a transaction or a snapshot: the spare holds the state from before it
        if op.kind == ops.TRANSACTION:
            result, blob = op.handler(msg, ctx), b""
            if isinstance(result, tuple):  # (result, blob): execute's files
                result, blob = result
            send_or_exit(sock, {"t": op.reply, **result}, blob)
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
            send_or_exit(sock, {"t": op.reply})
            snapshot_main(sock, profile, namespace)  # returns in a restored head
            return


def serve_in_child(sock, msg, ctx) -> None:
    """In the next's spare: say ``serving``, reply, exit (only a read-only op)."""
    op = ops.OPS.get(msg.get("t"))
    if op is None or op.kind != ops.DISPOSABLE:
        os._exit(0)
    rid = msg.get("rid")
    send_or_exit(sock, {"t": "serving", "rid": rid})
    reply, blob = ops.run_disposable(op, msg, ctx)
    send_or_exit(sock, {**reply, "rid": rid}, blob)
    os._exit(0)


def serve_disposable(sock, op, msg, ctx, head_pipe_w: int) -> None:
    """A read-only op with no spare to take it (the next was not idle long enough to fork one, or
    it is gone): the next serves it itself, says ``serving`` then its reply, and exits, so nothing
    the op did (or user code it reached: a property, a ``__repr__``) survives; the head forks a new
    next. Forking a server here would put a fork on the call's path; the head's fork is off it."""
    rid = msg.get("rid")
    send_or_exit(sock, {"t": "serving", "rid": rid})
    reply, blob = ops.run_disposable(op, msg, ctx)
    send_or_exit(sock, {**reply, "rid": rid}, blob)
    os._exit(0)


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
    _reap_dead_children()  # the spare the next killed before parking (its SIGCHLD may have come unblocked)
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
            send_or_exit(sock, {"t": "restored"})  # the launcher takes the sender (a child of the snapshot) as head
            return

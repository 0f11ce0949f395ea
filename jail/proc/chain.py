"""The state-holding processes of a session: head, next, snapshot (see docs/ARCHITECTURE.md).

    head     holds the session's state (the exec namespace); forks ``next`` and waits on a pipe;
             at EOF (next died, or became a snapshot) it forks a new next, reporting a dead
             next's exit status to the launcher.
    next     a copy of head, already jailed, waiting for one command (after paying its
             copy-on-write faults, ``runner.warm``; idle, also those of the pages the last call
             wrote, jail/proc/cow.py); the only reader of the session socket. It
             serves the ops of jail/proc/ops.py: a read-only (DISPOSABLE) op in its ``spare``
             (a child forked while idle, jail/proc/spare.py) that replies and exits, and stays
             the next; without a spare it serves the op itself and exits; a transaction itself: after a
             successful ``execute`` the launcher kills the old head and tells this process to
             become the head (it writes ``P`` to the head's pipe), otherwise it exits. Idle for
             ``IDLE_EXIT_S``, it leaves with its spare (``C``); the head forks a ``cold`` next,
             which warms nothing before its first request (decision 0026); so it does after a
             next that was killed before any request (``R`` on the pipe: a memory sweep or the
             OOM killer would kill a warm one again).
    snapshot a former next frozen in ``sigwaitinfo``; RESTORE (SIGUSR1) *from outside the session*
             (``si_pid == 0``) makes it say ``restored`` and serve as the head itself, with no
             fork on the restore's path (decision 0024). A head runs no user code, so its state
             stays the snapshot's; when the launcher lets it go (PARK, also from outside: its
             next was promoted, another snapshot was restored, or the head was dropped), or its
             next says it was promoted (``P``: a PARK can be lost), it waits again. What it forked
             meanwhile runs as ordinary nexts and heads.

All of them run jailed (jail/proc/keeper.py's init applied the layers before forking the first
head). Everything they send is untrusted by the launcher: a process that ran user code may have
been rewritten by it, so they can lie about their own session's results, but all are in one jail.
"""
from __future__ import annotations

import dataclasses
import gc
import os
import signal
import time

from jail.cad import runner
from jail.proc import cow, ops
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


RESTORE, PARK = protocol.RESTORE_SIGNAL, protocol.PARK_SIGNAL  # from the launcher only (si_pid == 0)
_PARKED_MASK = {RESTORE, PARK, signal.SIGCHLD}

HEAD, SNAPSHOT = "head", "snapshot"


def head_main(sock, profile, namespace) -> None:
    """Run this process's roles for the rest of its life, in one loop (frames never pile up): the
    head forks a next; in the forked child, the next serves and then becomes the head (promoted)
    or a snapshot (saved); a snapshot waits, and once restored serves as the head itself until
    the launcher lets it go (decision 0024), then waits again."""
    global _SENDER_CHECKED
    if namespace is None:
        namespace = runner.new_namespace(list(profile.allowed_imports), list(profile.blocked_calls),
                                         python_layers=profile.on("builtins"))
    _SENDER_CHECKED = os.getppid() == 1
    role, restored = HEAD, False
    while True:
        if role == SNAPSHOT:
            wait_as_snapshot(sock)
            role, restored = HEAD, True
            continue
        pipe_w, cold = serve_as_head(sock, restored)
        if pipe_w is None:  # a restored snapshot the launcher let go: it waits again
            role = SNAPSHOT
            continue
        restored = False  # in the forked child: an ordinary next
        try:
            role = next_main(sock, profile, namespace, pipe_w, cold=cold)
        except BaseException:
            os._exit(0)


def serve_as_head(sock, restored: bool) -> tuple[int | None, bool]:
    """Fork nexts, one at a time, for as long as this process is the head. Returns in a forked child
    (the next): its end of the pipe to this head, and whether it starts ``cold`` (its predecessor
    left after ``IDLE_EXIT_S`` with no request, or was killed before its first request, decision
    0026: it warms nothing until a request);
    in a ``restored`` snapshot, returns (None, False) once the launcher lets it go (PARK).
    Otherwise never returns.

    A head runs no user code: what it forks is a copy of the state it was promoted or restored with.
    A restored snapshot's child starts serving only after its parent has checked it was not let go
    meanwhile (the launcher sends PARK before it kills that head's next and looks for its children,
    so a next forked after that look is killed here, before it reads the session's socket)."""
    cold = False
    while True:
        gc.collect()
        gc.freeze()
        if restored and _told_to_park():
            return None, False
        r, w = os.pipe()
        go_r, go_w = os.pipe() if restored else (-1, -1)
        try:
            pid = os.fork()
        except OSError as e:
            for fd in (r, w, go_r, go_w):
                if fd >= 0:
                    os.close(fd)
            send_or_exit(sock, {"t": "head_error", "reason": f"fork failed: {e}"})
            time.sleep(0.5)
            continue
        if pid == 0:
            os.close(r)
            if restored:
                os.close(go_w)
                go = _read_byte(go_r)
                os.close(go_r)
                if go != b"g":
                    os._exit(0)
                signal.pthread_sigmask(signal.SIG_UNBLOCK, _PARKED_MASK)
            return w, cold
        os.close(w)
        if restored:
            os.close(go_r)
            if _told_to_park():  # let go while it forked: this next must never serve
                os.close(go_w)  # EOF: it exits before touching the socket
                os.close(r)
                _wait_child(pid)
                return None, False
            try:
                os.write(go_w, b"g")
            except OSError:
                pass
            os.close(go_w)
        became_snapshot = went_cold = promoted = asked = False
        while True:
            try:
                b = os.read(r, 1)
            except InterruptedError:
                continue
            if not b:
                break
            if b == b"S":
                became_snapshot = True
            elif b == b"C":
                went_cold = True
            elif b == b"P":
                promoted = True
            elif b == b"R":
                asked = True
        os.close(r)
        # a restored snapshot's next that was promoted ends its time as the head even when the
        # launcher's PARK was lost (a queue the session filled, decision 0024): it forks no more
        if restored and (_told_to_park() or promoted):
            # its next was promoted (it lives on as the head: not waited for) or killed
            _reap_dead_children()
            return None, False
        cold = went_cold and not became_snapshot
        if cold:
            _wait_child(pid)  # it left on its own, idle: nothing to report
        elif not became_snapshot:
            # EOF without "S": the next is dead or dying; wait for it (the launcher
            # SIGKILLs a next that keeps running after closing its pipe)
            status = _wait_child(pid)
            if status is not None:
                send_or_exit(sock, {"t": "next_exit", "pid_in_ns": pid, **exit_description(status)})
                # killed before any request came: a sweep at the session's memory bound, or the OOM
                # killer, while it warmed. Its heir warms nothing until a request, so a session near
                # its bound does not warm, get swept and fork again every tick (decision 0026)
                cold = os.WIFSIGNALED(status) and not asked
        _reap_dead_children()


def _read_byte(fd: int) -> bytes:
    while True:
        try:
            return os.read(fd, 1)
        except InterruptedError:
            continue


def _wait_child(pid: int) -> int | None:
    while True:
        try:
            return os.waitpid(pid, 0)[1]
        except ChildProcessError:
            return None
        except InterruptedError:
            continue


def _told_to_park() -> bool:
    """Take every pending PARK; True when one came from the launcher (not from the session)."""
    told = False
    while True:
        info = signal.sigtimedwait({PARK}, 0)
        if info is None:
            return told
        told = told or _from_launcher(info)


def _reap_dead_children() -> None:
    """Reap any other dead child (snapshots the launcher deleted): zombies count against RLIMIT_NPROC."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def next_main(sock, profile, namespace, head_pipe_w: int, *, cold: bool = False) -> str:
    """Serve one command (looked up in jail/proc/ops.py's OPS). Returns HEAD when this process must
    become the head (promoted after a successful transaction), SNAPSHOT when it was saved as a
    snapshot (it then waits, ``wait_as_snapshot``); otherwise exits.

    Idle for ``IDLE_EXIT_S`` with no request, it leaves (decision 0026): it kills its spare, tells
    the head ("C") and exits, so a session left alone gives back the pages its warm-ups copied; the
    head forks a ``cold`` next, which warms nothing and forks no spare before its first request."""
    ctx = ops.OpContext(namespace, profile, send=lambda m: send_quiet(sock, m))
    # Requests carry the nonce of the next they are for: one left unread in the socket by a
    # next that was killed is skipped here instead of being run a second time.
    nonce = os.urandom(8).hex()
    send_or_exit(sock, {"t": "ready", "nonce": nonce})
    try:  # an optimisation only: a failure here (e.g. MemoryError at the RLIMIT_AS edge) must not cost the call
        if not cold:
            runner.warm(namespace, **ctx.policy())
    except Exception:  # noqa: BLE001
        pass
    # a request's bytes: a file to import, or an export the launcher's verifier re-reads (max_export_bytes)
    cap = max(64 * 1024 * 1024, profile.limits.max_export_bytes + (1 << 20))
    base = ctx
    spare = Spare(lambda m, b: serve_in_child(sock, m, dataclasses.replace(base, blob=b)), (head_pipe_w,))
    asked = idled = False
    while True:
        if not cold and not spare.pid and not protocol.waiting(sock, spare_mod.IDLE_S):
            idled = True
            # idle: pay the fork of the following read-only op now
            spare.start(lambda: send_quiet(sock, {"t": "spare"}),
                        lambda stop: runner.warm_idle(namespace, stop, cad=False, **base.policy()))
            try:  # the fork shared every page with the spare again: pay the call's copies now, while idle
                runner.warm_idle(namespace, lambda: protocol.waiting(sock), **base.policy())
                cow.populate(lambda: protocol.waiting(sock))  # the pages the last call wrote
            except Exception:  # noqa: BLE001 - an optimisation only
                pass
        if not cold and not protocol.waiting(sock, spare_mod.IDLE_EXIT_S):
            spare.kill()
            try:
                os.write(head_pipe_w, b"C")
            except OSError:
                pass
            os._exit(0)
        got = protocol.recv_simple(sock, cap)
        if got is None:
            os._exit(0)
        msg, blob = got
        if msg.get("to") != nonce:
            continue
        if not asked:  # to the head: killed from now on, this next does not make its heir cold
            asked = True
            try:
                os.write(head_pipe_w, b"R")
            except OSError:
                pass
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
        # a transaction or a snapshot: the spare holds the state from before it, so it serves nothing
        # more. Its exit unmaps its copy of the session (~15 ms of the kernel's CPU, on this core
        # when the other one is busy), so during a transaction it is only held, and let go after
        # the reply (it leaves by itself spare.HOLD_S into a long call; decision 0029)
        if op.kind == ops.TRANSACTION:
            spare.hold()
            result, blob = op.handler(msg, ctx), b""
            if isinstance(result, tuple):  # (result, blob): execute's files
                result, blob = result
            send_or_exit(sock, {"t": op.reply, **result}, blob)
            spare.kill()
            if not result.get("ok"):
                os._exit(0)
            if idled:  # a call after think time: the next one likely comes after some too (back to back: no scan)
                try:  # while the old head lives (retired, killed 50 ms after the reply): what this call wrote
                    cow.remember_written()
                except Exception:  # noqa: BLE001 - an optimisation only
                    pass
            while True:
                got = protocol.recv_simple(sock)
                if got is None:
                    os._exit(0)
                if got[0].get("to") == nonce:
                    break
            if got[0]["t"] != "promote":
                os._exit(0)
            try:  # to a restored snapshot serving as the head: its time as the head is over
                os.write(head_pipe_w, b"P")
            except OSError:
                pass
            os.close(head_pipe_w)
            return HEAD
        spare.kill()
        if op.kind == ops.SNAPSHOT:
            # block RESTORE *before* saying ok: an immediate restore must not kill us
            signal.pthread_sigmask(signal.SIG_BLOCK, _PARKED_MASK)
            try:
                os.write(head_pipe_w, b"S")
            except OSError:
                pass
            os.close(head_pipe_w)
            send_or_exit(sock, {"t": op.reply})
            return SNAPSHOT


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


# Set by head_main in the first head, inherited by every fork: True when the session has a pid
# namespace of its own, where the launcher is invisible and its signals carry si_pid == 0 (any
# other sender is a process of this session). Without one (test profiles with the namespaces
# layer off) there is nothing to tell them apart by. (The first head's parent is the session's
# init: pid 1 exactly when it has a namespace. /proc/self/status cannot tell: the jail's /proc is
# the namespace's own, whose NSpid line shows one level.)
_SENDER_CHECKED = True


def _from_launcher(info) -> bool:
    return not _SENDER_CHECKED or info.si_pid == 0


def wait_as_snapshot(sock) -> None:
    """Wait frozen until the launcher restores this snapshot; say ``restored`` and return (this
    process then serves as the head, ``serve_as_head``). A restore or PARK sent from inside the
    session is ignored (``_from_launcher``)."""
    signal.pthread_sigmask(signal.SIG_BLOCK, _PARKED_MASK)
    _reap_dead_children()  # the spare the next killed before parking, a next killed while it was the head
    while True:
        info = signal.sigwaitinfo(_PARKED_MASK)
        if info.si_signo == signal.SIGCHLD:
            _reap_dead_children()  # nexts forked while it served as the head, replaced since
            continue
        if info.si_signo != RESTORE or not _from_launcher(info):
            continue  # a late PARK (already parked), or a signal from the session's own code
        send_or_exit(sock, {"t": "restored"})  # the launcher takes the sender (this snapshot) as head
        return

"""A session's start-up: init applies the jail's layers, then the first head forks its first next.

Fails closed with the layer's name (``LayerError``): init announces each layer before applying it,
and the keeper reports how init ended if it dies; no user code has run when any of this fails.
Messages are taken only from the keeper or its child (init), by kernel-stamped pid.
"""
from __future__ import annotations

from jail.wire import protocol
from jail.wire.errors import LayerError
from launcher.contain.procs import Proc, ppid_of
from launcher.replies import sanitize
from launcher.replies import validate as replies
from launcher.session.chain import Chain
from launcher.session.errors import SessionDead


def start(chain: Chain, deadline: float) -> None:
    """Wait for init to apply the layers, then for the first ready next (LayerError if either fails)."""
    keeper_pid = chain.keeper.pid
    applying = None
    while True:
        try:
            pid, msg, _ = chain.channel.wait(("init_ok", "jail_error", "applying", "init_exit"), None, deadline,
                                             watch=chain.keeper,
                                             accept=lambda p: p == keeper_pid or ppid_of(p) == keeper_pid)
        except (SessionDead, TimeoutError, protocol.ProtocolError) as e:
            raise LayerError(applying or "namespaces",
                             f"the session could not start ({e or 'timed out'}); no user code ran") from None
        t = msg["t"]
        if t == "applying" and pid != keeper_pid:
            applying = sanitize.log_token(msg.get("layer"), 40)
            continue
        if t == "init_exit" and pid == keeper_pid:
            how = replies.line(msg.get("signal"), 40) or f"exit code {replies.count(msg.get('exit_code'), 255)}"
            raise LayerError(applying or "namespaces",
                             f"the session's init process died ({how}) while this layer was applied or just "
                             f"after; no user code ran")
        if t == "jail_error":
            raise LayerError(sanitize.log_token(msg.get("layer"), 40),
                             replies.line(msg.get("reason"), 2000) or "?")
        if t == "init_ok" and pid != keeper_pid:
            break
    chain.init = Proc(pid)
    chain.evidence = replies.evidence(msg.get("evidence"))
    try:
        chain.await_ready(deadline, parent_of_head=chain.init.pid)
    except (SessionDead, TimeoutError, protocol.ProtocolError) as e:
        raise LayerError(applying or "startup", f"the jailed session started but its first process died "
                                                f"({e or 'timed out'}); likely a syscall the seccomp allowlist "
                                                f"lacks on this host. No user code ran") from None

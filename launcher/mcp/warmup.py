"""The first call after a cold start: wait for the jail visibly instead of silently.

A ``tools/call`` that arrives while the backend is still being set up (a daemon that starts its
zygote before it greets, or the embedded zygote) waits here before it runs: with MCP progress
notifications about every second when the client sent a ``progressToken``, and in every case
with one launcher line added to the reply saying how long it waited (from half a second on).

Blocks: nothing (user-facing plumbing). The wait ends with the set-up, failed or not (the call
then returns the set-up's error), or with the client's cancellation.
"""
from __future__ import annotations

import logging
import time

import anyio

log = logging.getLogger("build123d_launcher.mcp")

MESSAGE = "starting the jail (first call after a cold start)"
INTERVAL_S = 1.0
NOTE_MIN_S = 0.5  # shorter waits (a daemon's handshake) are no warm-up worth a line


def progress_token(ctx):
    """The request's ``_meta.progressToken``, or None."""
    meta = getattr(ctx, "meta", None)
    if not meta:
        return None
    get = meta.get if isinstance(meta, dict) else lambda k: getattr(meta, k, None)
    token = get("progress_token")
    if token is None:
        token = get("progressToken")
    return token if isinstance(token, (str, int)) and not isinstance(token, bool) else None


async def wait_for_jail(ctx, backend) -> float | None:
    """Wait until ``backend`` is warm; the seconds waited, or None when it was warm already."""
    warming = getattr(backend, "warming", None)
    if warming is None or not warming():
        return None
    t0 = time.monotonic()
    token = progress_token(ctx)

    async def report() -> None:
        n = 0
        while True:
            n += 1
            try:
                await ctx.session.send_progress_notification(
                    token, progress=round(time.monotonic() - t0, 1), message=MESSAGE,
                    related_request_id=getattr(ctx, "request_id", None))
            except Exception:  # noqa: BLE001 - a closed stream: the call itself will say so
                log.debug("progress notification failed", exc_info=True)
                return
            await anyio.sleep(INTERVAL_S)

    async with anyio.create_task_group() as tg:
        if token is not None:
            tg.start_soon(report)
        await anyio.to_thread.run_sync(backend.wait_warm, abandon_on_cancel=True)
        tg.cancel_scope.cancel()
    return time.monotonic() - t0


def note(waited: float) -> str:
    return (f"[launcher: this call waited {waited:.1f} s for the jail to start (the first call after a "
            f"cold start); later calls do not]")


def add_note(blocks: list[dict], waited: float | None) -> list[dict]:
    """``blocks`` with :func:`note` as the last line of its last text block (or a block of its own)."""
    if waited is None or waited < NOTE_MIN_S:
        return blocks
    out = list(blocks)
    for i in range(len(out) - 1, -1, -1):
        if out[i].get("type") == "text":
            out[i] = {**out[i], "text": f"{out[i].get('text', '')}\n{note(waited)}"}
            return out
    return out + [{"type": "text", "text": note(waited)}]

"""The jail side of the tools: one entry per request a ``next`` process serves (:data:`OPS`).

``next_main`` (``jail.proc.chain``) receives one request addressed to it and looks its ``t`` up in
:data:`OPS`. Each op declares its kind:

* ``DISPOSABLE``: a read-only op. The handler returns ``(reply, blob)``; the next's spare (a child
  forked while idle, ``jail/proc/spare.py``) serves it and exits, and the next stays warm for the
  following call; without a spare the next serves it and exits. Either way nothing it did (even to
  its own copy of the session state) survives. An exception in
  the handler becomes ``{"t": <reply>, "ok": False, "error": "..."}`` (:func:`run_disposable`).
* ``TRANSACTION``: runs user code or binds names (``execute``, ``import``). The handler returns a
  result dict; the next sends it and, on success, waits for the launcher's ``promote`` (it becomes
  the head) or, on failure, exits. The launcher decides.
* ``SNAPSHOT``: the next freezes as a snapshot (handled by ``next_main``; no handler).

Handlers get ``(msg, ctx)``: ``msg`` is the request (untrusted shape: read fields with defaults),
``ctx`` an :class:`OpContext`. Blocks: nothing by itself; the layers are already applied in this
process. Replies are capped by the launcher (``max_result_bytes``), not trusted by it.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable

# Every handler's module is imported here, at the top: the keeper imports this module (through
# jail.proc.chain) in the zygote's process tree before any layer is applied, and the zygote's
# warm-up has already loaded and exercised all of them, so no jailed next imports anything new.
from jail.cad import (api, error_report, features, fsviews, history, importer, measure, render,  # noqa: F401
                      runner, scratch, serialize, summary, verify)
from jail.proc import probe

DISPOSABLE = "disposable"
TRANSACTION = "transaction"
SNAPSHOT = "snapshot"


@dataclass(frozen=True)
class OpContext:
    namespace: dict
    profile: Any
    send: Callable[[dict], None] | None = None   # send a message to the launcher (partial replies)
    blob: bytes = b""                            # the raw bytes sent after the request (a file's)

    def policy(self) -> dict:
        """The keyword arguments runner.run/warm take from the profile."""
        p = self.profile
        return {"python_layers": p.on("ast_policy"), "allowed_imports": list(p.allowed_imports),
                "blocked_calls": list(p.blocked_calls), "max_output_bytes": p.limits.max_output_bytes}


@dataclass(frozen=True)
class Op:
    kind: str
    reply: str                                   # the reply message's "t"
    handler: Callable[[dict, OpContext], Any] | None = None


def _cap_result(result: dict, cap: int) -> dict:
    """A transaction's result cut down (objects, output) when its JSON is over ``cap`` bytes."""
    if len(json.dumps(result)) <= cap:
        return result
    result["objects"] = result.get("objects", [])[:20]
    result["stdout"] = result.get("stdout", "")[: cap // 4]
    result["stderr"] = result.get("stderr", "")[: cap // 8]
    result["truncated"] = True
    return result


def op_execute(msg: dict, ctx: OpContext) -> tuple[dict, bytes]:
    """execute: run the user's code (``runner.run``) in a fresh scratch directory holding the request's
    ``inputs`` (``[{"name", "size"}]``, their bytes concatenated in ``ctx.blob``). On success the result
    lists the files the code wrote (``"files": [{"name", "size"}]``) and returns their bytes, in that
    order, as the blob; on failure ``files`` is empty and nothing is sent."""
    try:
        inputs = scratch.inputs_from_request(msg.get("inputs"), ctx.blob)
        sc = scratch.begin(ctx.profile.limits.max_export_bytes, inputs)
    except (ValueError, OSError) as e:
        err = error_report.error("InputError", f"the request's input files: {e}", None, [])
        return {"ok": False, "stdout": "", "stderr": "", "truncated": False, "error": err, "objects": [],
                "deleted": [], "value": None, "call": history.next_call_no(), "duration_ms": 0.0, "files": []}, b""
    result = runner.run(str(msg.get("code", "")), ctx.namespace, **ctx.policy(), send_partial=ctx.send)
    files, blob = sc.collect() if result.get("ok") else ([], b"")
    result["files"] = files
    if files:  # the code wrote files (delivered by the launcher): no "nothing was written" note
        result.pop("note", None)
    return _cap_result(result, ctx.profile.limits.max_result_bytes // 2), blob


def op_import(msg: dict, ctx: OpContext) -> dict:
    """import_file: parse the file's bytes (the raw blob the launcher sent) and bind the object (``importer``)."""
    return _cap_result(importer.run_import(msg, ctx.namespace, ctx.blob), ctx.profile.limits.max_result_bytes // 2)


def op_state(msg: dict, ctx: OpContext):
    """session_state: the summaries of the session's names (``summary.summarize``)."""
    try:
        # the same budget as a call's reply: names past it are listed unsummarised
        return {"objects": summary.summarize(ctx.namespace, budget_s=summary.SUMMARY_BUDGET_S)}, b""
    except BaseException as e:  # noqa: BLE001
        return {"objects": [], "error": f"{type(e).__name__}: {e}"}, b""


def op_export(msg: dict, ctx: OpContext):
    """export: the object serialised in memory (``serialize``); the launcher's verifier checks the bytes."""
    data, meta = serialize.serialize(ctx.namespace, str(msg.get("name")), str(msg.get("format")),
                                     max_bytes=ctx.profile.limits.max_export_bytes, check=False)
    return {"ok": True, "size": len(data), **meta}, data


def op_probe(msg: dict, ctx: OpContext):
    """doctor / audit: what this jailed process can see and do (``probe.probe_evidence``)."""
    return {"evidence": probe.probe_evidence(msg)}, b""


OPS: dict[str, Op] = {
    "execute": Op(TRANSACTION, "result", op_execute),
    "import": Op(TRANSACTION, "result", op_import),
    "state": Op(DISPOSABLE, "state", op_state),
    "export": Op(DISPOSABLE, "export", op_export),
    "probe": Op(DISPOSABLE, "probe", op_probe),
    "verify": Op(DISPOSABLE, "verify", verify.op_verify),  # the launcher's verifier session only
    "api": Op(DISPOSABLE, "api", api.op_api),
    "render": Op(DISPOSABLE, "render", render.op_render),
    "measure": Op(DISPOSABLE, "measure", measure.op_measure),
    "distance": Op(DISPOSABLE, "distance", measure.op_distance),
    "validate": Op(DISPOSABLE, "validate", measure.op_validate),
    "features": Op(DISPOSABLE, "features", features.op_features),
    "snapshot": Op(SNAPSHOT, "snapshot_ok"),
}


def run_disposable(op: Op, msg: dict, ctx: OpContext) -> tuple[dict, bytes]:
    """The reply of a disposable op (its exception as an ``ok: False`` reply)."""
    try:
        reply, blob = op.handler(msg, ctx)
    except BaseException as e:  # noqa: BLE001 - user state may raise anything
        return {"t": op.reply, "ok": False, "error": f"{type(e).__name__}: {e}"}, b""
    return {"t": op.reply, **reply}, blob or b""

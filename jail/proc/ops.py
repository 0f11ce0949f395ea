"""The jail side of the tools: one entry per request a ``next`` process serves.

``next_main`` (jail/session_proc.py) receives one request addressed to it and
looks its ``t`` up in :data:`OPS`. Each op declares its kind:

* ``DISPOSABLE``: a read-only op. The handler returns ``(reply, blob)``; the
  next sends it and exits, so nothing it did (even to its own copy of the
  session state) survives. Every op that only looks at the model (state,
  export, probe, and the coming render/measure) is of this kind. An exception in
  the handler becomes ``{"t": <reply>, "ok": False, "error": "..."}``.
* ``TRANSACTION``: runs user code (``execute``). The handler returns a result
  dict; the next sends it, and on success waits for the launcher's ``promote``
  (it becomes the head) or, on failure, exits. The launcher decides.
* ``SNAPSHOT``: the next freezes as a snapshot (handled by ``next_main``).

Handlers get ``(msg, ctx)``: ``msg`` is the request (untrusted shape: read
fields with defaults), ``ctx`` an :class:`OpContext` (the session namespace and
the profile). This module imports nothing from ``launcher``.

Blocks: nothing by itself; the layers are already applied in this process.
Replies are capped by the launcher (``max_result_bytes``), not trusted by it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from jail.proc import probe
from jail.cad import api  # light (inspect, difflib: already loaded by build123d); imported before the layers

DISPOSABLE = "disposable"
TRANSACTION = "transaction"
SNAPSHOT = "snapshot"


@dataclass(frozen=True)
class OpContext:
    namespace: dict
    profile: Any
    send: Callable[[dict], None] | None = None   # send a message to the launcher (partial replies)

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
    import json
    if len(json.dumps(result)) <= cap:
        return result
    result["objects"] = result.get("objects", [])[:20]
    result["stdout"] = result.get("stdout", "")[: cap // 4]
    result["stderr"] = result.get("stderr", "")[: cap // 8]
    result["truncated"] = True
    return result


def op_execute(msg: dict, ctx: OpContext) -> dict:
    from jail.cad import runner
    result = runner.run(str(msg.get("code", "")), ctx.namespace, **ctx.policy(), send_partial=ctx.send)
    return _cap_result(result, ctx.profile.limits.max_result_bytes // 2)


def op_state(msg: dict, ctx: OpContext):
    from jail.cad import summary
    try:
        return {"objects": summary.summarize(ctx.namespace)}, b""
    except BaseException as e:  # noqa: BLE001
        return {"objects": [], "error": f"{type(e).__name__}: {e}"}, b""


def op_export(msg: dict, ctx: OpContext):
    from jail.cad import serialize
    data, meta = serialize.serialize(ctx.namespace, str(msg.get("name")), str(msg.get("format")),
                                     max_bytes=ctx.profile.limits.max_export_bytes)
    return {"ok": True, "size": len(data), **meta}, data


def op_probe(msg: dict, ctx: OpContext):
    return {"evidence": probe.probe_evidence(msg)}, b""


def op_api(msg: dict, ctx: OpContext):
    """api: signature/docstring of a build123d name, or a search (jail/api.py)."""
    return api.op_api(msg, ctx)


OPS: dict[str, Op] = {
    "execute": Op(TRANSACTION, "result", op_execute),
    "state": Op(DISPOSABLE, "state", op_state),
    "export": Op(DISPOSABLE, "export", op_export),
    "probe": Op(DISPOSABLE, "probe", op_probe),
    "api": Op(DISPOSABLE, "api", op_api),
    "snapshot": Op(SNAPSHOT, "snapshot_ok"),
}


def op_import(msg: dict, ctx: OpContext) -> dict:
    """import_file: parse the file's bytes (sent by the launcher) and bind the object (jail/cad/importer.py)."""
    from jail.cad import importer
    return _cap_result(importer.run_import(msg, ctx.namespace),
                       ctx.profile.limits.max_result_bytes // 2)


def op_history(msg: dict, ctx: OpContext):
    """script: the session's successful calls (jail/history.py) as JSON in the blob."""
    import json
    from jail.cad import history
    entries = history.entries()
    return {"ok": True, "count": len(entries)}, json.dumps(entries).encode("utf-8", "surrogatepass")


OPS["import"] = Op(TRANSACTION, "result", op_import)
OPS["history"] = Op(DISPOSABLE, "history", op_history)


# CAD services (jail/cad/render.py, jail/cad/measure.py; both imported by the zygote's warm-up)
def op_render(msg: dict, ctx: OpContext):
    from jail.cad import render
    return render.op_render(msg, ctx)


def op_measure(msg: dict, ctx: OpContext):
    from jail.cad import measure
    return measure.op_measure(msg, ctx)


def op_distance(msg: dict, ctx: OpContext):
    from jail.cad import measure
    return measure.op_distance(msg, ctx)


def op_validate(msg: dict, ctx: OpContext):
    from jail.cad import measure
    return measure.op_validate(msg, ctx)


OPS["render"] = Op(DISPOSABLE, "render", op_render)
OPS["measure"] = Op(DISPOSABLE, "measure", op_measure)
OPS["distance"] = Op(DISPOSABLE, "distance", op_distance)
OPS["validate"] = Op(DISPOSABLE, "validate", op_validate)


def run_disposable(op: Op, msg: dict, ctx: OpContext) -> tuple[dict, bytes]:
    """The reply of a disposable op (its exception as an ``ok: False`` reply)."""
    try:
        reply, blob = op.handler(msg, ctx)
    except BaseException as e:  # noqa: BLE001 - user state may raise anything
        return {"t": op.reply, "ok": False, "error": f"{type(e).__name__}: {e}"}, b""
    return {"t": op.reply, **reply}, blob or b""

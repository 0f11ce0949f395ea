"""The MCP tools, independent of transport (embedded MCP server or daemon).

Each method returns a JSON-safe dict; :func:`render` turns it into the text
an assistant reads. A session's own failures (exceptions, timeouts, crashes)
come back as results, never as exceptions: the session survives them.
"""
from __future__ import annotations

import logging
import threading

from jail.errors import LayerError

from .session import Session, SessionDead, SessionError

log = logging.getLogger("build123d_launcher.tools")

TOOLS = ("execute", "session_state", "last_error", "save_snapshot", "restore_snapshot",
         "list_snapshots", "delete_snapshot", "reset", "export")


class ToolSet:
    """The tools of one client connection: one session, created on first use."""

    def __init__(self, launcher):
        self.launcher = launcher
        self.session: Session | None = None
        self.lock = threading.Lock()

    def _session(self) -> Session:
        if self.session is None or self.session.closed:
            self.session = self.launcher.new_session()
        return self.session

    def _guard(self, fn):
        with self.lock:
            try:
                return fn(self._session())
            except SessionDead as e:
                old = self.session
                self.session = None
                if old is not None:
                    self.launcher.close_session(old)
                return {"error": f"the session was lost ({e}); a new, empty one starts with the next call. "
                                 "Snapshots of the old session are gone."}
            except SessionError as e:
                return {"error": str(e)}
            except LayerError as e:
                return {"error": f"jail layer '{e.layer}' cannot be applied, so no code runs: {e.reason}"}
            except OSError as e:  # e.g. the launcher ran out of file descriptors
                return {"error": f"the launcher could not serve this call: {e.strerror or e}; "
                                 "the session is unchanged if it existed"}

    def call(self, tool: str, args: dict) -> dict:
        if tool not in TOOLS:
            return {"error": f"unknown tool {tool!r}"}
        try:
            return getattr(self, tool)(**args)
        except TypeError as e:
            return {"error": f"bad arguments for {tool}: {e}"}

    def execute(self, code: str, timeout_s: float | None = None) -> dict:
        return self._guard(lambda s: s.execute(code, timeout_s))

    def session_state(self) -> dict:
        return self._guard(lambda s: {"objects": s.state()})

    def last_error(self) -> dict:
        return self._guard(lambda s: {"last_error": s.last_error})

    def save_snapshot(self, name: str) -> dict:
        return self._guard(lambda s: s.save_snapshot(name))

    def restore_snapshot(self, name: str) -> dict:
        return self._guard(lambda s: s.restore_snapshot(name))

    def list_snapshots(self) -> dict:
        return self._guard(lambda s: {"snapshots": s.list_snapshots()})

    def delete_snapshot(self, name: str) -> dict:
        return self._guard(lambda s: s.delete_snapshot(name))

    def reset(self) -> dict:
        with self.lock:
            if self.session is not None:
                self.launcher.close_session(self.session)
                self.session = None
        return self._guard(lambda s: {"reset": True, "session": s.id})

    def export(self, object_name: str, filename: str, format: str = "") -> dict:
        from .exports import export_object
        return self._guard(lambda s: export_object(s, self.launcher.output_dir, object_name, filename, format))

    def close(self) -> None:
        with self.lock:
            if self.session is not None:
                self.launcher.close_session(self.session)
                self.session = None


def _fmt_num(v) -> str:
    return f"{v:.6g}" if isinstance(v, (int, float)) else str(v)


def render_objects(objects: list[dict]) -> str:
    if not objects:
        return "(no objects)"
    lines = []
    for o in objects:
        bits = [f"{o.get('name')}: {o.get('type')}"]
        for k in ("volume", "area", "length"):
            if k in o and o[k] is not None:
                bits.append(f"{k}={_fmt_num(o[k])}")
        bb = o.get("bbox")
        if isinstance(bb, dict) and "min" in bb and "max" in bb:
            bits.append("bbox=" + "..".join("(" + ", ".join(_fmt_num(x) for x in bb[k]) + ")" for k in ("min", "max")))
        if "valid" in o:
            bits.append(f"valid={o['valid']}")
        if "repr" in o:
            bits.append(str(o["repr"]))
        if "summary_error" in o:
            bits.append(f"(could not summarise: {o['summary_error']})")
        lines.append("  " + " ".join(bits))
    return "\n".join(lines)


def render(tool: str, result: dict) -> str:
    if "error" in result and not isinstance(result.get("error"), dict) and "ok" not in result:
        return f"Error: {result['error']}"
    if tool == "execute":
        parts = []
        if result.get("ok"):
            parts.append(f"OK ({result.get('wall_ms', 0):.0f} ms)")
        else:
            e = result.get("error") or {}
            where = f" at line {e['line']}" if e.get("line") else ""
            parts.append(f"{e.get('type', 'Error')}{where}: {e.get('message', '')}")
            if e.get("source_line"):
                parts.append(f"    {e['source_line'].strip()}")
            parts.append("The session is unchanged (state as before this call).")
        if result.get("stdout"):
            parts.append("stdout:\n" + result["stdout"])
        if result.get("stderr"):
            parts.append("stderr:\n" + result["stderr"])
        if result.get("ok"):
            parts.append("objects:\n" + render_objects(result.get("objects", [])))
        return "\n".join(parts)
    if tool == "session_state":
        return "objects:\n" + render_objects(result.get("objects", []))
    if tool == "last_error":
        e = result.get("last_error")
        if not e:
            return "No error in this session yet."
        where = f" at line {e['line']}" if e.get("line") else ""
        text = f"{e.get('type')}{where}: {e.get('message')}"
        if e.get("source_line"):
            text += f"\n    {e['source_line'].strip()}"
        return text
    if tool == "list_snapshots":
        snaps = result.get("snapshots", [])
        return "snapshots: " + (", ".join(s["name"] for s in snaps) if snaps else "none")
    import json
    return json.dumps(result, indent=1, default=str)

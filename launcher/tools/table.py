"""The tools, declared once: every front end reads this table.

One :class:`Tool` per tool: its name, what the assistant reads about it, the JSON
schema of each parameter (description, type, enum, limits), the handler that
serves it on a :class:`~launcher.session.session.Session`, the renderer that turns its
result dict into MCP content, and whether it changes the session.

* the MCP server (``mcp_server.py``) lists ``TOOLS`` and renders replies with it;
* :class:`~launcher.tools.toolset.ToolSet` (embedded server, daemon, CLI) validates
  arguments with :func:`check_args` and dispatches to ``Tool.handler``;
* the daemon serves ``ToolSet.call``, so it accepts exactly these tools;
* the CLI renders with :func:`render_text`.

Adding a tool = adding one ``Tool(...)`` to ``TOOLS`` (and, when it needs the
jail, one op in ``jail/ops.py``). Nothing else lists tool names.

Blocks: arguments that do not match the declared schema (unknown names, wrong
types, out-of-range numbers, strings over their limit) are refused before any
handler runs, with a message naming the parameter. It does not decide what a
value means (file names, snapshot names are checked again by their handlers).
"""
from __future__ import annotations

import base64
import json
import math
import re
from dataclasses import dataclass
from typing import Any, Callable

from launcher.files.exports import FORMATS
from launcher.tools import cad

# ------------------------------------------------------------------ content
# A renderer returns a list of content blocks, shaped like MCP content:
#   {"type": "text", "text": str}
#   {"type": "image", "data": <base64 str>, "mimeType": "image/png"}


def text(s: str) -> dict:
    return {"type": "text", "text": s}


def image(data: bytes, mime: str = "image/png") -> dict:
    return {"type": "image", "data": base64.b64encode(data).decode("ascii"), "mimeType": mime}


@dataclass(frozen=True)
class Tool:
    name: str
    description: str                 # may use {allowed_imports}, {timeout_s}, ... (see describe())
    params: dict[str, dict]          # parameter name -> JSON schema (with "description")
    handler: Callable[..., dict]     # handler(ctx, session, **args) -> result dict
    render: Callable[[dict], list[dict]] | None = None   # result -> content blocks (default: JSON)
    required: tuple[str, ...] = ()
    read_only: bool = True           # False: the tool changes the session (state, snapshots)
    needs_session: bool = True       # False: handler(ctx, None, **args) manages the session itself
    title: str = ""
    advisory: tuple[str, ...] = ()   # parameters whose enum/limits the handler checks itself, with its own
                                     # messages (and aliases, e.g. format 'STP'): not enforced by check_args

    def input_schema(self) -> dict:
        return {"type": "object", "properties": {k: dict(v) for k, v in self.params.items()},
                "required": list(self.required), "additionalProperties": False}

    def describe(self, profile=None) -> str:
        return fill(self.description, profile)

    def content(self, result: dict) -> list[dict]:
        if not isinstance(result, dict):
            return [text("Error: invalid result")]
        if isinstance(result.get("error"), str):
            return [text(f"Error: {result['error']}")]
        if self.render is None:
            return [text(json.dumps(result, indent=1, default=str))]
        return self.render(result)


_PLACEHOLDER = re.compile(r"\{(allowed_imports|timeout_s|cpu_s|memory_mb|max_[a-z_]+)\}")


def fill(text: str, profile=None) -> str:
    """``text`` with the profile placeholders ({timeout_s}, {allowed_imports}, {max_...}) filled in; any other
    brace (a JSON example in a description) is left alone."""
    facts = _ProfileFacts(profile)
    return _PLACEHOLDER.sub(lambda m: str(facts[m.group(1)]), text)


class _ProfileFacts(dict):
    """The profile's limits as description placeholders (a placeholder without a profile stays generic)."""

    def __init__(self, profile):
        super().__init__()
        self.profile = profile

    def __missing__(self, key):
        p = self.profile
        generic = {"allowed_imports": "build123d, math, numpy and a few stdlib modules (see the server instructions)",
                   "timeout_s": "the profile's", "max_code_bytes": "the profile's", "max_snapshots": "the profile's",
                   "max_export_bytes": "the profile's", "max_output_bytes": "the profile's"}
        if p is None:
            return generic.get(key, key)
        if key == "allowed_imports":
            return ", ".join(p.allowed_imports)
        lim = p.limits
        if hasattr(lim, key):
            v = getattr(lim, key)
            return f"{v:g}" if isinstance(v, float) else str(v)
        return generic.get(key, key)


# ------------------------------------------------------------------ results
def is_error(result: dict) -> bool:
    """Whether a result dict is a failed call (MCP ``isError``)."""
    if not isinstance(result, dict):
        return True
    if isinstance(result.get("error"), str):
        return True
    return result.get("ok") is False


# ------------------------------------------------------------------ argument checks
_TYPES = {"string": str, "integer": int, "number": (int, float), "boolean": bool, "object": dict, "array": list}


class ArgumentError(ValueError):
    pass


def check_value(name: str, schema: dict, v: Any) -> None:
    typ = schema.get("type")
    types = typ if isinstance(typ, list) else [typ] if typ else []
    if types:
        ok = False
        for t in types:
            if t == "null" and v is None:
                ok = True
            elif t in ("integer", "number") and isinstance(v, bool):
                continue
            elif t in _TYPES and isinstance(v, _TYPES[t]):
                ok = True
        if not ok:
            raise ArgumentError(f"{name} must be of type {' or '.join(types)}")
    if v is None:
        return
    if "enum" in schema and v not in schema["enum"]:
        raise ArgumentError(f"{name} must be one of: {', '.join(map(repr, schema['enum']))}")
    if isinstance(v, str):
        if "maxLength" in schema and len(v) > schema["maxLength"]:
            raise ArgumentError(f"{name} is longer than {schema['maxLength']} characters")
        if "minLength" in schema and len(v) < schema["minLength"]:
            raise ArgumentError(f"{name} must have at least {schema['minLength']} character(s)")
        if "pattern" in schema and not re.search(schema["pattern"], v):
            raise ArgumentError(f"{name} {v[:80]!r} does not match {schema['pattern']}")
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        if isinstance(v, float) and not math.isfinite(v):
            raise ArgumentError(f"{name} must be a finite number")
        if "minimum" in schema and v < schema["minimum"]:
            raise ArgumentError(f"{name} must be >= {schema['minimum']}")
        if "exclusiveMinimum" in schema and v <= schema["exclusiveMinimum"]:
            raise ArgumentError(f"{name} must be > {schema['exclusiveMinimum']}")
        if "maximum" in schema and v > schema["maximum"]:
            raise ArgumentError(f"{name} must be <= {schema['maximum']}")


def check_args(tool: Tool, args: dict) -> dict:
    """The arguments, checked against the tool's schema (ArgumentError otherwise)."""
    if not isinstance(args, dict):
        raise ArgumentError("arguments must be an object")
    unknown = sorted(set(args) - set(tool.params))
    if unknown:
        raise ArgumentError(f"unknown argument(s) {', '.join(map(repr, unknown))}; "
                            f"{tool.name} takes {', '.join(tool.params) or 'none'}")
    args = {k: v for k, v in args.items() if v is not None or k in tool.required}  # null = not given
    missing = [k for k in tool.required if k not in args]
    if missing:
        raise ArgumentError(f"missing required argument(s): {', '.join(missing)}")
    for k, v in args.items():
        schema = tool.params[k]
        if k in tool.advisory:
            schema = {"type": schema["type"]} if "type" in schema else {}
        check_value(k, schema, v)
    return args


# ------------------------------------------------------------------ renderers
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
        c = o.get("counts")
        if isinstance(c, dict) and "solids" in c and "faces" in c:  # "solids=2": the part fell apart?
            bits.append(f"solids={c['solids']} faces={c['faces']}")
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


def _render_execute(result: dict) -> list[dict]:
    from launcher.tools.text import execute_text
    return [text(execute_text(result))]


def _api(ctx, s, name="", query=""):
    from launcher.replies import validate as replies
    from launcher.tools.text import api_text
    msg, _ = s.ask({"t": "api", "name": name, "query": query}, "api", timeout=30)
    r = replies.bounded(msg, depth=3, items=100, str_cap=3000)  # untrusted: a safe, bounded copy
    if not isinstance(r, dict) or r.get("ok") is not True:
        return {"error": api_text(r if isinstance(r, dict) else {}).removeprefix("Error: ")}
    return {"ok": True, "text": api_text(r)}


def _render_api(result: dict) -> list[dict]:
    return [text(str(result.get("text", "")))]


def _render_state(result: dict) -> list[dict]:
    return [text("objects:\n" + render_objects(result.get("objects", [])))]


def _render_last_error(result: dict) -> list[dict]:
    e = result.get("last_error")
    if not e:
        return [text("No error in this session yet.")]
    from launcher.tools.text import error_lines
    return [text("\n".join(error_lines(e, outcome_note=False)))]


def _render_snapshots(result: dict) -> list[dict]:
    snaps = result.get("snapshots", [])
    return [text("snapshots: " + (", ".join(s["name"] for s in snaps) if snaps else "none"))]


# ------------------------------------------------------------------ handlers
# handler(ctx, session, **args): ctx is the ToolSet (ctx.launcher, ctx.output_dir).

def _execute(ctx, s, code, timeout_s=None):
    return s.execute(code, timeout_s)


def _session_state(ctx, s):
    return {"objects": s.state()}


def _last_error(ctx, s):
    return {"last_error": s.last_error}


def _save_snapshot(ctx, s, name):
    return s.save_snapshot(name)


def _restore_snapshot(ctx, s, name):
    return s.restore_snapshot(name)


def _list_snapshots(ctx, s):
    return {"snapshots": s.list_snapshots()}


def _delete_snapshot(ctx, s, name):
    return s.delete_snapshot(name)


def _reset(ctx, _s):
    ctx.drop_session()
    return ctx.with_session(lambda s: {"reset": True, "session": s.id})


def _export(ctx, s, object_name, filename, format=""):
    from launcher.files.exports import export_object
    return export_object(s, ctx.output_dir, object_name, filename, format)


def _list_inputs(ctx, s):
    from launcher.files.inputs import tool_list_inputs
    return tool_list_inputs(ctx, s)


def _render_list_inputs(result):
    from launcher.files.inputs import render_list_inputs
    return render_list_inputs(result)


def _import_file(ctx, s, filename, name, format=""):
    from launcher.files.inputs import tool_import_file
    return tool_import_file(ctx, s, filename, name, format)


def _render_import_file(result):
    from launcher.files.inputs import render_import_file
    return render_import_file(result)


def _script(ctx, s):
    from launcher.files.script import tool_script
    return tool_script(ctx, s)


def _render_script(result):
    from launcher.files.script import render
    return render(result)


# ------------------------------------------------------------------ the table
SNAPSHOT_NAME_SCHEMA = {
    "type": "string", "pattern": r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$", "minLength": 1, "maxLength": 64,
    "description": "Snapshot name: 1-64 characters of letters, digits, '_', '.', '-', starting with a letter or "
                   "digit (e.g. 'base', 'v2.holes').",
}
OBJECT_NAME_SCHEMA = {"type": "string", "minLength": 1, "maxLength": 200,
                      "description": "A top-level name bound in the session (e.g. 'part'), as listed by "
                                     "session_state."}

EXECUTE_DESCRIPTION = (
    "Run build123d Python code in the persistent session. Top-level names persist between calls; "
    "`from build123d import *` is pre-loaded. Allowed imports: {allowed_imports} (nothing else: no os, "
    "subprocess, socket, open()). The code has no file access, no network and no GUI viewer: use render "
    "to see the model, session_state/measure to inspect objects, import_file to read the input directory "
    "and export to write files. Limits per call: {timeout_s} s wall clock, "
    "{max_code_bytes} bytes of code, {max_output_bytes} bytes of stdout+stderr kept (head and tail). Returns "
    "stdout/stderr, the value of a trailing expression (REPL style: end with `part.volume`), and a summary "
    "(type, volume, bounding box) of only the names the call added (+), changed (~) or deleted (-) "
    "(session_state lists all); or the error with its line, the source around it and a hint for known "
    "mistakes. A call that raises, times out or crashes leaves the session exactly as it was; a timeout says "
    "which line was running.")

TOOLS: tuple[Tool, ...] = (
    Tool("execute", EXECUTE_DESCRIPTION, title="Run build123d code",
         params={
             "code": {"type": "string", "description": "Python source to run in the session (build123d API)."},
             "timeout_s": {"type": "number", "exclusiveMinimum": 0,
                           "description": "Optional: a shorter wall-clock limit for this call, in seconds "
                                          "(the profile's limit, {timeout_s} s, is the maximum)."},
         },
         required=("code",), handler=_execute, render=_render_execute, read_only=False),
    Tool("session_state", "List the session's top-level names: type, volume, bounding box, validity.",
         title="Session objects", params={}, handler=_session_state, render=_render_state),
    Tool("last_error", "The last error in this session: type, message, line and source line.",
         title="Last error", params={}, handler=_last_error, render=_render_last_error),
    Tool("save_snapshot", "Save the whole session state (variables, functions, shapes) under a name, in O(1). "
                          "At most {max_snapshots} snapshots per session; names are never overwritten.",
         title="Save snapshot", params={"name": SNAPSHOT_NAME_SCHEMA}, required=("name",),
         handler=_save_snapshot, read_only=False),
    Tool("restore_snapshot", "Restore the session to a saved snapshot (the snapshot itself is kept, so it can be "
                             "restored again).",
         title="Restore snapshot", params={"name": SNAPSHOT_NAME_SCHEMA}, required=("name",),
         handler=_restore_snapshot, read_only=False),
    Tool("list_snapshots", "List saved snapshots.", title="List snapshots", params={},
         handler=_list_snapshots, render=_render_snapshots),
    Tool("delete_snapshot", "Delete a saved snapshot.", title="Delete snapshot",
         params={"name": SNAPSHOT_NAME_SCHEMA}, required=("name",), handler=_delete_snapshot, read_only=False),
    Tool("reset", "Discard the session and start a new, empty one (its snapshots are discarded too).",
         title="Reset session", params={}, handler=_reset, read_only=False, needs_session=False),
    Tool("export", "Export a top-level object to a file in the output directory (the only way to write a file). "
                   "The filename must be relative (sub-directories are created); existing files are never "
                   "overwritten; at most {max_export_bytes} bytes. Format 'py' ('design.py') writes the session's "
                   "script (see the script tool; object_name is then not used).",
         title="Export to file",
         params={
             "object_name": OBJECT_NAME_SCHEMA,
             "filename": {"type": "string", "minLength": 1, "maxLength": 1024,
                          "description": "Relative path under the output directory, e.g. 'part.step' or "
                                         "'v2/part.stl'. No absolute paths, no '..'."},
             "format": {"type": "string", "enum": ["", *FORMATS],
                        "description": "File format; '' (default) takes it from the filename's extension."},
         },
         required=("object_name", "filename"), handler=_export, advisory=("object_name", "filename", "format")),
    Tool("api", "Look up the build123d API (computed in the jail, read-only): api(name='fillet'), api(name='Box'), "
                "api(name='Part.edges') give the signature, docstring and (for a class) its methods and "
                "properties; api(query='chamf') lists the names containing it; api() gives the build123d and OCP "
                "versions. Use it instead of dir()/help()/__doc__, which session code cannot use.",
         title="build123d API look-up",
         params={"name": {"type": "string", "maxLength": 200,
                          "pattern": r"^$|^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*){0,3}$",
                          "description": "A name `from build123d import *` binds, or Class.attribute "
                                         "(e.g. 'Box', 'fillet', 'Part.edges', 'Axis.Z')."},
                 "query": {"type": "string", "maxLength": 200,
                           "description": "Substring to search for among the build123d names (case-insensitive), "
                                          "e.g. 'fillet'."}},
         handler=_api, render=_render_api),
    # CAD services: launcher/cad.py (the op runs in a disposable jailed next: jail/render.py, jail/measure.py)
    Tool("render", cad.RENDER_DESCRIPTION, title="Render a view", params=cad.RENDER_PARAMS,
         handler=cad.render, render=cad.content_render),
    Tool("measure", cad.MEASURE_DESCRIPTION, title="Measure an object", params=cad.MEASURE_PARAMS,
         required=("object_name",), handler=cad.measure, render=cad.content_measure),
    Tool("distance", cad.DISTANCE_DESCRIPTION, title="Distance between two objects", params=cad.DISTANCE_PARAMS,
         required=("a", "b"), handler=cad.distance, render=cad.content_distance),
    Tool("validate", cad.VALIDATE_DESCRIPTION, title="Check export readiness", params=cad.MEASURE_PARAMS,
         required=("object_name",), handler=cad.validate, render=cad.content_validate),
    # the user's own files and the design as a script: launcher/inputs.py, launcher/script.py
    Tool("list_inputs", "List the files in the input directory that import_file can read (relative names, sizes, "
                        "formats). The input directory is set by the user (--input-dir); the code you run never "
                        "sees it.",
         title="List input files", params={}, handler=_list_inputs, render=_render_list_inputs, needs_session=False),
    Tool("import_file", "Import a CAD file from the input directory (STEP, BREP, STL, 3MF, SVG, DXF) and bind it to "
                        "a top-level name in the session, like execute does. At most {max_input_bytes} bytes; "
                        "STL/3MF meshes become solids when they close. Returns the object's summary (type, volume, "
                        "bounding box). A file that fails to parse leaves the session exactly as it was.",
         title="Import a file",
         params={"filename": {"type": "string", "minLength": 1, "maxLength": 1024,
                              "description": "Name relative to the input directory, as listed by list_inputs "
                                             "(e.g. 'bracket.step'). No absolute paths, no '..', no symlinks."},
                 "name": {"type": "string", "minLength": 1, "maxLength": 200, "pattern": r"^[A-Za-z_][A-Za-z0-9_]*$",
                          "description": "Top-level name to bind the imported object to (e.g. 'bracket')."},
                 "format": {"type": "string", "enum": ["", "step", "stp", "brep", "stl", "3mf", "svg", "dxf"],
                            "description": "File format; '' (default) takes it from the filename's extension."}},
         required=("filename", "name"), handler=_import_file, render=_render_import_file, read_only=False),
    Tool("script", "The session's successful code, in order, as one runnable Python script (`from build123d import "
                   "*` first; imported files noted and read from INPUT_DIR). Failed calls, restored-away and reset "
                   "calls are not in it. To write it to a file: export(object_name='script', filename='design.py').",
         title="Session as a script", params={}, handler=_script, render=_render_script),
)

BY_NAME: dict[str, Tool] = {t.name: t for t in TOOLS}
NAMES: tuple[str, ...] = tuple(BY_NAME)


def get(name: str) -> Tool | None:
    return BY_NAME.get(name) if isinstance(name, str) else None


def schema_for(tool: Tool, profile=None) -> dict:
    """The tool's input schema with profile facts filled into the parameter descriptions."""
    s = tool.input_schema()
    for p in s["properties"].values():
        if isinstance(p.get("description"), str):
            p["description"] = fill(p["description"], profile)
    return s


def render_text(tool: str, result: dict) -> str:
    """A result as plain text (CLI, tests): the text blocks of its content, images summarised."""
    t = get(tool)
    if t is None:
        err = result.get("error") if isinstance(result, dict) else "invalid result"
        blocks = [text(f"Error: {err}" if isinstance(err, str) else json.dumps(result, indent=1, default=str))]
    else:
        blocks = t.content(result)
    out = []
    for b in blocks:
        if b.get("type") == "text":
            out.append(b["text"])
        else:
            out.append(f"[{b.get('type')} {b.get('mimeType', '')}, {len(b.get('data', '')) * 3 // 4} bytes]")
    return "\n".join(out)

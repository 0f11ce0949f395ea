"""The file tools: ``export``, ``list_inputs``, ``import_file``, ``script``.

Thin: the mechanisms live in launcher/files/ (exports.py writes under the output directory,
inputs.py reads the input directory, script.py rebuilds the session's code, safepath.py walks
both without following a symlink). The schema checks types and lengths; those modules check
what a name means (path rules, a name to bind in the session). ``export`` accepts other
spellings of a format ('STP', '.step'): :func:`export_normalize` turns them into the schema's.
"""
from __future__ import annotations

from jail.wire.caps import NAME_CAP

from launcher.files import exports, inputs
from launcher.files.script import session_script
from launcher.tools import content
from launcher.tools.session import execute_content
from launcher.tools.tool import Tool, hints

MAX_SHOWN = 200 * 1024  # the script tool's text reply; longer: export it as .py
NO_INPUT_DIR = inputs.HOW_TO_SET[0].upper() + inputs.HOW_TO_SET[1:]


def _input_dir(ctx):
    return getattr(getattr(ctx, "launcher", None), "input_dir", None)


# ------------------------------------------------------------------ export
def export_normalize(args: dict) -> dict:
    if "format" in args:
        return dict(args, format=exports.canonical_format(args["format"]))
    return args


def export(ctx, session, object_name, filename, format="") -> dict:
    return exports.export_object(session, ctx.output_dir, object_name, filename, format, verifier=ctx)


EXPORT = Tool(
    "export", "Export to file",
    "Export a top-level object to a file in the output directory (the only way to write a file). "
    "The filename must be relative (sub-directories are created) and end in .step, .stp, .stl, .brep, "
    ".brp, .svg, .dxf or .3mf; no hidden ('.') components, no names tools run on their own (conftest.py, "
    "test_*.py, setup.py, ...). Every file is re-read by a fresh jailed process before it is written; "
    "existing files are never overwritten; at most {max_export_bytes} bytes. Format 'py' ('design.py') "
    "writes the session's script (see the script tool; object_name is then not used).",
    params={
        "object_name": {"type": "string", "minLength": 1, "maxLength": NAME_CAP,
                        "description": "A top-level name bound in the session (e.g. 'part'), as listed by "
                                       "session_state."},
        "filename": {"type": "string", "minLength": 1, "maxLength": 1024,
                     "description": "Relative path under the output directory, e.g. 'part.step' or "
                                    "'v2/part.stl'. No absolute paths, no '..'."},
        "format": {"type": "string", "enum": ["", *exports.FORMATS],
                   "description": "File format; '' (default) takes it from the filename's extension."},
    },
    required=("object_name", "filename"), handler=export, normalize=export_normalize, changes_session=False,
    # writes a new file, never overwrites one; the same call again is refused ("already exists")
    annotations=hints(read_only=False, destructive=False, idempotent=True, open_world=False))


# ------------------------------------------------------------------ list_inputs
def list_inputs(ctx, _session) -> dict:
    d = _input_dir(ctx)
    if d is None:
        return {"error": NO_INPUT_DIR}
    try:
        return inputs.list_inputs(d, ctx.profile.limits.max_input_bytes)
    except inputs.InputError as e:
        return {"error": str(e)}


def list_inputs_content(result: dict) -> list[dict]:
    lines = [f"input directory {result.get('input_dir')}:"]
    files = result.get("files") or []
    lines += [f"  {f['name']}  ({f['format']}, {f['size']} bytes)" for f in files]
    if not files:
        lines.append("  (no importable files)")
    lines += [f"  skipped {s['name']}: {s['why']}" for s in result.get("skipped") or []]
    if result.get("truncated"):
        lines.append("  [listing cut]")
    return [content.text("\n".join(lines))]


LIST_INPUTS = Tool(
    "list_inputs", "List input files",
    "List the files in the input directory that import_file can read (relative names, sizes, formats). The "
    "input directory is set by the user (--input-dir); the code you run never sees it.",
    params={}, handler=list_inputs, renderer=list_inputs_content, needs_session=False, changes_session=False,
    annotations=hints(read_only=True, destructive=False, idempotent=True, open_world=False))


# ------------------------------------------------------------------ import_file
def import_file(ctx, session, filename, name, format="") -> dict:
    d = _input_dir(ctx)
    if d is None:
        return {"error": NO_INPUT_DIR}
    limits = ctx.profile.limits
    req, note, info = inputs.import_request(d, filename, name, format, limits.max_input_bytes)
    result = session.execute(note, request=req, limit_s=limits.import_timeout_s)
    result["imported"] = {**info, "name": name}
    return result


def import_file_content(result: dict) -> list[dict]:
    blocks = execute_content(result)
    info = result.get("imported") or {}
    if result.get("ok"):
        head = (f"Imported {info.get('filename')!r} ({str(info.get('format', '')).upper()}, {info.get('size')} bytes) "
                f"as {info.get('name')}.")
    else:
        head = f"Import of {info.get('filename')!r} failed."
    return [content.text(head + "\n" + blocks[0]["text"])] + blocks[1:]


IMPORT_FILE = Tool(
    "import_file", "Import a file",
    "Import a CAD file from the input directory (STEP, BREP, STL, 3MF, SVG, DXF) and bind it to a top-level "
    "name in the session, like execute does. At most {max_input_bytes} bytes; STL/3MF meshes become solids "
    "when they close. Returns the object's summary (type, volume, bounding box). A file that fails to parse "
    "leaves the session exactly as it was.",
    params={"filename": {"type": "string", "minLength": 1, "maxLength": 1024,
                         "description": "Name relative to the input directory, as listed by list_inputs "
                                        "(e.g. 'bracket.step'). No absolute paths, no '..', no symlinks."},
            "name": {"type": "string", "minLength": 1, "maxLength": NAME_CAP, "pattern": r"^[A-Za-z_][A-Za-z0-9_]*$",
                     "description": "Top-level name to bind the imported object to (e.g. 'bracket')."},
            "format": {"type": "string", "enum": ["", *inputs.FORMATS, *inputs.ALIASES],
                       "description": "File format; '' (default) takes it from the filename's extension."}},
    required=("filename", "name"), handler=import_file, renderer=import_file_content, changes_session=True,
    # binds (or rebinds) a name, and the script gains a call each time
    annotations=hints(read_only=False, destructive=True, idempotent=False, open_world=False))


# ------------------------------------------------------------------ script
def script(ctx, session) -> dict:
    return session_script(session)


def script_content(result: dict) -> list[dict]:
    s = result.get("script", "")
    head = f"{result.get('calls', 0)} call(s), {result.get('imports', 0)} import(s), {result.get('bytes', 0)} bytes"
    if len(s) > MAX_SHOWN:
        return [content.text(f"{head}: too long to show here; write it with export(object_name='script', "
                             f"filename='design.py')\n\n" + s[:4096] + "\n[... cut]")]
    return [content.text(f"{head}:\n\n{s}")]


SCRIPT = Tool(
    "script", "Session as a script",
    "The session's successful code, in order, as one runnable Python script (`from build123d import *` "
    "first; imported files noted and read from INPUT_DIR). Failed calls, restored-away and reset calls are "
    "not in it. To write it to a file: export(object_name='script', filename='design.py').",
    params={}, handler=script, renderer=script_content, changes_session=False,
    annotations=hints(read_only=True, destructive=False, idempotent=True, open_world=False))

"""The file tools: ``export``, ``list_inputs``, ``import_file``, ``script``.

Thin: the mechanisms live in launcher/files/ (exports.py writes under the output directory,
inputs.py reads the input directory, script.py rebuilds the session's code, safepath.py walks
both without following a symlink). The schema checks types and lengths; those modules check
what a name means (path rules, a name to bind in the session). ``export`` accepts other
spellings of a format ('STP', '.step'): :func:`export_normalize` turns them into the schema's.
Replies are a few lines of text (text.py): the export's facts, never its JSON.
"""
from __future__ import annotations

from jail.wire.caps import NAME_CAP

from launcher.files import exports, inflight, inputs
from launcher.files.script import import_code, session_script
from launcher.replies import imports
from launcher.tools import content, text
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
    r = exports.export_object(session, ctx.output_dir, object_name, filename, format, verifier=ctx)
    if r.get("format") != "py":
        r["object"] = object_name  # checked by export_object: a top-level name
    return r


def export_content(result: dict) -> list[dict]:
    return [content.text(text.export_text(result))]


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
    required=("object_name", "filename"), handler=export, renderer=export_content, normalize=export_normalize,
    changes_session=False,
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
    quiet = [f"{n} {what}" for n, what in ((result.get("other") or 0, "other file(s) of no supported CAD format"),
                                          (result.get("hidden") or 0, "name(s) starting with '.'")) if n]
    if quiet:
        lines.append(f"  not offered, not named: {', '.join(quiet)}")
    if result.get("truncated"):
        lines.append("  [listing cut]")
    return [content.text("\n".join(lines))]


LIST_INPUTS = Tool(
    "list_inputs", "List input files",
    "List the files in the input directory that import_file can read (relative names, sizes, formats): "
    "regular files with a CAD extension (" + ", ".join(sorted(inputs.EXTENSIONS)) + "), none under a name "
    "starting with '.', at most {max_input_bytes} bytes. The input directory is set by the user (--input-dir); "
    "the code you run never sees it.",
    params={}, handler=list_inputs, renderer=list_inputs_content, needs_session=False, changes_session=False,
    annotations=hints(read_only=True, destructive=False, idempotent=True, open_world=False))


# ------------------------------------------------------------------ import_file
def import_file(ctx, session, filename, name, format="") -> dict:
    d = _input_dir(ctx)
    if d is None:
        return {"error": NO_INPUT_DIR}
    limits = ctx.profile.limits
    inputs.check_object_name(name)
    # the bytes are held in the launcher-wide budget of imports in flight (waiting for room if need be)
    with inputs.reading(d, filename, limits.max_input_bytes, format, wait_s=inflight.wait_s(limits)) as inp:
        info = inp.info
        req, note = inputs.import_request(inp, name)
        with session.lock:  # the outcome read below is this call's
            result = session.execute(note, request=req, limit_s=limits.import_timeout_s, blob=inp.data,
                                     record=(import_code(name, info["format"], info["filename"]),
                                             f"import_file: {info['filename']}"))
            outcome = "ok" if result.get("ok") else (session.last_error or {}).get("outcome", "error")
            result = imports.checked(result, outcome, info, name, inp.data)
            if not result["ok"]:  # last_error shows the launcher's words too, never the jail's
                session.calls.last_error = {**result["error"], "outcome": outcome}
    result["imported"] = {**info, "name": name}
    return result


def import_file_content(result: dict) -> list[dict]:
    """``Imported 'a.step' (STEP, 10 bytes) as box: OK (12 ms)`` then the execute reply's other lines."""
    blocks = execute_content(result)
    info = result.get("imported") or {}
    body = blocks[0]["text"]
    if result.get("ok"):
        head = (f"Imported {info.get('filename')!r} ({str(info.get('format', '')).upper()}, "
                f"{text.size_text(info.get('size'))}) as {info.get('name')}")
        first, _, rest = body.partition("\n")
        if first.startswith("OK"):
            body = rest
            head += f": {first}"
        else:
            head += "."
    else:
        head = f"Import of {info.get('filename')!r} failed."
    return [content.text("\n".join(x for x in (head, body) if x))] + blocks[1:]


IMPORT_FILE = Tool(
    "import_file", "Import a file",
    "Import a CAD file from the input directory (STEP, BREP, STL, 3MF, SVG, DXF), exactly as list_inputs offers "
    "it, and bind it to a top-level name in the session, like execute does. At most {max_input_bytes} bytes; "
    "STL/3MF meshes become solids when they close. Returns the object's summary (type, volume, bounding box). "
    "A file that fails to parse leaves the session exactly as it was; the error says what is wrong and where "
    "(line), never quoting the file.",
    params={"filename": {"type": "string", "minLength": 1, "maxLength": 1024,
                         "description": "Name relative to the input directory, as listed by list_inputs "
                                        "(e.g. 'bracket.step'). No absolute paths, no '..', no symlinks, no "
                                        "name starting with '.'."},
            "name": {"type": "string", "minLength": 1, "maxLength": NAME_CAP, "pattern": r"^[A-Za-z_][A-Za-z0-9_]*$",
                     "description": "Top-level name to bind the imported object to (e.g. 'bracket')."},
            "format": {"type": "string", "enum": ["", *inputs.FORMATS, *inputs.ALIASES],
                       "description": "'' (default): the extension decides. Otherwise it must agree with the "
                                      "extension; it never makes another file importable."}},
    required=("filename", "name"), handler=import_file, renderer=import_file_content, changes_session=True,
    # binds (or rebinds) a name, and the script gains a call each time
    annotations=hints(read_only=False, destructive=True, idempotent=False, open_world=False))


# ------------------------------------------------------------------ script
def script(ctx, session) -> dict:
    return session_script(session)


UNTRUSTED = ("UNTRUSTED code written by this AI session: it ran in the jail; run with python it would run as "
             "the user, outside it. Read all of it; run it jailed with `build123d-launcher run FILE`.")


def shown_lines(s: str, cap: int) -> tuple[int, int]:
    """How many whole lines of ``s`` fit in ``cap`` bytes, and how many lines it has."""
    lines = s.split("\n")
    used = k = 0
    for ln in lines:
        used += len(ln.encode("utf-8", "surrogatepass")) + 1
        if used > cap:
            break
        k += 1
    return k, len(lines)


def script_content(result: dict) -> list[dict]:
    s = result.get("script", "")
    head = (f"{UNTRUSTED}\n{result.get('calls', 0)} call(s), {result.get('imports', 0)} import(s), "
            f"{result.get('bytes', 0)} bytes")
    changes = result.get("changes") or []
    if changes:
        head += "\nChanged by the launcher so that what you read is what runs:\n" + "\n".join(f"  {c}" for c in changes)
    k, n = shown_lines(s, MAX_SHOWN)
    if k >= n:
        return [content.text(f"{head}:\n\n{s}")]
    cut = (f"[lines {k + 1}\u2013{n} of {n} are not shown: write the script with export(object_name='script', "
           f"filename='design.py') and read it there]")
    return [content.text(f"{head}; {cut}\n\n" + "\n".join(s.split("\n")[:k]) + f"\n{cut}")]


SCRIPT = Tool(
    "script", "Session as a script",
    "The session's successful code, in order, as one Python script of UNTRUSTED code: it ran in the jail, and "
    "run with python it would run as the user, outside it. The launcher records the calls itself; the script "
    "starts with a header saying so and a guard line that stops python, import and pytest; the user runs it "
    "jailed with `build123d-launcher run FILE`. Non-ASCII names are renamed to ASCII, hidden characters "
    "escaped and long lines flagged (the reply lists every change); code that cannot be shown faithfully is "
    "refused. Failed, restored-away and reset calls are not in it. Shown up to " + str(MAX_SHOWN) + " bytes (the "
    "reply says which lines are not); to write it: export(object_name='script', filename='design.py').",
    params={}, handler=script, renderer=script_content, changes_session=False,
    annotations=hints(read_only=True, destructive=False, idempotent=True, open_world=False))

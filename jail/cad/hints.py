"""One hint line for the mistakes assistants make most often in this jail.

``hint(type_, message, source_line, rule=None, text=None, writes=True)`` looks at an error and
returns a sentence that points to what works instead, or None; ``success_note(code, writes=True)``
does the same for a call that succeeded without doing what it looks like (a file exporter that
wrote nothing, import_stl's mesh).
``writes``: whether the profile lets code write files (its scratch directory: the builtins layer on
and ``open`` not blocked; strict blocks it), which decides what an exporter's hint says. Known
mistakes: file exporters misused in code (-> a plain file name in the scratch directory, or the
``export`` tool where code writes no files), importers (-> ``import_file``), viewers
(-> ``render``), introspection the policy blocks (-> ``api``, attribute access, ``isinstance``),
``help()`` (-> ``api``), reading a file the call was not given (-> the files ``list_inputs``
offers), an allocation over the memory limit (:func:`memory_hint`), a builder used as a shape
(-> ``.part``), CadQuery code, OCCT "not done" failures of fillet, chamfer and booleans, arguments that
do not fit a signature (-> ``api``). Plain
string matching only: no user object is touched, nothing imported.

Blocks: nothing (advice only). Computed twice: in the jail (user code can change that one) and
by the launcher again from the validated error fields with its own profile
(launcher/replies/hints.py), whose sentence is the one shown.
"""
from __future__ import annotations

import re

__all__ = ["hint", "success_note", "memory_hint", "READ_HINT", "HELP_HINT"]

_EXPORT = re.compile(r"\b(export_(step|stl|brep|gltf|svg|dxf|3mf|three_mf|obj|ply)|ExportSVG|ExportDXF|"
                     r"write_stl|write_step|Mesher\(\)\.write)\b|\.export_\w+\s*\(|\.write\s*\(")
_IMPORT = re.compile(r"\b(import_(step|stl|brep|svg|svg_as_buildline_code|three_mf|3mf|dxf)|Mesher\(\)\.read|"
                     r"read_step|read_stl)\b")
_VIEWER_NAMES = ("show", "show_object", "show_all", "show_clear", "set_port", "set_defaults", "reset_show",
                 "display", "cq_editor", "ocp_vscode", "jupyter_cadquery", "yacv_server", "show_objects")
_IMPORTED = re.compile(r"import of '([\w.]+)'|No module named '([\w.]+)'")
VIEWER_HINT = ("the viewer here is ocp_vscode's show()/show_object() (where the profile allows it): its picture "
               "comes back in the reply; or use the `render` tool (objects, view), and session_state for numbers")
_VIEWER = re.compile(r"\b(" + "|".join(_VIEWER_NAMES) + r")\b")
_CADQUERY = re.compile(r"\b(cadquery|cq\.Workplane|Workplane)\b|name 'cq' is not defined")
_NAME_ERR = re.compile(r"name '([A-Za-z_][A-Za-z0-9_]*)' is not defined")
_SHAPELIST_ATTR = re.compile(r"^'ShapeList' object has no attribute '(\w+)'")
_BUILDER_ATTR = re.compile(r"'(BuildPart|BuildSketch|BuildLine)'(?: object)? has no attribute '(\w+)'")
# Python's own words for arguments that do not fit: "Mixin3D.fillet() missing 1 required positional argument"
_SIGNATURE = re.compile(r"(?:([A-Za-z_]\w{0,60})\.)?([A-Za-z_]\w{0,60})\(\) (?:missing \d+ required|got an "
                        r"unexpected keyword argument|takes (?:from )?\d+|got multiple values for argument)")
# the owners Python names in that message -> the class the api tool knows the method by
_OWNER_AS = {"Mixin1D": "Edge", "Mixin2D": "Face", "Mixin3D": "Part", **{c: c for c in (
    "Shape", "Part", "Solid", "Shell", "Face", "Wire", "Edge", "Vertex", "Compound", "Sketch", "Curve",
    "Location", "Plane", "Vector", "Axis")}}
# the names a signature hint may echo: build123d's common callables, a fixed list (a hint is the launcher's
# sentence: a name the session made up never appears in it)
_API_NAMES = frozenset((
    "fillet chamfer extrude revolve loft sweep offset mirror split scale add make_face make_hull thicken "
    "project section trace full_round Box Cylinder Sphere Cone Torus Wedge Hole CounterBoreHole "
    "CounterSinkHole Rectangle RectangleRounded Circle Ellipse Polygon RegularPolygon SlotCenterToCenter "
    "SlotOverall Text Trapezoid Line Polyline Spline CenterArc ThreePointArc RadiusArc TangentArc Helix "
    "Location Plane Vector Axis Pos Rot Locations GridLocations PolarLocations HexLocations BuildPart "
    "BuildSketch BuildLine Compound Mesher moved located move locate rotate translate position_at tangent_at "
    "intersect cut fuse distance_to edges faces vertices wires solids filter_by sort_by group_by max_fillet "
    "center project_to_viewport export_stl export_step import_step import_stl").split())
_NOT_DONE = re.compile(r"StdFail_NotDone|command not done|BRep_API|Standard_Failure|Failed creating a "
                       r"(fillet|chamfer)|Failed to (fillet|chamfer)|Null TopoDS_Shape", re.I)

API_HINT = ("use the `api` tool instead: api(name='Box') gives the signature and docstring "
            "(also 'Part.edges', 'fillet'), api(query='fill') searches the build123d names")
_BUILDER_OF = {"BuildPart": "part", "BuildSketch": "sketch", "BuildLine": "line"}
HELP_HINT = ("help() is not available in the jail: call the `api` tool instead, e.g. api(name='Box') for the "
             "signature, docstring, members and attributes, api(query='fill') to search the build123d names")
READ_HINT = ("code can read only the files list_inputs offers, each named by a string literal in this call's "
             "code (open('parts/a.step', 'rb') when list_inputs lists parts/a.step), and the files this call "
             "wrote itself; writes go to the call's scratch directory (it starts empty on every call; files in "
             "an export format are delivered to the output directory when the call succeeds)")
_IMPORT_STL = re.compile(r"\bimport_stl\s*\(")
STL_NOTE = ("import_stl gives one triangulated Face: a mesh, not a valid B-rep (hence INVALID; volumes and "
            "booleans on it are unreliable); Mesher().read('part.stl') or the `import_file` tool give a Solid "
            "when the mesh is closed")
_READING = re.compile(r"\b(open|read_text|read_bytes|loadtxt)\s*\(")
_MEMORY_TYPES = ("MemoryError", "_ArrayMemoryError")


def memory_hint(memory_mb: int | None = None, profile: str | None = None) -> str:
    """What a MemoryError means here and what to do; with the limit when the caller knows it (the
    launcher passes its own profile's ``memory_mb``: the jail's copy of the number is not trusted)."""
    of = f" of profile {profile!r}" if isinstance(profile, str) and profile else ""
    if isinstance(memory_mb, int) and not isinstance(memory_mb, bool) and memory_mb > 0:
        limit = f"memory_mb = {memory_mb} MiB"
    else:
        limit = "memory_mb"
    return (f"an allocation exceeded the per-process memory limit{of}: {limit} of address space (RLIMIT_AS) "
            "above the session's starting size, and what the session already holds counts toward it. "
            "Allocate less (smaller arrays, fewer copies, a coarser tessellation), `del` large names you no "
            "longer need, or ask the user for a profile with a larger memory_mb")


def _introspection(name: str) -> str | None:
    if name == "help":
        return HELP_HINT
    if name in ("dir", "vars", "__doc__", "inspect", "__dict__", "globals", "locals"):
        if name in ("globals", "locals", "vars"):
            return "the session_state tool lists the session's names; " + API_HINT
        return API_HINT
    if name in ("getattr", "hasattr", "setattr", "delattr"):
        return ("write the attribute directly (obj.name, obj.name = v) and catch AttributeError if it may be "
                "missing; the `api` tool lists what a class offers (api(name='Part'))")
    if name in ("eval", "exec", "compile", "__import__"):
        return "write the code directly; imports: only the allowed modules (see the server instructions)"
    if name == "open":
        return ("this profile gives code no files: the `export` tool writes objects to the output directory, "
                "`import_file` reads the input directory")
    if name in ("__class__", "__name__", "__mro__", "type"):
        return "test types with isinstance(x, Solid) (or Part, Compound, Face, ...); str(type(x)) names them"
    return None


def hint(type_: str, message: str, source_line: str | None = None, rule: str | None = None,
         text: str | None = None, *, writes: bool = True) -> str | None:
    """The hint for this error, or None when it is not a known mistake (``writes``: the module's docstring)."""
    t = type_ if isinstance(type_, str) else ""
    m = message if isinstance(message, str) else ""
    src = source_line if isinstance(source_line, str) else ""
    txt = text if isinstance(text, str) else ""
    both = f"{src}\n{m}"

    if rule in ("import",) or (t in ("ModuleNotFoundError", "ImportError") and "import" in m):
        im = _IMPORTED.search(m)  # the module refused, not the list of allowed ones the message names
        mod = (im.group(1) or im.group(2)) if im else ""
        if _VIEWER.search(f"{src}\n{mod}"):
            return VIEWER_HINT
        if _CADQUERY.search(f"{src}\n{mod}") or "name 'cq' is not defined" in m:
            return "this is build123d, not CadQuery: Box(10, 20, 5), Cylinder(3, 10), fillet(edges, r); see the quick reference resource"
        return None  # the refusal already lists the allowed modules
    if rule == "blocked-call":
        name = txt.split("(")[0].split(".")[-1].strip() or ""
        h = _introspection(name)
        if name == "open" or _EXPORT.search(src):
            return _export_hint(writes)
        return h
    if rule in ("dunder-attribute", "dunder-name"):
        if "__doc__" in both or "__dict__" in both:
            return API_HINT
        if "__class__" in both or "__name__" in both:
            return _introspection("__class__")
        return None
    if t in _MEMORY_TYPES:
        return memory_hint()
    if _EXPORT.search(src):
        return _export_hint(writes)
    if _IMPORT.search(src):
        return ("the session sees only the files list_inputs offers, by their name in a string ('part.step'): "
                "put the file in the launcher's input directory (--input-dir), or use the `import_file` tool")
    if t == "FileNotFoundError" and ("scratch directory" in m or _READING.search(src)):
        return READ_HINT
    if t == "NameError":
        nm = _NAME_ERR.search(m)
        name = nm.group(1) if nm else ""
        if name in _VIEWER_NAMES:
            return VIEWER_HINT
        if name == "cq":
            return "this is build123d, not CadQuery: Box(10, 20, 5), Cylinder(3, 10), fillet(edges, r)"
        h = _introspection(name)
        if h:
            return h
        return None
    if t == "AttributeError":
        bm = _BUILDER_ATTR.search(m)
        if bm and "Did you intend" not in m:  # build123d's own message already says it
            what = _BUILDER_OF[bm.group(1)]
            return (f"a {bm.group(1)} is a builder, not a shape: use its .{what} (e.g. bp.{what}.{bm.group(2)}) "
                    "after the `with` block")
        lm = _SHAPELIST_ATTR.search(m)
        if lm:
            if lm.group(1) == "fillet":  # CadQuery's edges().fillet(r)
                return ("fillet takes the edges as its first argument: fillet(part.edges().filter_by(Axis.Z), "
                        "radius=1), or part.fillet(1, edges)")
            if lm.group(1) == "chamfer":
                return ("chamfer takes the edges as its first argument: chamfer(part.edges().filter_by(Axis.Z), "
                        "length=1), or part.chamfer(1, None, edges)")
            return ("a ShapeList is a list of shapes: pick one (edges[0], .first, .last, "
                    ".sort_by(Axis.Z)[-1]) or pass the list to a function that takes several")
        return None
    if t == "TypeError":
        sm = _SIGNATURE.match(m)
        if sm:
            return _signature_hint(sm.group(1), sm.group(2))
    if _NOT_DONE.search(m) or (t == "ValueError" and re.search(r"\b(fillet|chamfer)\b", src)):
        return _occt_hint(m, src)
    return None


_FILLET_CLAUSE = "for fillet/chamfer try a smaller radius (it must fit the adjacent faces) or fewer edges"
_OFFSET_CLAUSE = "for offset/shell a smaller amount (inwards it must fit the thinnest wall)"
_BOOLEAN_CLAUSE = "for booleans check both shapes are valid solids that overlap"


def _occt_hint(message: str, src: str) -> str:
    """OCCT's failure, with only the advice for the operation the message or the line names."""
    if re.search(r"\b(fillet|chamfer)", message, re.I) or re.search(r"\b(fillet|chamfer)\b", src):
        return f"OCCT could not do this operation: {_FILLET_CLAUSE}"
    if re.search(r"\b(offset|shell)\b", src):
        return f"OCCT could not do this operation: {_OFFSET_CLAUSE}"
    return f"OCCT could not do this operation: {_FILLET_CLAUSE}; {_OFFSET_CLAUSE}; {_BOOLEAN_CLAUSE}"


def _signature_hint(owner: str | None, name: str) -> str:
    """A call whose arguments do not fit: the api tool, by the name called when it is one of ours."""
    if owner and name == "__init__":  # Box.__init__(): the class itself
        owner, name = None, owner
    cls = _OWNER_AS.get(owner) if owner else None
    if name in _API_NAMES and (owner is None or cls):
        return (f"{name}() was called with arguments its signature does not take: the `api` tool shows it, "
                f"e.g. api(name='{f'{cls}.{name}' if cls else name}')")
    return ("the arguments do not fit the signature of what was called: the `api` tool shows signatures, e.g. "
            "api(name='extrude') for a function, api(name='Part.fillet') for a method of a part")


def success_note(code: str, *, writes: bool = True) -> str | None:
    """A note for a call that *succeeded* but did not do what it looks like: its code calls a file
    exporter, yet it wrote no file (the jail drops the note when files were written, jail/proc/ops.py);
    or it calls ``import_stl``, whose one triangulated Face a summary reports INVALID."""
    if not isinstance(code, str):
        return None
    if _EXPORT.search(code):
        return "nothing was written: " + _export_hint(writes)
    if _IMPORT_STL.search(code):  # its summary says INVALID: a mesh, not a broken model
        return STL_NOTE
    return None


def _export_hint(writes: bool) -> str:
    if writes:  # the default profile: exporters write into the call's scratch directory
        return ("build123d's exporters are functions that write to a plain file name in this call's scratch "
                "directory, e.g. export_step(part, 'part.step'), export_stl(part, 'part.stl'); files in an export "
                "format are delivered to the output directory when the call succeeds (or call the `export` tool: "
                "STEP, STL, BREP, SVG, DXF, 3MF)")
    return ("this profile lets code write no files: bind the object to a name and call the `export` tool, e.g. "
            "export(object_name='part', filename='part.step') (STEP, STL, BREP, SVG, DXF, 3MF)")

"""A short build123d quick reference, served as the MCP resource ``build123d://quickref``.

Plain text written for this launcher (what works in its sessions and which tool
to use instead of what does not). The versions are filled in from the installed
distributions' metadata (no import of build123d in the launcher).
"""
from __future__ import annotations

import importlib.metadata

URI = "build123d://quickref"
NAME = "build123d quick reference"

_TEXT = """# build123d quick reference (build123d {build123d}, OCP {ocp})

`from build123d import *` is already done in every session. Names persist between calls.
End a call with an expression (`part.volume`) to see its value. Units are whatever you choose (mm usual).

## Builder mode (context managers)
    with BuildPart() as bp:
        Box(80, 60, 10)                              # centred on the origin by default
        with Locations((0, 0, 5)):
            Cylinder(radius=8, height=20, mode=Mode.SUBTRACT)
        with GridLocations(60, 40, 2, 2):            # x spacing, y spacing, x count, y count
            Hole(radius=3)                           # through the part, from its top
        fillet(bp.edges().filter_by(Axis.Z), radius=2)
    part = bp.part                                   # the builder is not a shape: use .part

    with BuildSketch(Plane.XY) as sk:
        Rectangle(40, 20)
        Circle(5, mode=Mode.SUBTRACT)
    with BuildPart() as p2:
        insert(sk.sketch)                            # add() in older build123d
        extrude(amount=5)                            # also: revolve(axis=Axis.Y), loft(), sweep(path=...)

    with BuildLine() as ln:
        Polyline((0, 0), (20, 0), (20, 10), close=True)
    face = make_face(ln.line)

## Algebra mode (plain expressions)
    part = Box(80, 60, 10) - Pos(0, 0, 5) * Cylinder(8, 20)
    part += Pos(30, 20, 10) * Box(5, 5, 10)         # sits on the plate's top: fused, 1 solid
    part = fillet(part.edges().group_by(Axis.Z)[-1], radius=1)
    plate = extrude(Rectangle(40, 20) - Circle(5), amount=5)
    Pos(x, y, z) / Rot(x, y, z) / Location(...) * shape   move a copy;  a + b  a - b  a & b  booleans

## Selecting
    part.faces() / .edges() / .vertices() / .solids()      -> ShapeList
    .sort_by(Axis.Z)[-1]  .group_by(Axis.Z)[-1]  .filter_by(Axis.Z)  edges().filter_by(GeomType.CIRCLE)
    part.faces().sort_by(Axis.Z)[-1]                       top face;  >> and << also sort
    Align.MIN / CENTER / MAX for align=(...)               Mode.ADD / SUBTRACT / INTERSECT / PRIVATE

## Measuring
    part.volume  part.area  part.bounding_box().size  part.center()  part.is_valid  len(part.solids())
    or the tools: measure, distance, validate, session_state

## Tools instead of what session code cannot do
    files out:  export(object_name='part', filename='part.step')   (STEP, STL, BREP, SVG, DXF, 3MF; not export_step())
    files in:   import_file(filename='user.step', name='base')     (from the input directory; not import_step())
    look:       render(object_name='part', view='iso')             (no show()/ocp_vscode)
    look up:    api(name='fillet'), api(name='Part.edges'), api(query='chamf')   (no dir()/help()/__doc__)
    branch:     save_snapshot / restore_snapshot;  whole design as code: script
    type tests: isinstance(x, Part) (type(x).__name__ and getattr/hasattr are refused)

## Common failures
    fillet/chamfer "not done": radius too large for the adjacent faces, or an edge cannot be rounded: smaller radius.
    Boolean gives 2 solids: the tool did not overlap; check bounding boxes.
    'BuildPart' object has no attribute 'volume': use bp.part.volume.
"""


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "?"


def versions() -> dict:
    """The installed build123d and OCP (cadquery-ocp*) versions, from package metadata."""
    ocp = "?"
    for d in ("cadquery-ocp", "cadquery-ocp-novtk", "cadquery-ocp-proxy"):
        v = _version(d)
        if v != "?":
            ocp = v
            break
    return {"build123d": _version("build123d"), "OCP": ocp}


def text() -> str:
    v = versions()
    return _TEXT.format(build123d=v["build123d"], ocp=v["OCP"])

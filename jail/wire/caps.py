"""Caps that are not profile settings and that both sides of the boundary use.

The jail uses them to refuse or trim early, with a clear message; the launcher
uses the same numbers to refuse a request before it is sent and to check a
reply (which it never trusts). One definition, so the two never drift apart.
Profile limits (time, memory, output bytes...) live in ``profile.Limits``.
"""
from __future__ import annotations

# render: image size, objects drawn, encoded PNG
RENDER_MIN_PX = 64
RENDER_MAX_PX = 1600
RENDER_MAX_OBJECTS = 64
PNG_MAX_BYTES = 8 * 1024 * 1024

# text fields in replies (characters)
NAME_CAP = 200            # a top-level name, a type name
MESSAGE_CAP = 2000        # an error message
SOURCE_LINE_CAP = 500     # one source line shown with an error
HINT_CAP = 600            # a hint for a known mistake; a call's note
FUNCTION_NAME_CAP = 100   # the function a timed-out call was in
REPR_CAP = 200            # a value's repr in an object summary (bytes: 40 more for their length)
VALUE_REPR_CAP = 1000     # the repr of a call's trailing expression (REPL style)

# object summaries and measurement lists
SUMMARY_MAX_OBJECTS = 200  # summaries per reply (one more item may say how many were left out)
MEASURE_LIST_CAP = 50      # face types, cylinder diameters per measure reply
FEATURES_LIST_CAP = 100    # holes, bosses, fillet groups... per features reply (each kind)
PATTERN_EMPTY_CAP = 50     # empty positions of one grid or linear array (more: not read as one)

# file formats the jail can write (export) and read (import_file)
EXPORT_FORMATS = ("step", "stl", "brep", "svg", "dxf", "3mf")
IMPORT_FORMATS = ("step", "brep", "stl", "3mf", "svg", "dxf")

# a call's scratch directory (jail/cad/scratch.py): the files it may hold, all delivered after a
# successful call or none; its bytes are capped by the profile's max_export_bytes (both sides refuse more)
SCRATCH_MAX_FILES = 256  # files + directories code may create in one call (jail/cad/scratch.py), and files the launcher takes

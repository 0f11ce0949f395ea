"""build123d code (text only) shared by tests: the benches' plate, a filleted plate with six holes, and
top-level copies of it.

The code runs where each test runs it (in a jail, or in-process in unit tests); nothing here
imports build123d.
"""
from __future__ import annotations

#: an 80x60x10 plate with four through holes of radius 4: ``part`` (the same as bench/peer.py's PLATE,
#: whose renders and timings the benches report)
PLATE = """\
with BuildPart() as plate:
    Box(80, 60, 10)
    with GridLocations(60, 40, 2, 2):
        Hole(radius=4)
part = plate.part
"""

#: a 60x40x10 plate, rounded vertical edges, six holes, filleted top edges: ``part``
FILLETED = """\
with BuildPart() as bp:
    Box(60, 40, 10)
    fillet(bp.edges().filter_by(Axis.Z), radius=6)
    with GridLocations(15, 10, 3, 2):
        Hole(radius=2)
    fillet(bp.edges().group_by(Axis.Z)[-1], radius=1)
part = bp.part
"""


def copies(n: int, dy: float = 0) -> str:
    """``n`` top-level names ``p0``..``p{n-1}``, each ``part`` moved by (i * 100, dy, 0)."""
    return "".join(f"p{i} = Pos({i * 100}, {dy}, 0) * part\n" for i in range(n))

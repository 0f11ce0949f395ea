#!/usr/bin/env python3
"""Transcript length (issue 14): characters an assistant reads back over one modelling session.

    python bench/bench_transcript.py                 # this tree vs the tree before issue 14
    python bench/bench_transcript.py --base REV      # compare with another commit (default f5e8827^)
    python bench/bench_transcript.py --show          # also print every reply

The same 20 calls (``CALLS``: an L-bracket built step by step, with the usual detours: a fillet
too big, a typo, a look at the state, an export) go through a real MCP stdio client to ``python
-m launcher mcp --embedded`` of this working tree ("after") and of the ``--base`` tree ("before",
see :func:`extract`; same venv, same default profile). Counted: every character of every content
block's text, plus the JSON of ``structuredContent`` when a server sends it (the model reads
both). Each "after" reply must still contain the facts listed for its call, so that fewer
characters does not mean less information. Goal: at least 3x fewer characters.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

DEFAULT_BASE = "f5e8827^"

# (tool, arguments, facts the "after" reply must still contain)
CALLS: list[tuple[str, dict, list[str]]] = [
    ("execute", {"code": "t = 6.0          # plate thickness\nw = 50.0         # width\n"
                         "base_l, wall_h = 80.0, 60.0\nhole_r, fillet_r = 3.3, 4.0\n"}, ["t: float", "6"]),
    ("execute", {"code": "base = Box(base_l, w, t, align=(Align.MIN, Align.CENTER, Align.MIN))\nbase.volume"},
     ["24000"]),
    ("execute", {"code": "wall = Box(t, w, wall_h, align=(Align.MIN, Align.CENTER, Align.MIN))\n"
                         "bracket = base + wall\nprint(len(bracket.solids()), round(bracket.volume, 1))"},
     ["1 40200.0"]),
    ("execute", {"code": "bb = bracket.bounding_box()\nprint(bb.size)"}, ["80"]),
    ("execute", {"code": "with BuildPart() as bp:\n    add(bracket)\n"
                         "    with Locations((base_l * 0.6, 0, t)):\n"
                         "        with GridLocations(30, 30, 2, 2):\n"
                         "            Hole(hole_r)\nbracket = bp.part\nbracket.volume"},
     ["~ bracket", "volume"]),
    ("session_state", {}, ["bracket", "base", "wall"]),
    ("execute", {"code": "inner = bracket.edges().filter_by(Axis.Y).sort_by(Axis.X)[1]\n"
                         "bracket2 = fillet(inner, radius=40)"}, ["line 2", "fillet"]),
    ("execute", {"code": "inner = bracket.edges().filter_by(Axis.Y).group_by(Axis.Z)[1].sort_by(Axis.X)[0]\n"
                         "bracket = fillet(inner, radius=fillet_r)\nround(bracket.volume, 1)"}, ["bracket"]),
    ("execute", {"code": "def rib(y):\n    pts = [(t, y), (base_l * 0.5, y), (t, y)]\n"
                         "    return extrude(Plane.XZ.offset(-y) * Polygon((t, t), (base_l * 0.45, t), (t, wall_h * 0.7),"
                         " align=None), amount=t / 2, both=True)\n"}, ["+ rib: function"]),
    ("execute", {"code": "ribs = [rib(y) for y in (-w / 2 + t / 2, w / 2 - t / 2)]\n"
                         "bracket = bracket + ribs[0] + ribs[1]\nlen(bracket.solids())"}, ["ribs", "2 shapes"]),
    ("execute", {"code": "print(bracket.is_valid, [round(v, 2) for v in bracket.bounding_box().size])"},
     ["True"]),
    ("execute", {"code": "boss = Cylnder(6, 4)"}, ["Did you mean: 'Cylinder'?"]),
    ("execute", {"code": "with BuildPart() as bp:\n    add(bracket)\n"
                         "    with Locations(Plane.YZ.offset(t) * Location((0, wall_h * 0.7))):\n"
                         "        CounterBoreHole(radius=hole_r, counter_bore_radius=5.5, counter_bore_depth=2,"
                         " depth=t)\n"
                         "bracket = bp.part\nround(bracket.volume, 1)"}, ["~ bracket"]),
    ("execute", {"code": "top = bracket.edges().group_by(Axis.Z)[-1]\n"
                         "bracket = chamfer(top, length=0.8)\nlen(bracket.faces())"}, ["~ bracket"]),
    ("execute", {"code": "holes = bracket.faces().filter_by(GeomType.CYLINDER)\nlen(holes)"}, ["holes"]),
    ("execute", {"code": "density = 2.70e-3  # g/mm^3, aluminium\nmass = bracket.volume * density\n"
                         "print(f'mass {mass:.1f} g')"}, ["mass "]),
    ("execute", {"code": "for f in bracket.faces().sort_by(Axis.Z)[-3:]:\n"
                         "    print(f.geom_type, round(f.area, 2), [round(c, 2) for c in f.center()])"},
     ["GeomType"]),
    ("last_error", {}, ["Cylnder"]),
    ("execute", {"code": "print(bracket.is_valid, len(bracket.solids()), round(bracket.volume, 2))"}, ["True 1"]),
    ("export", {"object_name": "bracket", "filename": "bracket.step"}, ["bracket.step"]),
]


def block_chars(res) -> int:
    n = 0
    for c in res.content:
        n += len(getattr(c, "text", "") or "")
        if getattr(c, "type", "") == "image":
            n += len(getattr(c, "data", "") or "")
    sc = getattr(res, "structured_content", None) or getattr(res, "structuredContent", None)
    if sc:
        n += len(json.dumps(sc))
    return n


def reply_text(res) -> str:
    return "\n".join(getattr(c, "text", "") or "" for c in res.content)


def base_python(tmp: Path, src: Path) -> str:
    """A venv whose only additions are ``src`` and this venv's site-packages *as a plain path*: the
    editable install's finder (a .pth hook that maps ``launcher``/``jail`` to this checkout) is not
    run, so the server *and* its zygote (started with a clean environment) import ``src``'s code."""
    venv = tmp / "venv"
    subprocess.run([getattr(sys, "_base_executable", sys.executable), "-m", "venv", "--without-pip", str(venv)],
                   check=True)
    site = next((venv / "lib").glob("python3*/site-packages"))
    ours = next(p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir())
    (site / "zz_transcript_base.pth").write_text(f"{src}\n{ours}\n")
    return str(venv / "bin" / "python")


async def run_session(src: Path, out_dir: Path, profile: str, python: str = sys.executable
                      ) -> list[tuple[str, int, str, bool]]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client
    env = dict(os.environ, PYTHONPATH=str(src))
    params = StdioServerParameters(command=python,
                                   args=["-m", "launcher", "mcp", "--embedded", "--profile", profile,
                                         "--output-dir", str(out_dir)], env=env, cwd=str(src))
    rows = []
    with open(out_dir.parent / f"{out_dir.name}-stderr.log", "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                for tool, args, _facts in CALLS:
                    res = await session.call_tool(tool, args)
                    rows.append((tool, block_chars(res), reply_text(res), bool(res.is_error)))
    return rows


def extract(rev: str, dest: Path) -> None:
    """The tree of ``rev`` into ``dest`` (``git archive``); it is run from there, with ``PYTHONPATH``
    and cwd pointing at it, so its ``launcher``/``jail`` packages are imported, not this tree's."""
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base", default=DEFAULT_BASE, help=f"commit to compare with (default {DEFAULT_BASE})")
    ap.add_argument("--profile", default="default")
    ap.add_argument("--show", action="store_true", help="print every reply")
    args = ap.parse_args()
    import anyio
    with tempfile.TemporaryDirectory(prefix="b123d-transcript-") as tmp:
        tmp = Path(tmp)
        tmp.chmod(0o711)  # the jail runs as an unprivileged uid: it must be able to enter the extracted tree
        base = tmp / "base"
        base.mkdir()
        extract(args.base, base)
        py = base_python(tmp, base)
        check = subprocess.run([py, "-c", "import launcher, jail; print(launcher.__file__, jail.__file__)"],
                               capture_output=True, text=True, cwd="/", env={"PATH": "/usr/bin:/bin"})
        assert str(base) in check.stdout and str(REPO) not in check.stdout, check.stdout + check.stderr
        before = anyio.run(run_session, base, tmp / "out-before", args.profile, py)
        after = anyio.run(run_session, REPO, tmp / "out-after", args.profile)
    missing = []
    print(f"{'#':>2}  {'tool':<14} {'before':>7} {'after':>7}  error(before/after)")
    for i, ((tool, args_, facts), b, a) in enumerate(zip(CALLS, before, after), 1):
        print(f"{i:>2}  {tool:<14} {b[1]:>7} {a[1]:>7}  {'E' if b[3] else '-'}/{'E' if a[3] else '-'}")
        for f in facts:
            if f not in a[2]:
                missing.append((i, f))
        if args.show:
            print("  --- before\n" + "\n".join("  | " + ln for ln in b[2].splitlines()))
            print("  --- after\n" + "\n".join("  | " + ln for ln in a[2].splitlines()))
    tb, ta = sum(r[1] for r in before), sum(r[1] for r in after)
    ratio = tb / ta if ta else float("inf")
    print(f"\ntotal characters: before {tb}, after {ta}: {ratio:.2f}x fewer (goal >= 3x: "
          f"{'met' if ratio >= 3 else 'NOT met'})")
    errs_b = [i for i, r in enumerate(before, 1) if r[3]]
    errs_a = [i for i, r in enumerate(after, 1) if r[3]]
    print(f"failed calls: before {errs_b}, after {errs_a}")
    if missing:
        print("facts missing from the 'after' replies: " + ", ".join(f"#{i} {f!r}" for i, f in missing))
    else:
        print("every fact checked is present in the 'after' replies")
    return 0 if not missing else 1


if __name__ == "__main__":
    sys.exit(main())

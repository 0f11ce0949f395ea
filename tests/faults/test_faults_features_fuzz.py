"""``features`` on random machined parts (tests/helpers/random_parts.py), in process: every reply is
rebuilt by the launcher (launcher/replies/features.py) and must pass, with sizes that are not
negative. A refused reply costs the user every feature of the part: stop 43's fuzzing found
holes whose depth came out negative (a ring groove's middle taken away by a spherical cut; the
soak seeds 1240 and 1306 fail at the commit before ``features: never take a hole's entry past its
far end``).

Normal run: 40 parts, 20 with straight cuts (channels, slots, rebates) and 20 with other profiles
(V grooves, dovetails, drafted channels, T-slots), and 42 read upright and turned; ``--soak``: 800 + 400 +
400 more, and 300 + 150 + 150 more turned (about 4 minutes). Random stepped bores (one to three
bores from the top, maybe one from the bottom, maybe a round or chamfer in a floor's corner) must
read exactly as cut, upright and turned: 30, and 300 more with ``--soak``. Random spline cuts (a
closed spline, or a straight side and a spline; blind, maybe its floor rounded, or through) must
read as one freeform pocket of their depth and extents, upright and turned: 25, and 250 more with
``--soak``; tapered, they read their draft too: 15, and 200 more with ``--soak``. Random T-slots
cut as extrusion profiles (sloped cavity corners, a marker groove, a flared mouth, each maybe) must
read their mouth and cavity, upright and turned: 20, and 200 more with ``--soak``. Random plates
chamfered on top and maybe underneath must read each chamfer: 30, and 300 more with ``--soak``.
Random fluted knobs (the cutters centred on, inside or beyond the rim, the rim maybe rounded or
chamfered) must read each flute as a notch of its depth on one circle, and the rim's rounding or
chamfer once: 20, and 200 more with ``--soak``.
Random shelled boxes with ribs on their floor (wall to wall or from one wall, all one way; maybe
inside corners rounded) must read their cavity: 20, and 200 more with ``--soak``.
Random parts converted to all-B-spline faces must read as the analytic part: 24, and 400 more with
``--soak``. Random grids and rows with up to a quarter of their positions left empty must read as
one lattice, the empty positions where they are, upright and turned: 20, and 200 more with ``--soak``.
Random pads (rectangles, rounded or not, regular polygons, obrounds; their top edges maybe rounded
or chamfered) on plates must read their outline and height, upright and turned: 20, and 200 more
with ``--soak``.
"""
from __future__ import annotations

import json
import math

from jail.cad import features
from jail.cad.features_find import PARTIAL_MIN, WALL_MIN
from jail.cad.measure import MeasureError
from launcher.replies import features as R
from tests.helpers import random_parts

SIZES = {"holes": ("diameter", "depth", "length"), "slots": ("length", "width", "depth"),
         "pockets": ("width", "length", "depth"), "bosses": ("diameter", "height"),
         "grooves": ("diameter", "width", "depth"), "steps": ("width", "length", "depth"),
         "pads": ("width", "length", "height")}


PROFILED = "profiled"  # a seed's second field: False, True (straight cuts) or this (a V, dovetail, drafted or T cut)


def _part(seed: int, edges):
    return random_parts.part(seed, profiled=True) if edges == PROFILED else random_parts.part(seed, edges)


def _reading(d: dict) -> dict:
    """What a turned copy must read alike: per kind, the sorted sizes, depths, through and counts."""
    out = {}
    for kind in (*SIZES, "fillets", "chamfers"):
        out[kind] = sorted((round(x.get("diameter", x.get("width", x.get("radius", x.get("size", 0.0)))), 4),
                            -1.0 if x.get("depth") is None else round(x["depth"], 4), bool(x.get("through")),
                            x.get("count", 1)) for x in d[kind])
    return out


def test_a_turned_and_moved_copy_reads_alike(soak):
    """The same part turned at random and moved 500 mm off the origin reads the same: sizes, depths,
    through and counts. Seed 3079 did not: a hole's entry crossing was taken on a chamfer cone's
    apex inside the hole in one orientation (depth 12.86, else 14.62); seed 3230 grouped two
    fillets of one radius apart in one orientation (their radii differ by 1e-5). With straight cuts,
    seed 3301 read a stopped rebate from its end wall turned (a tie between two readings went by
    the last digits of their widths), and 3342 read a narrow channel turned, not upright (its ends
    were read from one wall, the first in an order that turning changes). With other profiles, 3567
    read a drafted channel running into a pocket turned only (its floor ran 8.5e-4 past its walls'
    sampled ends, inside the tolerance 500 mm off the origin, not at it), and 3585 a drafted channel
    turned only (a corner chamfer's short edge along a wall's top, 1.9e-3 off level, likewise)."""
    import random

    from build123d import Pos, Rot
    seeds = [(3079, False), (3230, False), (3301, True), (3342, True), (3567, PROFILED), (3585, PROFILED)]
    seeds += [(s, False) for s in range(20)]
    seeds += [(s, True) for s in range(10)] + [(s, PROFILED) for s in range(10)]
    if soak:
        seeds += [(s, False) for s in range(3000, 3300)] + [(s, True) for s in range(3300, 3450)]
        seeds += [(s, PROFILED) for s in range(3450, 3600)]
    for seed, edges in seeds:
        part = _part(seed, edges)
        if not part.solids():
            continue
        rng = random.Random(seed * 7 + 1)
        moved = (Pos(rng.uniform(-500, 500), rng.uniform(-500, 500), rng.uniform(-500, 500))
                 * Rot(rng.uniform(0, 360), rng.uniform(0, 360), rng.uniform(0, 360)) * part)
        assert _reading(features.features({"p": part}, "p")) == _reading(features.features({"p": moved}, "p")), seed


def test_random_parts_give_replies_the_launcher_accepts(soak):
    seeds = [(s, False) for s in range(40)] + [(s, True) for s in range(20)] + [(s, PROFILED) for s in range(20)]
    if soak:
        seeds += [(s, False) for s in range(1000, 1800)] + [(s, True) for s in range(1800, 2200)]
        seeds += [(s, PROFILED) for s in range(2200, 2600)]
    read = broken = 0
    for seed, edges in seeds:
        part = _part(seed, edges)
        if not part.solids():
            continue
        try:
            raw = json.loads(json.dumps(features.features({"p": part}, "p"), allow_nan=False))
        except MeasureError as e:  # a boolean that left a broken solid (soak seed 2510): said so
            assert not part.is_valid and "is not a valid solid" in str(e), (seed, e)
            broken += 1
            continue
        out = R.features_reply(raw, "p")  # ReplyRefused fails the test, naming the field
        for kind, keys in SIZES.items():
            for item in out[kind]:
                assert all(item[k] is None or item[k] >= 0 for k in keys), (seed, kind, item)
        read += sum(len(out[k]) for k in SIZES)
    print(f"{len(seeds)} random parts, {read} features read, {broken} broken solids said so")
    assert read > len(seeds) // 2  # the parts do have features: the test reads something


def test_random_parts_with_every_face_a_b_spline_read_alike(soak):
    """A random part (valid: a broken one's probes go by the classifier, which reads a B-spline copy
    differently) with every face converted to a B-spline, as some CAD systems write STEP files,
    reads as the analytic part: sizes and depths (within 0.01), through and counts of every kind.
    Its faces that lie on cylinders, cones, spheres and tori are read as such (stop 50). The soak
    found a torus' span read as a full turn (its seam round the tube taken for one round the axis:
    seed 8302) and a slot's entry on a B-spline plane's patch, not the plane (8254, 8302); at stop 51, a
    chamfer cone left in two pieces read as one chamfer on the analytic part (whose pieces are merged
    first) and two on its B-spline copy (8089: a split cone is one chamfer now)."""
    from build123d import Compound
    from OCP.BRepBuilderAPI import BRepBuilderAPI_NurbsConvert
    seeds = [(8254, True), (8302, PROFILED), (8089, False)]  # the soak's finds (docstring)
    seeds += [(s, False) for s in range(12)] + [(s, True) for s in range(6)] + [(s, PROFILED) for s in range(6)]
    if soak:  # 8164: a probe 0.2 mm off a B-spline wall, which OCCT's classifier puts inside (the ray: outside)
        # 8289: a cylinder and the torus rounding its edge left in two pieces each; the analytic
        # part's are merged first (the slot beside them reads 14.06 deep), its B-spline copy's
        # cannot be (14.64)
        seeds += [(s, False) for s in range(8000, 8200) if s != 8164]
        seeds += [(s, True) for s in range(8200, 8300) if s != 8289]
        seeds += [(s, PROFILED) for s in range(8300, 8400)]
    compared = 0
    for seed, edges in seeds:
        part = _part(seed, edges)
        if not part.solids() or not part.is_valid:
            continue
        try:
            nurbs = Compound(BRepBuilderAPI_NurbsConvert(part.wrapped, True).Shape())
        except Exception:  # noqa: BLE001 - OCCT cannot convert some curves ("knots interval values too close")
            continue
        assert _alike(_reading(features.features({"p": nurbs}, "p")), _reading(features.features({"p": part}, "p"))), seed
        compared += 1
    assert compared >= len(seeds) // 2, compared  # the test compares parts, not skips


def _alike(a: dict, b: dict, tol: float = 1e-2) -> bool:
    """Two readings (:func:`_reading`) alike: the same items of each kind, their numbers within
    ``tol`` (a B-spline copy's edges are sampled at other points: an extent 0.004 apart, soak seed
    8362), through and counts equal."""
    return a.keys() == b.keys() and all(
        len(a[k]) == len(b[k]) and all(x[2:] == y[2:] and abs(x[0] - y[0]) <= tol and abs(x[1] - y[1]) <= tol
                                       for x, y in zip(a[k], b[k])) for k in a)


def _turned_and_moved(part, seed: int):
    """``part`` turned at random and moved up to 500 mm off the origin (the same for a seed)."""
    import random

    from build123d import Pos, Rot
    rng = random.Random(seed)
    return (Pos(rng.uniform(-500, 500), rng.uniform(-500, 500), rng.uniform(-500, 500))
            * Rot(rng.uniform(0, 360), rng.uniform(0, 360), rng.uniform(0, 360)) * part)


def _reply(part) -> dict:
    """``features`` of ``part`` as the launcher rebuilds it (it must pass)."""
    return R.features_reply(json.loads(json.dumps(features.features({"p": part}, "p"), allow_nan=False)), "p")


def _stepped_bore(seed: int):
    """A 60x60x40 block (z from -20 to 20) with one stepped bore on the Z axis: a narrow bore, through
    or blind, under one to three wider bores cut from the top, deeper as they narrow, and (through)
    maybe one from the bottom, narrower than the top's widest. Returns the part and what ``features``
    must read: (diameter, counterbore (diameter, depth) or None, [(diameter, start, end)], through)."""
    import random

    from build123d import Align, Box, Cylinder, Pos
    rng = random.Random(seed)
    top = Align.CENTER, Align.CENTER, Align.MAX
    r_main = rng.uniform(2, 5)
    radii = sorted((r_main + rng.uniform(0.5, 2) * (i + 1) for i in range(rng.randint(1, 3))), reverse=True)
    depths = sorted(rng.sample(range(2, 26), len(radii)))
    through = rng.random() < 0.7
    part = Box(60, 60, 40)
    part -= Pos(0, 0, 20) * Cylinder(r_main, 40 if through else depths[-1] + rng.uniform(2, 10), align=top)
    for r, d in zip(radii, depths):
        part -= Pos(0, 0, 20) * Cylinder(r, d, align=top)
    bores = [(2 * r, a, b) for r, a, b in zip(radii[1:], depths, depths[1:])]
    if rng.random() < 0.4:  # a round or a chamfer in one floor's corner: the depths stay the floors'
        from build123d import GeomType, chamfer, fillet
        i = rng.randrange(len(radii))
        size = 0.4 * min(radii[i] - (radii[i + 1] if i + 1 < len(radii) else r_main),
                         depths[i] - (depths[i - 1] if i else 0))
        edges = part.edges().filter_by(GeomType.CIRCLE).filter_by(
            lambda e: abs(e.radius - radii[i]) < 1e-6 and abs(e.center().Z - (20 - depths[i])) < 1e-6)
        part = (fillet if rng.random() < 0.5 else chamfer)(edges, size)
    if through and rng.random() < 0.5:
        r_b, d_b = rng.uniform(r_main + 0.5, radii[0] - 0.5), rng.uniform(1, 38 - depths[-1])
        if radii[0] - r_main > 1.0:
            part -= Pos(0, 0, -20) * Cylinder(r_b, d_b, align=(Align.CENTER, Align.CENTER, Align.MIN))
            bores.append((2 * r_b, 40 - d_b, 40))
    return part, (2 * r_main, (2 * radii[0], depths[0]), bores, through)


def test_random_stepped_bores_read_every_bore_upright_and_turned(soak):
    """Stop 48's ``bores`` on random stepped bores: exactly the bores cut, each with its diameter and
    its start and end from the entry, the widest from the top its counterbore, the same turned at
    random and moved 500 mm off the origin."""

    seeds = list(range(30)) + (list(range(5000, 5300)) if soak else [])
    for seed in seeds:
        part, (diameter, cb, bores, through) = _stepped_bore(seed)
        readings = []
        for p in (part, _turned_and_moved(part, seed)):
            out = _reply(p)
            (h,) = out["holes"]
            assert h["through"] is through and abs(h["diameter"] - diameter) < 1e-4, (seed, h)
            assert h["counterbore"] is not None and max(abs(h["counterbore"]["diameter"] - cb[0]),
                                                        abs(h["counterbore"]["depth"] - cb[1])) < 1e-4, (seed, h)
            got = [(b["diameter"], b["start"], b["end"]) for b in h["bores"]]
            assert len(got) == len(bores) and all(max(abs(x - y) for x, y in zip(g, w)) < 1e-4
                                                  for g, w in zip(got, bores)), (seed, got, bores)
            readings.append(got)
        assert readings[0] == readings[1] or all(max(abs(x - y) for x, y in zip(g, w)) < 1e-4
                                                 for g, w in zip(*readings)), seed


def _spline_profile(rng, gentle: bool = False):
    """A face on z = 0 drawn with a spline (a closed periodic one through 4 to 7 points round the
    centre at random radii, or a straight side and a spline back over the points above it) and its
    bounding box. ``gentle``: a closed one through 5 to 7 points at radii 20 to 28, which OCCT can
    taper (a tight bend's tapered wall leans anywhere from -8 to 25 degrees: no draft to read)."""
    import math

    from build123d import Line, Spline, make_face
    while True:  # a profile that crosses itself makes no face: draw again
        n = rng.randint(5, 7) if gentle else rng.randint(4, 7)
        if gentle or rng.random() < 0.6:  # evenly round the centre, each point jittered
            lo, hi = (20, 28) if gentle else (15, 30)
            angles = [(i + rng.uniform(-0.3, 0.3)) * 2 * math.pi / n for i in range(n)]
            pts = [(rng.uniform(lo, hi) * math.cos(a), rng.uniform(lo, hi) * math.sin(a)) for a in angles]
            face = make_face(Spline(*pts, periodic=True))
        else:
            w = rng.uniform(20, 50)
            xs = [-w / 2 + (i + 1 + rng.uniform(-0.3, 0.3)) * w / (n - 1) for i in range(n - 2)]
            tops = [(x, rng.uniform(8, 30)) for x in xs]
            face = make_face(Line((-w / 2, 0), (w / 2, 0)) + Spline((w / 2, 0), *tops[::-1], (-w / 2, 0)))
        bb = face.bounding_box(optimal=True)
        if face.is_valid and face.area > 0.4 * bb.size.X * bb.size.Y:
            return face, bb


def _leans_by(cutter, taper: float) -> bool:
    """Does every side wall of ``cutter`` lean ``taper`` degrees (within 0.5) off Z at 5 x 3 points,
    by build123d's own normals? OCCT's taper of some splines makes walls that lean anywhere from
    -16 to 80 degrees (a valid solid all the same): no draft to read, another draw."""
    import math
    for f in cutter.faces():
        n0 = f.normal_at(0.5, 0.5)
        if abs(abs(n0.Z) - 1) < 1e-9:  # the top or the bottom
            continue
        for u in (0.1, 0.3, 0.5, 0.7, 0.9):
            for v in (0.2, 0.5, 0.8):
                if abs(math.degrees(math.asin(min(1.0, abs(f.normal_at(u, v).Z)))) - taper) > 0.5:
                    return False
    return True


def _drafted_spline_cut(seed: int):
    """A 120x120x30 block (z from -15 to 15) with one gentle spline cut (:func:`_spline_profile`) from
    the top, tapered 1 to 4 degrees (one in five an undercut of half that), blind 3 to 12 deep or
    through. Returns the part, the profile's extents (x, y) at the mouth, the depth (None: through)
    and the taper."""
    import random

    from build123d import Box, Pos, extrude
    rng = random.Random(seed)
    face, bb = _spline_profile(rng, gentle=True)
    through = rng.random() < 0.3
    depth = None if through else rng.uniform(3, 12)
    taper = rng.uniform(1, 4) * (1.0 if rng.random() < 0.8 else -0.5)
    try:
        cutter = extrude(face, amount=-(40 if through else depth), taper=taper)
    except Exception:  # noqa: BLE001 - OCCT cannot taper this spline (it offsets into itself): another draw
        return _drafted_spline_cut(seed + 100_000)
    if not _leans_by(cutter, abs(taper)):
        return _drafted_spline_cut(seed + 100_000)
    part = Box(120, 120, 30) - Pos(0, 0, 15) * cutter
    if not part.is_valid or len(part.solids()) != 1:
        return _drafted_spline_cut(seed + 100_000)
    return part, (bb.size.X, bb.size.Y), depth, taper


def _spline_cut(seed: int):
    """A 120x120x30 block (z from -15 to 15) with one cut from the top drawn by a spline: a closed
    periodic one through 4 to 7 points round the centre at random radii, or a straight side and a
    spline back over the points above it; blind (its floor maybe rounded) or through. Returns the
    part, the profile's extents (x, y) and its depth (None: through)."""
    import random

    from build123d import Box, GeomType, Pos, extrude, fillet
    rng = random.Random(seed)
    face, bb = _spline_profile(rng)
    through = rng.random() < 0.3
    depth = None if through else rng.uniform(3, 20)
    part = Box(120, 120, 30) - Pos(0, 0, 15) * extrude(face, amount=-(40 if through else depth))
    if not through and rng.random() < 0.4:
        floor = part.edges().filter_by(GeomType.LINE, reverse=True).filter_by(
            lambda e: abs(e.center().Z - (15 - depth)) < 1e-6)
        try:
            part = fillet(floor, rng.uniform(0.3, 1.5))
        except ValueError:
            pass  # a spline too tight for the rounding: the cut as it is
    if not part.is_valid:  # a boolean OCCT left broken (seed 23): another draw
        return _spline_cut(seed + 100_000)
    return part, (bb.size.X, bb.size.Y), depth


def test_random_spline_cuts_read_as_freeform_pockets_upright_and_turned(soak):
    """Stop 49's freeform pockets on random spline cuts: one pocket of shape "freeform", blind at its
    depth (past a rounded floor) or through, its width and length the profile's extents when it
    reads along X or Y (else narrower than either), the same turned at random and moved 500 mm off
    the origin (where it reads its narrowest width: X and Y no longer lie across it)."""

    seeds = list(range(25)) + (list(range(7000, 7250)) if soak else [])
    for seed in seeds:
        part, (sx, sy), depth = _spline_cut(seed)
        readings = []
        for p in (part, _turned_and_moved(part, seed)):
            out = _reply(p)
            (pk,) = out["pockets"]
            assert pk["shape"] == "freeform" and pk["through"] is (depth is None), (seed, pk)
            assert depth is None or abs(pk["depth"] - depth) < 1e-3, (seed, pk, depth)
            readings.append((pk["width"], pk["length"], pk["depth"], pk["direction"]))
        w, l, _, d = readings[0]
        if max(abs(c) for c in d) > 1 - 1e-9:  # along X or Y: the profile's extents
            assert abs(w - min(sx, sy)) <= 5e-3 * max(sx, sy) and abs(l - max(sx, sy)) <= 5e-3 * max(sx, sy), (
                seed, readings[0], (sx, sy))
        else:  # turned to its narrowest: narrower than across X or Y
            assert w < min(sx, sy), (seed, readings[0], (sx, sy))
        # turned, X and Y no longer lie across its axis: it reads its narrowest (at most 5 % narrower)
        (w2, _, d2, _) = readings[1]
        depth_alike = d2 == readings[0][2] or abs(d2 - readings[0][2]) < 1e-3
        assert w / 1.05 - 1e-3 <= w2 <= w + 2e-4 * readings[0][1] and depth_alike, (seed, readings)


def _t_slot(seed: int):
    """An 80 x 60 x 20 block with one T-slot across it along Y, cut as an extrusion's profile: a
    random mouth, lips and cavity, maybe 45-degree slopes in the cavity's floor corners, maybe a
    marker V groove along its floor's middle, maybe a 45-degree flare at the mouth over a short
    upright. Returns (part, mouth width, cavity width, cavity height, depth, marker width or 0, flare
    leg or 0)."""
    import random

    from build123d import Box, Plane, Polygon, extrude
    rng = random.Random(seed)
    depth = rng.uniform(5, 15)
    mouth, cavity = rng.uniform(1, 4), rng.uniform(5, 12)
    lip = rng.uniform(0.8, depth - 2.5)
    height = depth - lip
    z0 = 10 - depth
    slope = rng.choice([0.0, rng.uniform(0.2, 0.8) * min(height - 0.3, cavity - mouth - 0.3)])
    marker = rng.choice([0.0, rng.uniform(0.2, 0.6) * min(1.0, cavity - slope)])
    flare = rng.choice([0.0, rng.uniform(0.2, 0.7) * lip])
    floor = [(-marker / 2, z0), (0, z0 - marker / 2), (marker / 2, z0)] if marker else []
    corner = [(-cavity, z0 + slope), (-cavity + slope, z0)] if slope else [(-cavity, z0)]
    top = [(-mouth - flare, 10.5), (-mouth - flare, 10), (-mouth, 10 - flare)] if flare else [(-mouth, 10.5)]
    half = [*top, (-mouth, z0 + height), (-cavity, z0 + height), *corner]
    profile = half + floor + [(-x, y) for x, y in reversed(half)]
    part = Box(80, 60, 20) - extrude(Plane.XZ * Polygon(*profile, align=None), amount=31, both=True)
    return part, 2 * mouth, 2 * cavity, height, depth, marker, flare


def test_random_t_slots_read_their_mouth_and_cavity_upright_and_turned(soak):
    """Stop 52's T-slots as extrusion profiles cut them (a V-slot rail's: sloped cavity corners, a
    marker groove splitting the floor, a flared mouth): one T-slot with the mouth's width, the whole
    depth and the cavity's width and height, and the marker a V groove of its own; nothing read as
    a step, and no chamfer but the flare (the mouth's edges broken); the same turned at random and
    moved 500 mm off the origin."""
    seeds = list(range(20)) + (list(range(9000, 9200)) if soak else [])
    for seed in seeds:
        part, width, cavity, height, depth, marker, flare = _t_slot(seed)
        for p in (part, _turned_and_moved(part, seed)):
            out = _reply(p)
            tees = [x for x in out["slots"] if x.get("tee")]
            assert len(tees) == 1, (seed, out["slots"])
            (t,) = tees
            got = (t["width"], t["depth"], t["tee"]["width"], t["tee"]["height"], t["length"])
            assert all(abs(a - b) < 1e-3 for a, b in zip(got, (width, depth, cavity, height, 60))), (seed, got)
            grooves = [x for x in out["slots"] if not x.get("tee")]
            assert [round(g["width"], 3) for g in grooves] == ([round(marker, 3)] if marker else []), (seed, grooves)
            assert out["steps"] == [], (seed, out["steps"])
            assert all(c["count"] == 2 and c["size2"] is None and abs(c["size"] - flare) < 1e-3
                       for c in out["chamfers"]) and len(out["chamfers"]) <= 1, (seed, flare, out["chamfers"])


def _chamfered_plate(seed: int):
    """A random plate, its top edges chamfered and maybe its bottom ones, each chamfer maybe wider
    than the band of side left beside it; its top stays wider than a chamfer (a ridge narrower than
    the slopes beside it is ambiguous). Chamfered alike top and bottom, maybe every edge is, the
    uprights too (chamfers under 0.4 of the thickness: a band of side left between them). Returns
    (part, the chamfers' sizes: top, then bottom, None or "all")."""
    import random

    from build123d import Axis, Box, chamfer
    rng = random.Random(seed)
    t = rng.uniform(1.5, 8)
    top = rng.uniform(0.1, 0.85) * t
    bottom = rng.choice([None, top if top < t / 2 else None, rng.uniform(0.05, 0.8) * (t - top)])
    b = Box(rng.uniform(40, 80), rng.uniform(40, 80), t)  # its top stays wider than a chamfer
    part = chamfer(b.edges().group_by(Axis.Z)[-1], top)
    if bottom is not None:
        part = chamfer(part.edges().group_by(Axis.Z)[0], bottom)
    if bottom == top and rng.random() < 0.5 and top < 0.4 * t:  # every edge, a band left between
        return chamfer(b.edges(), top), top, "all"
    return part, top, bottom


def test_random_chamfered_plates_read_every_chamfer_upright_and_turned(soak):
    """Stop 52: a plate chamfered top and bottom read the band of side left between the chamfers as
    one, and missed a chamfer wider than that band. Each chamfer reads at its size, upright and
    turned at random 500 mm off the origin."""
    seeds = list(range(30)) + (list(range(9500, 9800)) if soak else [])
    for seed in seeds:
        part, top, bottom = _chamfered_plate(seed)
        if bottom == "all":
            want = [(top, 12)]
        elif bottom is not None and abs(top - bottom) < 1e-9:
            want = [(top, 8)]
        else:
            want = sorted([(top, 4)] + ([] if bottom is None else [(bottom, 4)]))
        for p in (part, _turned_and_moved(part, seed)):
            got = sorted((c["size"], c["count"]) for c in _reply(p)["chamfers"])
            assert len(got) == len(want) and all(abs(a[0] - b[0]) < 1e-3 and a[1] == b[1]
                                                 for a, b in zip(got, want)), (seed, got, want)


def _flute_span(big: float, r: float, at: float) -> float:
    """The turn of a flute's wall: the arc of a cutter of radius ``r`` centred ``at`` from the axis
    that lies within the rim of radius ``big``."""
    return 2 * (math.pi - math.acos((big * big - at * at - r * r) / (2 * at * r)))


def _fluted_knob(seed: int):
    """A random knob: ``n`` flutes of radius ``r`` centred ``at`` from the axis of a cylinder of
    radius ``big`` (the cutter within half its radius of the rim, inside or out, its wall's turn
    kept off the two bounds by 0.03 of a half turn); its top edge maybe rounded or chamfered first
    (smaller than the flutes are deep, so each flute's walls keep their straight edges over half
    their length). Returns (part, n, the flute's depth, width, its wall's turn, the rim's treatment)."""
    import random

    from build123d import Axis, Cylinder, Pos, Rot, chamfer, fillet
    rng = random.Random(seed)
    big, h = rng.uniform(8, 30), rng.uniform(6, 20)
    r = rng.uniform(0.04, 0.12) * big
    while True:
        at = big + rng.uniform(-0.5, 0.5) * r
        span = _flute_span(big, r, at)
        if all(abs(span - b) > 0.03 * math.pi for b in (WALL_MIN, PARTIAL_MIN)):
            break
    n = rng.randint(5, min(30, int(math.pi * big / (1.3 * r))))
    part = Cylinder(big, h)
    rim = rng.choice([None, "fillet", "chamfer"])
    size = rng.uniform(0.2, 0.4) * min(r, h, big - at + r)
    if rim == "fillet":
        part = fillet(part.edges().sort_by(Axis.Z)[-1], size)
    elif rim == "chamfer":
        part = chamfer(part.edges().sort_by(Axis.Z)[-1], size)
    part = part - [Rot(0, 0, i * 360 / n) * Pos(at, 0, 0) * Cylinder(r, h) for i in range(n)]
    return part, n, big - (at - r), 2 * r, span, (rim, size)


def test_random_fluted_knobs_read_every_flute_upright_and_turned(soak):
    """Stop 53: a knob's flutes read as nothing (only exact half cylinders in a plane were notches),
    and a chamfer round its rim read once per piece its flutes left. Each flute whose wall turns
    less than a hole open on one side (``PARTIAL_MIN``) reads as a notch of its depth and width,
    one turning more as such a hole of the cutter's diameter, one turning less than ``WALL_MIN`` as
    nothing; all on one circle; the rim's rounding or chamfer as one; upright and turned at random
    500 mm off the origin."""
    seeds = list(range(20)) + (list(range(9800, 10000)) if soak else [])
    for seed in seeds:
        part, n, depth, width, span, (rim, size) = _fluted_knob(seed)
        kind = "holes" if span >= PARTIAL_MIN else "slots" if span >= WALL_MIN else None
        for p in (part, _turned_and_moved(part, seed)):
            reply = _reply(p)
            if kind == "slots":
                got = [(s["length"], s["width"], s["open_end"], s["through"]) for s in reply["slots"]]
                assert len(got) == n and all(abs(g[0] - depth) < 1e-3 and abs(g[1] - width) < 1e-3 and g[2] and g[3]
                                             for g in got), (seed, got, depth, width)
            elif kind == "holes":
                got = [(h["diameter"], h["partial"], h["through"]) for h in reply["holes"]]
                assert len(got) == n and all(abs(g[0] - width) < 1e-3 and g[1] and g[2] for g in got), (seed, got)
            assert reply["slots" if kind == "holes" else "holes"] == [], (seed, span, reply)
            assert [(pt["type"], pt["count"]) for pt in reply["patterns"]] == ([("bolt_circle", n)] if kind else []), \
                (seed, reply["patterns"])
            rounds = [(f["radius"], f["count"]) for f in reply["fillets"]]
            chamfers = [(c["size"], c["count"]) for c in reply["chamfers"]]
            assert len(rounds) == (rim == "fillet") and len(chamfers) == (rim == "chamfer"), (seed, rounds, chamfers)
            assert all(abs(x - size) < 1e-3 and k == 1 for x, k in rounds + chamfers), (seed, rounds, chamfers, size)


def _ribbed_box(seed: int):
    """A random box shelled from its top, one to four ribs on its floor at most 0.85 of the walls'
    height (all along X or all along Y, wall to wall or from one wall, apart, clear of the inside
    corners: a rib that hides part of a corner's edge, and the cells of crossing ribs, are known
    gaps), its upright edges maybe rounded first. Returns (part, the cavity's length, width, depth, inside corner radius or None)."""
    import random

    from build123d import Align, Axis, Box, BuildPart, Locations, fillet, offset
    rng = random.Random(seed)
    lx, ly, h, t = rng.uniform(30, 90), rng.uniform(30, 90), rng.uniform(10, 40), rng.uniform(1, 3)
    corner = rng.choice([None, rng.uniform(t + 0.5, min(lx, ly) / 4)])
    ix, iy, depth = lx - 2 * t, ly - 2 * t, h - t
    with BuildPart() as p:
        Box(lx, ly, h)
        if corner:
            fillet(p.edges().filter_by(Axis.Z), corner)
        offset(amount=-t, openings=p.faces().sort_by(Axis.Z)[-1])
        used: list[float] = []
        along_x = rng.random() < 0.5  # all one way: crossing ribs make an egg crate (a known gap)
        for _ in range(rng.randint(1, 4)):
            span, across = (ix, iy) if along_x else (iy, ix)
            w = rng.uniform(0.8, 2.5)
            room = max(0.0, across / 2 - (corner or t) - w - 2)  # clear of the corners' edges
            at = rng.uniform(-room, room)
            if any(abs(at - u) < 6 for u in used):
                continue
            used.append(at)
            full = rng.random() < 0.6
            length = span if full else rng.uniform(0.3, 0.7) * span
            mid = 0.0 if full else (span - length) / 2 * rng.choice([-1, 1])
            x, y, sx, sy = (mid, at, length, w) if along_x else (at, mid, w, length)
            with Locations((x, y, -h / 2 + t)):
                Box(sx, sy, rng.uniform(0.15, 0.85) * depth, align=(Align.CENTER, Align.CENTER, Align.MIN))
    return p.part, max(ix, iy), min(ix, iy), depth, (corner - t if corner else None)


def test_random_ribbed_boxes_read_their_cavity_upright_and_turned(soak):
    """Stop 53: a shelled box with ribs on its floor read no pocket (a wall the ribs join had more
    than two neighbours along the pocket's axis). Each reads one rectangular pocket of the cavity's
    size and depth, upright and turned at random 500 mm off the origin."""
    seeds = list(range(20)) + (list(range(10000, 10200)) if soak else [])
    for seed in seeds:
        part, length, width, depth, corner = _ribbed_box(seed)
        for p in (part, _turned_and_moved(part, seed)):
            found = _reply(p)["pockets"]
            assert len(found) == 1, (seed, found)
            pk = found[0]
            got = (pk["shape"], pk["length"], pk["width"], pk["depth"], pk["corner_radius"])
            assert got[0] == "rectangle" and all(abs(a - b) < 1e-3 for a, b in zip(got[1:4], (length, width, depth))), \
                (seed, got, (length, width, depth))
            assert (got[4] is None) == (corner is None) and (corner is None or abs(got[4] - corner) < 1e-3), (seed, got)



def _drilled_beam(seed: int):
    """A random C-beam (``_c_beam``) with a row of holes in each flange, the same diameter and
    pitch, the bottom row at the top's places (through both) or half a pitch along (drilled in turn);
    returns (part, top count, bottom count, pitch)."""
    import random

    from build123d import Cylinder, Pos
    rng = random.Random(seed)
    length, h, w, t = rng.uniform(120, 300), rng.uniform(30, 80), rng.uniform(20, 40), rng.uniform(2, 5)
    d, pitch = rng.uniform(2, min(8, w / 3)), rng.uniform(12, 40)
    y = rng.uniform(t + d, w - d)
    n = rng.randint(3, max(3, int((length - 2 * d) / pitch)))
    first = rng.uniform(d, length - d - (n - 1) * pitch)
    staggered = rng.random() < 0.5
    part = _c_beam(length, h, w, t)
    for k in range(n):
        part -= Pos(first + k * pitch, y, h / 2) * Cylinder(d / 2, 3 * t)
    below = [first + k * pitch + (pitch / 2 if staggered else 0) for k in range(n - (1 if staggered else 0))]
    for x in below:
        part -= Pos(x, y, -h / 2) * Cylinder(d / 2, 3 * t)
    return part, n, len(below), pitch


def _c_beam(length: float, h: float, w: float, t: float):
    """A C-beam along X from 0 to ``length``: a web ``t`` thick and ``h`` high, flanges ``w`` wide."""
    from build123d import Align, BuildPart, BuildSketch, Locations, Plane, Rectangle, extrude
    with BuildPart() as c:
        with BuildSketch(Plane.YZ):
            Rectangle(t, h, align=(Align.MIN, Align.CENTER))
            with Locations((0, h / 2)):
                Rectangle(w, t, align=(Align.MIN, Align.MAX))
            with Locations((0, -h / 2)):
                Rectangle(w, t, align=(Align.MIN, Align.MIN))
        extrude(amount=length)
    return c.part


def test_random_drilled_c_beams_read_a_row_in_each_flange_upright_and_turned(soak):
    """Stop 54: holes projected across their axis put a C-beam's two flanges in one group: drilled
    alike, no pattern (each hole over another); drilled in turn, one row at half the pitch. Each
    flange now reads its own row at the pitch it was drilled, upright and turned at random."""
    seeds = list(range(20)) + (list(range(10200, 10400)) if soak else [])
    for seed in seeds:
        part, top, bottom, pitch = _drilled_beam(seed)
        for p in (part, _turned_and_moved(part, seed)):
            rows = sorted((q["type"], q["count"]) for q in _reply(p)["patterns"])
            want = sorted(("linear", c) for c in (top, bottom) if c >= 3)
            assert rows == want, (seed, rows, want)
            assert all(abs(q["pitch"] - pitch) < 1e-3 for q in _reply(p)["patterns"]), seed


def _circle_and_lattice(seed: int):
    """A random plate with holes of one size on a bolt circle (3, or 5 to 8: never a square) and,
    well clear of it, on a row or a grid (not square: no circle of its own); returns (part, the
    circle's count, the lattice's type and counts)."""
    import random

    from build123d import Box, BuildPart, GridLocations, Hole, Locations, PolarLocations
    rng = random.Random(seed)
    d = rng.uniform(2, 8)
    r = rng.uniform(3 * d, 6 * d)
    n = rng.choice([3, 5, 6, 7, 8])
    nx, ny = rng.randint(2, 5), rng.randint(1, 3)
    if nx * ny < 3:
        nx = 3
    px = rng.uniform(2 * d, 4 * d)
    py = px * rng.uniform(1.2, 2.0)
    gx = 6 * r + nx * px / 2  # the lattice's centre: clear of the circle's sides carried on
    t = rng.uniform(3, 10)
    with BuildPart() as p:
        Box(gx + nx * px + 4 * r, 2 * max(r, ny * py) + 4 * d, t)
        with Locations((-gx / 2, 0, t / 2)):
            with PolarLocations(r, n, start_angle=rng.uniform(0, 360)):
                Hole(d / 2)
        with Locations((gx / 2, 0, t / 2)):
            with GridLocations(px, py, nx, ny):
                Hole(d / 2)
    lattice = ("grid", [nx, ny]) if ny > 1 else ("linear", None)
    return p.part, n, lattice, nx * ny


def test_random_bolt_circles_beside_a_row_or_grid_of_the_same_holes_upright_and_turned(soak):
    """Stop 54: a group of like holes was a lattice only as a whole, so a row or grid of the same
    holes as a bolt circle read as loose holes. Each plate reads its circle and its lattice,
    upright and turned at random."""
    seeds = list(range(20)) + (list(range(10400, 10600)) if soak else [])
    for seed in seeds:
        part, n, (kind, counts), m = _circle_and_lattice(seed)
        for p in (part, _turned_and_moved(part, seed)):
            pats = _reply(p)["patterns"]
            got = sorted((q["type"], q["count"]) for q in pats)
            assert got == sorted([("bolt_circle", n), (kind, m)]), (seed, got)
            if counts:
                assert next(q for q in pats if q["type"] == "grid")["counts"] == counts, (seed, pats)


def _two_rows(seed: int):
    """A random bar with two rows of one size of hole along it, each at its own pitch and count
    (never a lattice together: the counts differ); returns (part, the rows' (count, pitch), sorted)."""
    import random

    from build123d import Box, BuildPart, Hole, Locations
    rng = random.Random(seed)
    d = rng.uniform(2, 6)
    n1 = rng.randint(3, 7)
    n2 = rng.choice([n for n in range(3, 8) if n != n1])
    p1, p2 = rng.uniform(2 * d, 5 * d), rng.uniform(2 * d, 5 * d)
    gap = rng.uniform(3 * d, 6 * d)  # between the rows: more than a pitch, so each row's nearest are its own
    gap = max(gap, 1.5 * max(p1, p2))
    length = max(n1 * p1, n2 * p2) + 4 * d
    t = rng.uniform(3, 8)
    x1, x2 = rng.uniform(-d, d), rng.uniform(-d, d)
    with BuildPart() as p:
        Box(length, gap + 4 * d, t)
        with Locations(*[(x1 + (k - (n1 - 1) / 2) * p1, gap / 2, t / 2) for k in range(n1)],
                       *[(x2 + (k - (n2 - 1) / 2) * p2, -gap / 2, t / 2) for k in range(n2)]):
            Hole(d / 2)
    return p.part, sorted([(n1, p1), (n2, p2)])


def test_random_bars_with_two_rows_at_two_pitches_read_a_row_each_upright_and_turned(soak):
    """Stop 54: holes of one size in two rows of different counts make no lattice together, and
    read as no pattern. Each row is now a linear array at its pitch, upright and turned at random."""
    seeds = list(range(20)) + (list(range(10600, 10800)) if soak else [])
    for seed in seeds:
        part, want = _two_rows(seed)
        for p in (part, _turned_and_moved(part, seed)):
            pats = _reply(p)["patterns"]
            got = sorted((q["count"], q["pitch"]) for q in pats if q["type"] == "linear")
            assert len(pats) == 2 and [n for n, _ in got] == [n for n, _ in want], (seed, pats, want)
            assert all(abs(a[1] - b[1]) < 1e-3 for a, b in zip(got, want)), (seed, got, want)

def test_random_drafted_spline_cuts_read_their_draft_upright_and_turned(soak):
    """Stop 50's drafted freeform pockets on random tapered spline cuts: one pocket of shape
    "freeform" with the taper as its draft (an undercut's negative), blind at its depth or through
    (then entered from its wider end: the draft positive), its sizes the profile's when it is
    entered from the top and reads along X or Y; turned at random and moved 500 mm off the origin,
    the same draft and depth (a through one entered from the same end)."""

    seeds = list(range(15)) + (list(range(9000, 9200)) if soak else [])
    for seed in seeds:
        part, (sx, sy), depth, taper = _drafted_spline_cut(seed)
        readings = []
        for p in (part, _turned_and_moved(part, seed)):
            (pk,) = _reply(p)["pockets"]
            assert pk["shape"] == "freeform" and pk["through"] is (depth is None), (seed, pk)
            # through: entered from its wider end, as a hole (an undercut's from below: a positive draft)
            assert abs(pk["draft"] - (abs(taper) if depth is None else taper)) < 2e-2, (seed, pk, taper)
            assert depth is None or abs(pk["depth"] - depth) < 1e-3, (seed, pk, depth)
            readings.append(pk)
        pk = readings[0]
        if pk["axis"] == [0, 0, -1] and max(abs(c) for c in pk["direction"]) > 1 - 1e-9:  # the profile's at the top
            assert abs(pk["width"] - min(sx, sy)) <= 5e-3 * max(sx, sy), (seed, pk, (sx, sy))
            assert abs(pk["length"] - max(sx, sy)) <= 5e-3 * max(sx, sy), (seed, pk, (sx, sy))


def test_random_parts_with_their_round_faces_split_in_halves_read_alike():
    """A random part whose cylinders, cones, spheres and tori are split in halves round their axes
    (as some CAD systems write STEP files) reads as the part: ``features.find`` merges the faces on
    one surface first (OCCT's ``ShapeUpgrade_UnifySameDomain``, as build123d's ``clean``). Before, 13
    of 45 parts read otherwise (holes lost, spherical dimples missed, slot ends read as fillets).
    Left out: parts where a torus stays in pieces (OCCT does not merge a torus split round its
    axis: a known gap). Known to differ beyond these seeds: 24, whose spherical dimple OCCT's merge
    leaves with a rim edge of its own (no neighbour: not read)."""
    import math

    from build123d import Compound
    from OCP.ShapeUpgrade import ShapeUpgrade_ShapeDivideAngle

    from jail.cad.features import _merged
    from jail.cad.features_faces import faces_of, split_surfaces
    seeds = [(s, False) for s in range(12)] + [(s, True) for s in range(12)] + [(s, PROFILED) for s in range(12)]
    compared = 0
    for seed, edges in seeds:
        part = _part(seed, edges)
        if not part.solids() or not part.is_valid:
            continue
        divide = ShapeUpgrade_ShapeDivideAngle(math.radians(180), part.wrapped)
        divide.Perform()
        halves = Compound(divide.Result())
        merged = _merged(halves.wrapped)
        if merged is None or split_surfaces(faces_of(merged)):
            continue  # a torus OCCT leaves in pieces
        want = _reading(features.features({"p": part}, "p"))
        assert _alike(_reading(features.features({"p": halves}, "p")), want), seed
        compared += 1
    assert compared >= len(seeds) * 2 // 3, compared  # the test compares parts, not skips


def _reordered(part, seed: int):
    """``part`` rebuilt from its own faces in a random order (the same for a seed): the same solid as a
    file written by another system may list it."""
    import random

    from build123d import Compound, Solid
    from OCP.BRep import BRep_Builder
    from OCP.TopAbs import TopAbs_FACE, TopAbs_SHELL, TopAbs_SOLID
    from OCP.TopExp import TopExp_Explorer
    from OCP.TopoDS import TopoDS_Shell, TopoDS_Solid

    def each(shape, kind):
        ex = TopExp_Explorer(shape, kind)
        while ex.More():
            yield ex.Current()
            ex.Next()

    builder, rng, solids = BRep_Builder(), random.Random(seed), []
    for solid in each(part.wrapped, TopAbs_SOLID):
        new = TopoDS_Solid()
        builder.MakeSolid(new)
        for shell in each(solid, TopAbs_SHELL):
            faces = list(each(shell, TopAbs_FACE))
            rng.shuffle(faces)
            out = TopoDS_Shell()
            builder.MakeShell(out)
            for face in faces:
                builder.Add(out, face)
            out.Closed(True)
            builder.Add(new, out)
        solids.append(Solid(new))
    return Compound(solids)


def test_random_parts_with_their_faces_in_another_order_read_alike(soak):
    """A random part rebuilt from its faces in a random order (as another system may write it) reads
    as the part. Before stop 51, two crossing slots were read one way or the other as the faces came
    (seed 7 with straight cuts, and with a V: a slot's half-round end paired with whichever of two
    ends in one line came first, and its walls read from the shorter of the two): slot ends now pair
    nearest first, the one alongside over more of its height, read from the taller."""
    seeds = [(s, False) for s in range(15)] + [(s, True) for s in range(15)] + [(s, PROFILED) for s in range(15)]
    if soak:
        seeds += [(s, False) for s in range(9000, 9100)] + [(s, True) for s in range(9100, 9200)]
        seeds += [(s, PROFILED) for s in range(9200, 9300)]
    compared = 0
    for seed, edges in seeds:
        part = _part(seed, edges)
        if not part.solids() or not part.is_valid:
            continue
        want = _reading(features.features({"p": part}, "p"))
        assert _alike(_reading(features.features({"p": _reordered(part, seed)}, "p")), want), seed
        compared += 1
    assert compared >= len(seeds) * 2 // 3, compared


def _lattice_with_gaps(seed: int):
    """A random plate drilled on a grid (3 to 6 by 3 to 6) or a row (5 to 10) of one size of hole,
    with up to a quarter of its positions left empty (a grid's rows and columns keep two members or
    more, a row keeps its ends); returns (part, type, counts or None, members, empty (x, y, z))."""
    import random

    from build123d import Box, BuildPart, Hole, Locations
    rng = random.Random(seed)
    d = rng.uniform(2, 6)
    t = rng.uniform(3, 10)
    if rng.random() < 0.6:
        nx, ny = rng.randint(3, 6), rng.randint(3, 6)
        px, py = rng.uniform(2.5 * d, 5 * d), rng.uniform(2.5 * d, 5 * d)
        spots = [(i, j) for j in range(ny) for i in range(nx)]
        empty: set = set()
        for s in rng.sample(spots, len(spots)):
            if len(empty) >= rng.randint(1, len(spots) // 4):
                break
            trial = empty | {s}
            if all(sum((i, j) not in trial for j in range(ny)) >= 2 for i in range(nx)) and \
                    all(sum((i, j) not in trial for i in range(nx)) >= 2 for j in range(ny)):
                empty = trial
        kind, counts = "grid", [nx, ny]
    else:
        nx, ny, px, py = rng.randint(5, 10), 1, rng.uniform(2.5 * d, 5 * d), 0.0
        inner = list(range(1, nx - 1))
        empty = {(i, 0) for i in rng.sample(inner, rng.randint(1, nx // 4))}
        kind, counts = "linear", None
    at = {(i, j): ((i - (nx - 1) / 2) * px, (j - (ny - 1) / 2) * py, t / 2) for i in range(nx) for j in range(ny)}
    with BuildPart() as p:
        Box(nx * px + 4 * d, ny * py + 4 * d, t)
        with Locations(*[q for s, q in at.items() if s not in empty]):
            Hole(d / 2)
    return p.part, kind, counts, nx * ny - len(empty), sorted(at[s] for s in empty)


def _moved_point(q, seed: int):
    """Where ``_turned_and_moved(part, seed)`` takes the point ``q`` of the part."""
    import random

    from build123d import Location, Pos, Rot
    rng = random.Random(seed)
    loc = Pos(rng.uniform(-500, 500), rng.uniform(-500, 500), rng.uniform(-500, 500)) \
        * Rot(rng.uniform(0, 360), rng.uniform(0, 360), rng.uniform(0, 360))
    v = (loc * Location(q)).position
    return (v.X, v.Y, v.Z)


def test_random_lattices_with_positions_left_empty_read_as_lattices_upright_and_turned(soak):
    """Stop 55: a grid or a row with a few positions left empty read as smaller lattices, circles
    and loose holes. Each now reads as one lattice of all its members, its empty positions listed
    where they are, upright and turned at random."""
    seeds = list(range(20)) + (list(range(10800, 11000)) if soak else [])
    for seed in seeds:
        part, kind, counts, n, empty = _lattice_with_gaps(seed)
        for turned, p in ((False, part), (True, _turned_and_moved(part, seed))):
            pats = _reply(p)["patterns"]
            assert [(q["type"], q["count"]) for q in pats] == [(kind, n)], (seed, turned, pats)
            if counts:
                assert sorted(pats[0]["counts"]) == sorted(counts), (seed, pats[0]["counts"], counts)
            want = [_moved_point(q, seed) for q in empty] if turned else empty
            got, axis = pats[0]["empty"], _reply(p)["holes"][0]["axis"]
            assert len(got) == len(want), (seed, turned, got, want)
            for w in want:  # across the axis: a through hole's entry may be on either face once turned
                assert any(_off_axis(w, g, axis) < 1e-3 for g in got), (seed, turned, w, got)


def _off_axis(w, g, axis) -> float:
    """How far ``g`` lies from the line through ``w`` along ``axis`` (a unit vector)."""
    d = [b - a for a, b in zip(w, g)]
    along = sum(x * y for x, y in zip(d, axis))
    return math.dist(d, [along * x for x in axis])


def _pads_on_a_plate(seed: int):
    """A random plate with one to three pads well apart: rectangles (maybe with corner radii),
    regular polygons of 5 to 8 sides, obrounds, each at its own height, its top edges maybe rounded
    or chamfered; returns (part, the pads' (shape, sides, width, length, height), sorted)."""
    import random

    from build123d import (Axis, Box, Plane, Pos, Rectangle, RectangleRounded, RegularPolygon, SlotOverall, chamfer,
                           extrude, fillet)
    rng = random.Random(seed)
    t = rng.uniform(3, 10)
    n = rng.randint(1, 3)
    cell = 40.0
    want = []
    part = Box(cell * n + 10, cell + 10, t)
    for i in range(n):
        kind = rng.choice(["rectangle", "rounded", "regular", "obround"])
        h = rng.uniform(1, 12)
        if kind in ("rectangle", "rounded"):
            a, b = rng.uniform(6, 25), rng.uniform(6, 25)
            sketch = RectangleRounded(a, b, rng.uniform(0.5, min(a, b) / 2 - 0.5)) if kind == "rounded" \
                else Rectangle(a, b)
            want.append(("rectangle", 4, min(a, b), max(a, b), h))
            small = min(a, b)
        elif kind == "regular":
            k, r = rng.randint(5, 8), rng.uniform(5, 12)
            sketch = RegularPolygon(r, k)
            # narrowest across a side: to the opposite side, or (odd) the opposite corner
            across = r * math.cos(math.pi / k) + (r if k % 2 else r * math.cos(math.pi / k))
            want.append(("regular", k, across, None, h))
            small = 2 * r * math.sin(math.pi / k)  # a side
        else:
            length, w = rng.uniform(14, 30), rng.uniform(4, 12)
            sketch = SlotOverall(length, w, rotation=rng.choice([0, 90]))
            want.append(("obround", 2, w, length, h))
            small = w
        pad = extrude(Plane.XY * sketch, h)
        brk = rng.choice([None, "fillet", "chamfer"])
        if brk:
            size = rng.uniform(0.1, 0.3) * min(small, h)
            top = pad.edges().group_by(Axis.Z)[-1]
            try:
                pad = fillet(top, size) if brk == "fillet" else chamfer(top, size)
            except Exception:  # noqa: BLE001 - OCCT could not break these edges: the pad stays sharp
                pass
        part += Pos(-cell * (n - 1) / 2 + cell * i + rng.uniform(-3, 3), rng.uniform(-3, 3), t / 2) * pad
    return part, sorted(want, key=lambda x: x[4])


def test_random_pads_read_their_outline_and_height_upright_and_turned(soak):
    """Stop 55: raised outlines that are not round read as nothing. Each random pad reads its shape,
    sides, width, length (a regular polygon's: any) and height, upright and turned at random."""
    seeds = list(range(20)) + (list(range(11000, 11200)) if soak else [])
    for seed in seeds:
        part, want = _pads_on_a_plate(seed)
        for turned, p in ((False, part), (True, _turned_and_moved(part, seed))):
            got = sorted(_reply(p)["pads"], key=lambda x: x["height"])
            assert len(got) == len(want), (seed, turned, got, want)
            for g, (shape, sides, width, length, h) in zip(got, want):
                assert (g["shape"], g["sides"]) == (shape, sides), (seed, turned, g, shape)
                assert abs(g["width"] - width) < 1e-3 and abs(g["height"] - h) < 1e-3, (seed, turned, g, width, h)
                assert length is None or abs(g["length"] - length) < 1e-3, (seed, turned, g, length)

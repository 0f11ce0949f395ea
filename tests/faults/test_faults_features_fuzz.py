"""``features`` on random machined parts (tests/helpers/random_parts.py), in process: every reply is
rebuilt by the launcher (launcher/replies/features.py) and must pass, with sizes that are not
negative. A refused reply costs the user every feature of the part: stop 43's fuzzing found
holes whose depth came out negative (a ring groove's middle taken away by a spherical cut; the
soak seeds 1240 and 1306 fail at the commit before ``features: never take a hole's entry past its
far end``).

Normal run: 40 parts, 20 with straight cuts (channels, slots, rebates) and 20 with other profiles
(V grooves, dovetails, drafted channels, T-slots), and 42 read upright and turned; ``--soak``: 800 + 400 +
400 more, and 300 + 150 + 150 more turned (about 4 minutes).
"""
from __future__ import annotations

import json

from jail.cad import features
from jail.cad.measure import MeasureError
from launcher.replies import features as R
from tests.helpers import random_parts

SIZES = {"holes": ("diameter", "depth", "length"), "slots": ("length", "width", "depth"),
         "pockets": ("width", "length", "depth"), "bosses": ("diameter", "height"),
         "grooves": ("diameter", "width", "depth"), "steps": ("width", "length", "depth")}


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

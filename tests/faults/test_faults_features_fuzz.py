"""``features`` on random machined parts (tests/helpers/random_parts.py), in process: every reply is
rebuilt by the launcher (launcher/replies/features.py) and must pass, with sizes that are not
negative. A refused reply costs the user every feature of the part: stop 43's fuzzing found
holes whose depth came out negative (a ring groove's middle taken away by a spherical cut; the
soak seeds 1240 and 1306 fail at the commit before ``features: never take a hole's entry past its
far end``).

Normal run: 40 parts (about 3 s); ``--soak``: 800 more (about a minute).
"""
from __future__ import annotations

import json

from jail.cad import features
from launcher.replies import features as R
from tests.helpers import random_parts

SIZES = {"holes": ("diameter", "depth", "length"), "slots": ("length", "width", "depth"),
         "pockets": ("width", "length", "depth"), "bosses": ("diameter", "height"),
         "grooves": ("diameter", "width", "depth")}


def test_random_parts_give_replies_the_launcher_accepts(soak):
    seeds = list(range(40)) + (list(range(1000, 1800)) if soak else [])
    read = 0
    for seed in seeds:
        part = random_parts.part(seed)
        if not part.solids():
            continue
        raw = json.loads(json.dumps(features.features({"p": part}, "p"), allow_nan=False))
        out = R.features_reply(raw, "p")  # ReplyRefused fails the test, naming the field
        for kind, keys in SIZES.items():
            for item in out[kind]:
                assert all(item[k] is None or item[k] >= 0 for k in keys), (seed, kind, item)
        read += sum(len(out[k]) for k in SIZES)
    print(f"{len(seeds)} random parts, {read} features read")
    assert read > len(seeds) // 2  # the parts do have features: the test reads something

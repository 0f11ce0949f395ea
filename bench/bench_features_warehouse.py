#!/usr/bin/env python3
"""What ``features`` reads on real catalogue parts: bd_warehouse's (build123d's parts library), a read-out.

    python bench/bench_features_warehouse.py              # every part (the wheels fetched once)
    python bench/bench_features_warehouse.py --only Gear  # parts whose name contains "Gear"

bd_warehouse 0.4.0 and bd_materials 0.2.5 (pinned: the readings stay comparable from run to run)
are downloaded with pip (``--no-deps``: they run on the build123d installed here) into the corpus
cache and unpacked there. Each part of :data:`PARTS` (OpenBuilds plates, brackets, extrusion
profiles and wheels; pipe flanges; a spur gear; fasteners; a bearing) is built in a child forked
from this process and read by ``features`` (``jail.cad.features``, the code the jail runs, here
without the jail); printed: the part, its faces, the wall time of the call and the text a model
gets (``launcher.tools.cad.features_content``). A part the library cannot build says so. Nothing is
asserted: it is for a human who knows the parts, as ``bench_features_corpus`` is for build123d's
examples (stop 51: a gear's tips read as fillets; stop 52: an extrusion's V-slots not read).
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
from bench_corpus import DEFAULT_CACHE  # noqa: E402
from bench_features_corpus import run_forked  # noqa: E402

WHEELS = ("bd_warehouse==0.4.0", "bd_materials==0.2.5")

#: (name, how to build it from the bd_warehouse modules)
PARTS = [
    ("AcmeAntiBacklashNutBlock8mm", lambda m: m["open_builds"].AcmeAntiBacklashNutBlock8mm()),
    ("AluminumSpacer 20mm", lambda m: m["open_builds"].AluminumSpacer("20mm")),
    ("CBeamEndMount", lambda m: m["open_builds"].CBeamEndMount()),
    ("CBeamGantryPlate", lambda m: m["open_builds"].CBeamGantryPlate()),
    ("CBeamGantryPlateXLarge", lambda m: m["open_builds"].CBeamGantryPlateXLarge()),
    ("CBeamLinearRail 100", lambda m: m["open_builds"].CBeamLinearRail(100)),
    ("CBeamRiserPlate", lambda m: m["open_builds"].CBeamRiserPlate()),
    ("EccentricSpacer", lambda m: m["open_builds"].EccentricSpacer()),
    ("FlexibleCoupler 8mm", lambda m: m["open_builds"].FlexibleCoupler("8mm")),
    ("LBracket", lambda m: m["open_builds"].LBracket()),
    ("ShimWasher SlotWasher", lambda m: m["open_builds"].ShimWasher("SlotWasher")),
    ("SpacerBlock", lambda m: m["open_builds"].SpacerBlock()),
    ("TNut", lambda m: m["open_builds"].TNut()),
    ("VSlotLinearRail 20x20 x 100", lambda m: m["open_builds"].VSlotLinearRail("20x20", 100)),
    ("VSlotLinearRail 20x40 x 100", lambda m: m["open_builds"].VSlotLinearRail("20x40", 100)),
    ("VSlotLinearRail 40x40 x 100", lambda m: m["open_builds"].VSlotLinearRail("40x40", 100)),
    ("XtremeSolidVWheel", lambda m: m["open_builds"].XtremeSolidVWheel()),
    ("WeldNeckFlange NPS 10 class 300", lambda m: m["flange"].WeldNeckFlange(nps="10", flange_class=300)),
    ("SlipOnFlange NPS 3 class 150", lambda m: m["flange"].SlipOnFlange(nps="3", flange_class=150)),
    ("BlindFlange NPS 4 class 150", lambda m: m["flange"].BlindFlange(nps="4", flange_class=150)),
    ("SpurGear m2 z20", lambda m: m["gear"].SpurGear(module=2, tooth_count=20, pressure_angle=20, root_fillet=0.5,
                                                      thickness=8)),
    ("SocketHeadCapScrew M6-1 x 20", lambda m: m["fastener"].SocketHeadCapScrew("M6-1", 20, simple=True)),
    ("HexNut M8-1.25", lambda m: m["fastener"].HexNut("M8-1.25", simple=True)),
    ("CounterSunkScrew M5-0.8 x 16", lambda m: m["fastener"].CounterSunkScrew("M5-0.8", 16, simple=True)),
    ("SingleRowDeepGrooveBallBearing M8-22-7",
     lambda m: m["bearing"].SingleRowDeepGrooveBallBearing("M8-22-7")),
]


def fetch(cache: Path) -> Path:
    """The directory the pinned wheels are unpacked in (importable), downloaded with pip when missing."""
    root = cache / "bd_warehouse-0.4.0"
    if (root / "bd_warehouse").is_dir() and (root / "bd_materials").is_dir():
        return root
    cache.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", *WHEELS, "-d", str(cache)]
    print("fetching:", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    root.mkdir(exist_ok=True)
    for spec in WHEELS:
        name, ver = spec.split("==")
        wheel = next(cache.glob(f"{name}-{ver}-*.whl"))
        with zipfile.ZipFile(wheel) as z:
            for m in z.infolist():  # regular paths only: nothing lands outside the directory
                if m.filename.startswith("/") or ".." in Path(m.filename).parts:
                    continue
                z.extract(m, root)
    return root


def read(name: str, make) -> dict:
    """In a forked child: build the part, then ``features`` and its text."""
    import importlib

    from jail.cad import features
    from launcher.replies.features import features_reply
    from launcher.tools.cad import features_content
    mods = {k: importlib.import_module(f"bd_warehouse.{k}") for k in ("open_builds", "flange", "gear", "fastener",
                                                                     "bearing")}
    try:
        part = make(mods)
    except Exception as e:  # noqa: BLE001 - the library's own error
        return {"error": f"builds: {type(e).__name__}: {str(e)[:120]}"}
    t = time.perf_counter()
    d = features.features({"p": part}, "p")
    ms = (time.perf_counter() - t) * 1000
    blocks = features_content({"ok": True, "features": features_reply(d, "p")})
    text = "".join(b.get("text", "") for b in blocks).removeprefix("p:\n")
    return {"faces": len(part.faces()), "ms": round(ms, 1), "text": text,
            "found": {k: len(d[k]) for k in features.KINDS if d[k]}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    ap.add_argument("--only")
    ap.add_argument("--timeout", type=float, default=120.0)
    args = ap.parse_args()
    sys.path.insert(0, str(fetch(args.cache)))
    import build123d  # noqa: F401 - paid once, inherited by every fork
    from jail.cad import features  # noqa: F401
    parts = [(n, m) for n, m in PARTS if args.only is None or args.only in n]
    print(f"bd_warehouse 0.4.0, build123d {build123d.__version__}: {len(parts)} parts\n")
    results = {}
    for name, make in parts:
        r = results[name] = run_forked(lambda: read(name, make), args.timeout)
        if "error" in r:
            print(f"### {name}: {r['error']}\n", flush=True)
            continue
        print(f"### {name} ({r['faces']} faces, {r['ms']} ms)\n```\n{r['text'].rstrip()}\n```\n", flush=True)
    ok = [r for r in results.values() if "error" not in r]
    total: dict = {}
    for r in ok:
        for k, n in r["found"].items():
            total[k] = total.get(k, 0) + n
    ms = [r["ms"] for r in ok]
    print(f"{len(ok)} of {len(parts)} parts read; groups found: " + ", ".join(f"{n} {k}" for k, n in total.items())
          + (f"; features took p50 {statistics.median(ms):.0f} ms, max {max(ms):.0f} ms" if ms else ""))
    failed = [n for n, r in results.items() if "error" in r and not r["error"].startswith("builds")]
    print(f"features raised on {len(failed)} parts" + (f": {', '.join(failed)}" if failed else ""))


if __name__ == "__main__":
    main()

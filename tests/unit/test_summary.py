"""The reply's object summaries under their own budget (issue 21, item 5), outside the jail.

Copies of one shape (moved, rotated, patterned) are measured once; a time budget or the launcher's
near-the-limit signal leaves the rest of the names ``unsummarised`` (name and type) instead of
failing the call; validity is checked for the first ``VALIDATE_MAX`` shapes only; the numbers are
the ones build123d gives for each copy.
"""
from __future__ import annotations

import pytest

from jail.cad import changes, runner, shape_measure, summary
from tests.helpers.models import FILLETED, copies


def fresh(code: str) -> dict:
    summary._SHAPE_CACHE.clear()
    shape_measure._LOCAL.clear()
    ns = runner.new_namespace([], [], python_layers=False)
    exec(compile(code, "<test>", "exec"), ns)
    return ns


def by_name(items):
    return {o["name"]: o for o in items}


def close(a, b, tol=1e-6):
    return all(abs(x - y) <= tol * max(1.0, abs(y)) for x, y in zip(a, b))


def test_many_copies_bound_as_top_level_names_are_measured_once_and_right():
    ns = fresh(FILLETED + copies(1000, dy=5) + "turned = part.rotate(Axis.Z, 30)\n")
    calls = []
    real = shape_measure.Meter._measure_local
    shape_measure.Meter._measure_local = lambda self, s: calls.append(1) or real(self, s)
    try:
        items = by_name(summary.summarize(ns, budget_s=summary.SUMMARY_BUDGET_S))
    finally:
        shape_measure.Meter._measure_local = real
    assert len(calls) == 1  # one TShape: measured once, whatever the number of copies
    assert items["..."]["kind"] == "omitted"
    for name in ("p0", "p7", "p150"):
        o, shape = items[name], ns[name]
        bb = shape.bounding_box()
        assert o["kind"] == "shape" and o["valid"] is True
        assert o["volume"] == pytest.approx(shape.volume, rel=1e-9)
        assert close(o["bbox"]["min"], bb.min) and close(o["bbox"]["max"], bb.max), (o["bbox"], bb)
        assert o["counts"] == {"solids": 1, "faces": len(shape.faces()), "edges": len(shape.edges())}


def test_a_rotated_copy_gets_its_own_bounding_box():
    ns = fresh(FILLETED + "turned = part.rotate(Axis.Z, 30)\n")
    o = by_name(summary.summarize(ns))["turned"]
    bb = ns["turned"].bounding_box()
    assert close(o["bbox"]["size"], bb.size) and o["bbox"]["size"][0] > 60.5
    assert o["volume"] == pytest.approx(ns["part"].volume, rel=1e-9)


def test_a_compound_of_copies_is_the_sum_of_its_children():
    # 5 x 5: build123d's own optimal bounding box of the compound, the reference, takes ~7 s at 10 x 10
    ns = fresh(FILLETED + "grid = Compound(children=[Pos(x * 100, y * 100, 0) * part "
                          "for x in range(5) for y in range(5)])\n")
    o = by_name(summary.summarize(ns))["grid"]
    g = ns["grid"]
    assert o["counts"]["solids"] == 25
    assert o["volume"] == pytest.approx(g.volume, rel=1e-9)
    bb = g.bounding_box()
    assert close(o["bbox"]["min"], bb.min) and close(o["bbox"]["max"], bb.max)


def test_past_the_budget_names_are_listed_unsummarised():
    ns = fresh("a = Box(1, 2, 3)\nb = Cylinder(1, 2)\nn = 5\n")
    items = by_name(summary.summarize(ns, budget_s=0.0))
    for name, typ in (("a", "Box"), ("b", "Cylinder"), ("n", "int")):
        assert items[name]["kind"] == "unsummarised" and items[name]["type"] == typ
        assert items[name]["repr"] == summary.UNSUMMARISED and "volume" not in items[name]


def test_the_near_limit_signal_stops_the_pass_between_shapes():
    ns = fresh("\n".join(f"s{i} = Box(1, 1, {i + 1})" for i in range(40)))
    seen = []

    def stop():
        seen.append(1)
        return len(seen) > 10
    items = summary.summarize(ns, stop=stop)
    kinds = [o["kind"] for o in items]
    assert kinds.count("shape") >= 1 and kinds.count("unsummarised") >= 25, kinds
    assert [o["name"] for o in items] == [f"s{i}" for i in range(40)]  # every name still listed


def test_validity_is_checked_for_the_first_shapes_only():
    n = shape_measure.VALIDATE_MAX + 20
    ns = fresh("\n".join(f"s{i} = Box(1, 1, {i + 1})" for i in range(n)))
    items = summary.summarize(ns)
    assert sum(1 for o in items if "valid" in o) == shape_measure.VALIDATE_MAX
    assert all("volume" in o and "bbox" in o for o in items)


def test_unsummarised_names_bound_to_the_same_object_are_not_changes():
    ns = fresh("a = Box(1, 2, 3)\nb = Box(2, 2, 2)\n")
    ids: dict = {}
    first, _ = changes.diff(ns, summary.summarize(ns, ids=ids), ids)
    assert {o["name"] for o in first} == {"a", "b"}
    ns["b"] = ns["Box"](5, 5, 5)  # rebind b only
    ids = {}
    again, deleted = changes.diff(ns, summary.summarize(ns, ids=ids, budget_s=0.0), ids)
    assert [(o["name"], o["change"]) for o in again] == [("b", "changed")] and deleted == []
    ids = {}
    third, _ = changes.diff(ns, summary.summarize(ns, ids=ids), ids)
    assert [(o["name"], o["kind"]) for o in third] == [("b", "shape")]  # b's summary comes when measured; a: kept


def test_a_huge_shape_gets_the_light_summary():
    ns = fresh(f"prism = extrude(RegularPolygon(10, {shape_measure.LIGHT_FACES + 10}), 2)\n")
    o = by_name(summary.summarize(ns))["prism"]
    assert o["counts"]["faces"] > shape_measure.LIGHT_FACES and "valid" not in o
    assert o["volume"] == pytest.approx(ns["prism"].volume, rel=1e-6)


def test_each_distinct_shape_is_validated_once(monkeypatch):
    """BRepCheck runs once per distinct shape, however many names, copies or calls hold it (issue 22):
    a copy made two calls later reuses it, and so does a shape placed with a scale, under two names."""
    from jail.cad import measure
    checked: list = []
    real = measure.is_valid
    monkeypatch.setattr(measure, "is_valid", lambda s: checked.append(1) or real(s))
    ns = fresh(FILLETED)

    def call(code: str) -> int:
        exec(compile(code, "<test>", "exec"), ns)
        checked.clear()
        summary.summarize(ns, budget_s=5.0)
        return len(checked)
    assert call("again = part\nsolid = part.solid()") == 1  # bp, part, again, solid: one solid
    assert call("x = 1") == 0
    assert call("copy = part.moved(Location((50, 0, 0)))") == 0  # its entry was kept through the call before
    scaled = ("from OCP.gp import gp_Pnt, gp_Trsf\nfrom OCP.TopLoc import TopLoc_Location\n"
              "t = gp_Trsf()\nt.SetScale(gp_Pnt(0, 0, 0), 2)\n"
              "sc = Solid(Box(1, 2, 3).solid().wrapped.Moved(TopLoc_Location(t)))\nsc2 = Solid(sc.wrapped)")
    assert call(scaled) == 1
    assert call("asm = Compound([sc, sc2, copy])") == 0
    o = by_name(summary.summarize(ns))
    assert o["sc2"]["volume"] == o["sc"]["volume"] == 48.0 and o["sc2"]["bbox"]["size"] == [2.0, 4.0, 6.0]


def test_a_dict_of_shapes_is_one_item_read_without_its_own_methods():
    """A dict whose values are all shapes is summarised like a list of them; its values and length
    are read with dict's own methods, so a subclass's overrides (user code that loops or lies) are
    not called; a dict holding anything else keeps its repr."""
    ns = fresh("class Sly(dict):\n"
               "    def values(self):\n        raise RuntimeError('values called')\n"
               "    def __len__(self):\n        raise RuntimeError('len called')\n"
               "    def __iter__(self):\n        raise RuntimeError('iter called')\n"
               "parts = {'a': Box(1, 1, 1), 'b': Box(2, 1, 1).moved(Location((5, 0, 0)))}\n"
               "sly = Sly(parts)\n"
               "mixed = {'a': Box(1, 1, 1), 'n': 5}\n")
    items = by_name(summary.summarize(ns))
    for name in ("parts", "sly"):
        o = items[name]
        assert o["kind"] == "shapes" and o["length"] == 2 and o["of"] == "2 Box", o
        assert o["volume"] == pytest.approx(3.0) and close(o["bbox"]["min"], [-0.5, -0.5, -0.5]), o
        assert close(o["bbox"]["max"], [6.0, 0.5, 0.5]), o
    assert items["mixed"]["kind"] == "mapping" and items["mixed"]["length"] == 2, items["mixed"]

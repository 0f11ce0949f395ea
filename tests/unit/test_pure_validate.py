"""launcher/replies/validate.py directly: whatever JSON a jailed process sends, what the launcher
keeps is typed, finite, safe to show and bounded."""
from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from launcher.replies import sanitize
from launcher.replies import validate as V

PROPS = settings(max_examples=100, deadline=None, database=None)

TEXT = st.text(st.characters(exclude_categories=()) | st.sampled_from("\x1b\x9b\r\n\t\u202e\u2028\ud800"),
               max_size=60)
SCALARS = (st.none() | st.booleans() | st.integers() | st.integers(-2 ** 80, 2 ** 80)
           | st.floats(allow_nan=True, allow_infinity=True) | TEXT)
JSONISH = st.recursive(SCALARS, lambda c: st.lists(c, max_size=6) | st.dictionaries(TEXT, c, max_size=6),
                       max_leaves=40)
VEC = st.lists(st.floats(allow_nan=True, allow_infinity=True) | SCALARS, min_size=3, max_size=3) | JSONISH
SUMMARY = st.fixed_dictionaries({}, optional={
    "name": TEXT | JSONISH, "type": TEXT | JSONISH, "kind": TEXT, "of": TEXT, "change": TEXT, "repr": TEXT,
    "dtype": TEXT, "summary_error": TEXT, "volume": SCALARS, "area": SCALARS, "length": SCALARS,
    "valid": SCALARS, "empty": SCALARS, "count": SCALARS, "shape": st.lists(SCALARS, max_size=40) | JSONISH,
    "bbox": st.fixed_dictionaries({"min": VEC, "max": VEC, "size": VEC}) | JSONISH,
    "counts": st.dictionaries(TEXT, SCALARS, max_size=20) | JSONISH,
    "extra_field": JSONISH, "__class__": JSONISH,
})
ERROR = st.fixed_dictionaries({}, optional={
    "type": TEXT | JSONISH, "message": TEXT | JSONISH, "line": SCALARS, "col": SCALARS, "source_line": TEXT,
    "rule": TEXT, "text": TEXT, "hint": TEXT, "function": TEXT, "context": st.lists(TEXT | SCALARS) | JSONISH,
    "origin": st.fixed_dictionaries({}, optional={"call": SCALARS, "line": SCALARS, "function": TEXT,
                                                  "source_line": TEXT, "context": st.lists(TEXT)}) | JSONISH,
    "odd": JSONISH,
})
RESULT = st.fixed_dictionaries({}, optional={
    "t": st.just("result"), "ok": SCALARS, "stdout": TEXT | st.text(max_size=3000) | JSONISH,
    "stderr": TEXT | st.text(max_size=3000) | JSONISH, "truncated": SCALARS,
    "objects": st.lists(SUMMARY | JSONISH, max_size=8) | JSONISH, "error": ERROR | JSONISH,
    "duration_ms": SCALARS, "deleted": st.lists(TEXT | SCALARS, max_size=8) | JSONISH,
    "value": SUMMARY | JSONISH, "call": SCALARS, "note": TEXT | JSONISH,
    "newer_field": JSONISH, "x-y": JSONISH,
})


def walk(v):
    """Every value in a nested structure (dict keys included)."""
    yield v
    if isinstance(v, list):
        for x in v:
            yield from walk(x)
    elif isinstance(v, dict):
        for k, x in v.items():
            yield k
            yield from walk(x)


def assert_safe(v, *, keep: str = "\n\t") -> None:
    json.dumps(v, allow_nan=False)  # JSON types only, finite numbers only
    for x in walk(v):
        if isinstance(x, str):
            assert not sanitize.unsafe(x, keep), x
        elif isinstance(x, float):
            assert math.isfinite(x)
        elif isinstance(x, int) and not isinstance(x, bool):
            assert abs(x) <= 2 ** 53


# ------------------------------------------------------------------ scalars
@PROPS
@given(JSONISH)
def test_number_is_a_finite_non_bool_number_or_none(x):
    n = V.number(x)
    if n is not None:
        assert type(n) in (int, float) and math.isfinite(n) and n == x
        assert type(n) is float or abs(n) <= 2 ** 53  # larger ints lose precision in JSON readers


@PROPS
@given(JSONISH, st.integers(0, 10 ** 9))
def test_count_is_an_int_in_range_or_none(x, hi):
    n = V.count(x, hi)
    if n is not None:
        assert type(n) is int and 0 <= n <= hi and n == x


@pytest.mark.parametrize("x", [True, False, math.nan, math.inf, -math.inf, 2 ** 53 + 1, "1", None, [1]])
def test_number_refuses(x):
    assert V.number(x) is None


@PROPS
@given(JSONISH, st.integers(0, 300))
def test_line_is_one_safe_line_or_none(x, cap):
    s = V.line(x, cap)
    if not isinstance(x, str):
        assert s is None
    else:
        assert isinstance(s, str) and len(s) <= cap + len(" [cut]")
        assert not sanitize.unsafe(s, keep="") and "\n" not in s


# ------------------------------------------------------------------ generic copies
@PROPS
@given(JSONISH, st.integers(1, 6), st.integers(1, 10), st.integers(0, 100))
def test_bounded_is_typed_finite_safe_shallow_and_short(v, depth, items, str_cap):
    out = V.bounded(v, depth=depth, items=items, str_cap=str_cap)
    assert_safe(out)

    def shape(x, d):
        if isinstance(x, (list, dict)):
            assert d < depth and len(x) <= items
            for y in (x.values() if isinstance(x, dict) else x):
                shape(y, d + 1)
        elif isinstance(x, str):
            assert len(x) <= str_cap + len(" [cut]")
    shape(out, 0)


def test_bounded_caps_scalars_by_its_budget():
    big = [["x" * 100] * 50] * 50  # 250k characters of strings
    out = V.bounded(big, depth=3, items=64, str_cap=2000, budget=V._Budget(4096))
    assert len(json.dumps(out)) < 3 * 4096


def test_bounded_caps_structure_by_its_budget():
    nested = [[[[] for _ in range(16)] for _ in range(16)] for _ in range(16)]  # 4k empty lists
    out = V.bounded(nested, depth=4, items=64, budget=V._Budget(1024))
    assert len(json.dumps(out)) < 4 * 1024


@PROPS
@given(JSONISH)
def test_evidence_is_a_safe_dict(v):
    out = V.evidence(v)
    assert isinstance(out, dict)
    assert_safe(out)


# ------------------------------------------------------------------ execute results
@PROPS
@given(RESULT, st.integers(0, 4096))
def test_result_is_typed_bounded_and_safe(msg, max_out):
    r = V.result(msg, max_output_bytes=max_out, max_result_bytes=64 * 1024)
    assert_safe(r)
    assert {"ok", "stdout", "stderr", "truncated", "objects", "error", "duration_ms", "deleted", "value",
            "call"} <= set(r)
    assert type(r["ok"]) is bool and r["ok"] == (msg.get("ok") is True)
    assert type(r["truncated"]) is bool
    assert isinstance(r["stdout"], str) and isinstance(r["stderr"], str)
    # the two streams together: the byte cap plus the launcher's own short notes
    assert len(r["stdout"].encode()) + len(r["stderr"].encode()) <= max_out + 256
    assert isinstance(r["objects"], list) and len(r["objects"]) <= V.MAX_OBJECTS
    assert all(isinstance(o, dict) and isinstance(o["name"], str) and isinstance(o["type"], str)
               for o in r["objects"])
    assert (r["error"] is None) == r["ok"]
    if r["error"] is not None:
        assert isinstance(r["error"]["type"], str) and r["error"]["type"]
        assert isinstance(r["error"]["message"], str) and len(r["error"]["message"]) <= V.MESSAGE_CAP + 6
    assert r["duration_ms"] is None or (r["duration_ms"] >= 0)
    assert r["call"] is None or (type(r["call"]) is int and 0 <= r["call"] <= 10 ** 9)
    assert isinstance(r["deleted"], list) and len(r["deleted"]) <= V.MAX_OBJECTS
    assert len(set(r) - V._RESULT_KNOWN - {"note"}) <= V.MAX_EXTRA_KEYS


def test_result_of_a_thousand_objects_keeps_the_cap_and_counts_the_rest():
    msg = {"ok": True, "objects": [{"name": f"o{i}", "type": "Box", "volume": 1.0} for i in range(1000)]}
    r = V.result(msg, max_output_bytes=1000, max_result_bytes=10 ** 6)
    assert len(r["objects"]) == V.MAX_OBJECTS
    last = r["objects"][-1]
    assert last["kind"] == "omitted" and last["count"] == 1000 - (V.MAX_OBJECTS - 1)


def test_result_cuts_huge_output_head_and_tail():
    r = V.result({"ok": True, "stdout": "A" * 1500 + "\x1b[2J" + "Z" * 1500}, max_output_bytes=1000,
                 max_result_bytes=64 * 1024)
    assert r["truncated"] is True and r["stdout"].startswith("A" * 400) and "Z\n[output cut" in r["stdout"]
    assert "bytes not shown ...]" in r["stdout"] and len(r["stdout"].encode()) <= 1000 + 256
    r = V.result({"ok": True, "stdout": "\x1b" * 100_000}, max_output_bytes=1000, max_result_bytes=64 * 1024)
    assert "\x1b" not in r["stdout"] and r["truncated"] and len(r["stdout"].encode()) <= 1000 + 256


@PROPS
@given(RESULT, st.integers(0, 4096))
def test_partial_is_typed_bounded_and_safe(msg, max_out):
    p = V.partial(msg, max_output_bytes=max_out)
    assert_safe(p)
    assert set(p) == {"stdout", "stderr", "line", "function", "source_line", "context", "origin"}
    assert len(p["stdout"].encode()) + len(p["stderr"].encode()) <= max_out + 128
    assert len(p["context"]) <= V.CONTEXT_MAX


@PROPS
@given(st.fixed_dictionaries({}, optional={"ok": SCALARS, "size": SCALARS, "error": JSONISH, "format": JSONISH,
                                           "view": JSONISH, "check": JSONISH, "source": JSONISH,
                                           "other": JSONISH}))
def test_export_meta_is_typed_and_safe(msg):
    m = V.export_meta(msg)
    assert_safe(m)
    assert m["t"] == "export" and type(m["ok"]) is bool
    assert m["size"] is None or (type(m["size"]) is int and m["size"] >= 0)
    assert "error" not in m or (isinstance(m["error"], str) and "\n" not in m["error"])

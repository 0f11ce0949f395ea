"""The strict profile: the demo model and every export format still work under it,
and the per-call timeout_s can shorten the profile's limit, never past its max_timeout_s (= timeout_s)."""
from __future__ import annotations

import pytest

from launcher.cli import DEMO_CODE
from launcher.tools.toolset import ToolSet
from tests.helpers import zygotes


@pytest.fixture(scope="module")
def strict(tmp_path_factory):
    out = tmp_path_factory.mktemp("strict-out")
    with zygotes.on_shared_zygote("strict", output_dir=out, spare_sessions=0) as L:
        ts = ToolSet(L)
        yield L, ts, out
        ts.close()


def test_strict_profile_is_tighter_than_default():
    from launcher.profile import load_profile
    d, s = load_profile("default"), load_profile("strict")
    assert s.limits.timeout_s < d.limits.timeout_s and s.limits.memory_mb < d.limits.memory_mb
    assert s.required("mountview") and s.require_landlock_abi >= 4


def test_demo_model_under_strict(strict):
    _, ts, _ = strict
    r = ts.call("execute", {"code": DEMO_CODE})
    assert r.get("ok"), r
    part = next(o for o in r["objects"] if o["name"] == "part")
    assert part["volume"] == pytest.approx(45912.1, rel=1e-3)
    probe = ts.session.probe()
    assert probe["Seccomp"] == "2" and probe["NoNewPrivs"] == "1" and probe["CapEff"] == "0" * 16


@pytest.mark.parametrize("fmt", ["step", "stl", "brep", "svg", "dxf", "3mf"])
def test_every_export_format_under_strict(strict, fmt):
    _, ts, out = strict
    assert ts.call("execute", {"code": "box = Box(10, 20, 30) - Cylinder(3, 30)"}).get("ok")
    r = ts.call("export", {"object_name": "box", "filename": f"strict-box.{fmt}", "format": fmt})
    assert "error" not in r, r
    assert (out / f"strict-box.{fmt}").stat().st_size == r["size"] > 0


def test_per_call_timeout_shortens_but_never_extends(strict):
    _, ts, _ = strict
    assert ts.call("execute", {"code": "keep = 7"}).get("ok")
    r = ts.call("execute", {"code": "while True:\n    pass", "timeout_s": 1})
    assert r["error"]["type"] == "ExecutionTimeout" and "1s wall-clock" in r["error"]["message"], r
    assert r["wall_ms"] < 5000
    r = ts.call("execute", {"code": "while True:\n    pass", "timeout_s": 10_000})
    assert r["error"]["type"] == "InvalidRequest" and "max_timeout_s = 10 s" in r["error"]["message"], r
    assert ts.profile.limits.max_timeout_s == ts.profile.limits.timeout_s == 10  # strict never extends
    r = ts.call("execute", {"code": "print(keep)", "timeout_s": -1})
    assert isinstance(r.get("error"), str) and "timeout_s" in r["error"], r  # refused by the tool's schema
    assert ts.call("execute", {"code": "print(keep)"})["stdout"] == "7\n"


def test_exporter_hints_say_strict_code_writes_no_files(strict):
    """Through the tools (the launcher words hints and notes from its own profile): under strict,
    whose code writes no files, an exporter misused or unreached points to the export tool."""
    _, ts, _ = strict
    assert ts.call("execute", {"code": "b = Box(1, 2, 3)"}).get("ok")
    r = ts.call("execute", {"code": "export_step(b, 'b.step')"})
    assert "this profile lets code write no files" in r["error"]["hint"], r
    r = ts.call("execute", {"code": "if b is None:\n    export_step(b, 'b.step')"})
    assert r.get("ok") and r["note"].startswith("nothing was written: this profile lets code write no files"), r

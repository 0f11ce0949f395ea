"""The layer table (jail/layers/table.py): one ordered list of the nine layers, and one helper
that applies a stage with the required / best-effort / off semantics. Real layers on the real
kernel, in forked children (tests/unit/jailchild.py)."""
import dataclasses
import os

import pytest

from jail.layers.table import STAGES, TABLE, Context, apply_stage
from jail.wire.errors import LayerError
from jail.wire.profile import LAYERS
from launcher.profile import load_profile

from jailchild import in_child, in_session

PROFILE = load_profile("default")


def _profile(**layers):
    return dataclasses.replace(PROFILE, layers={**PROFILE.layers, **layers})


def test_one_table_in_the_profile_order():
    assert tuple(layer.name for layer in TABLE) == LAYERS
    assert [layer.number for layer in TABLE] == ["1", "2", "3", "4a", "4b", "5", "6", "7", "8"]
    assert {layer.name: layer.stage for layer in TABLE} == {
        "userns": "zygote", "namespaces": "keeper", "rlimits": "init", "mountview": "init", "landlock": "init",
        "privileges": "init", "seccomp": "init", "ast_policy": "call", "builtins": "call"}
    for layer in TABLE:
        assert layer.stage in STAGES and layer.blocks
        assert (layer.apply is None) == (layer.stage == "call"), layer.name


def test_call_stage_is_not_applied_by_a_process():
    with pytest.raises(ValueError):
        apply_stage("call", PROFILE.layers, Context({}, PROFILE))


def test_init_stage_applies_every_os_layer_in_order():
    def fn():
        seen = []
        ev = apply_stage("init", PROFILE.layers, Context({"namespaces": {"status": "applied"}}, PROFILE),
                         on_layer=seen.append)
        return {"seen": seen, "status": {k: v["status"] for k, v in ev.items()}, "ns_pid": ev["namespaces"]["pid"],
                "cwd": os.getcwd()}

    out = in_session(fn)
    assert out["signal"] is None
    ok = out["ok"]
    assert ok["seen"] == ["rlimits", "mountview", "landlock", "privileges", "seccomp"]
    assert ok["status"] == {name: "applied" for name in
                            ("namespaces", "rlimits", "mountview", "landlock", "privileges", "seccomp")}
    assert ok["ns_pid"] == 1  # the namespaces layer's second step ran in init (pid 1)


def test_off_layers_are_recorded_and_not_announced():
    def fn():
        seen = []
        modes = {**PROFILE.layers, "rlimits": "off", "mountview": "off", "landlock": "off", "privileges": "off",
                 "seccomp": "off"}
        ev = apply_stage("init", modes, Context({}, PROFILE), on_layer=seen.append)
        return {"seen": seen, "ev": ev}

    out = in_child(fn)
    assert out["seen"] == []
    assert out["ev"] == {name: {"status": "off"} for name in
                         ("rlimits", "mountview", "landlock", "privileges", "seccomp")}


def test_required_fails_closed_best_effort_skips():
    only_landlock = {"rlimits": "off", "mountview": "off", "privileges": "off", "seccomp": "off"}

    def run(mode, **changes):
        def fn():
            p = dataclasses.replace(_profile(**only_landlock, landlock=mode), **changes)
            try:
                return {"ev": apply_stage("init", p.layers, Context({}, p))}
            except LayerError as e:
                return {"error": [e.layer, e.reason]}
        return in_child(fn)

    # a layer the host cannot apply
    out = run("required", require_landlock_abi=99)
    assert out["error"][0] == "landlock" and "needs >= 99" in out["error"][1], out
    out = run("best-effort", require_landlock_abi=99)
    assert out["ev"]["landlock"]["status"] == "skipped" and "needs >= 99" in out["ev"]["landlock"]["reason"]
    # a bug in a layer (here: a malformed profile value) is a failure too, never an open jail
    out = run("required", require_landlock_abi="x")
    assert out["error"][0] == "landlock" and out["error"][1].startswith("TypeError: "), out
    out = run("best-effort", require_landlock_abi="x")
    assert out["ev"]["landlock"] == {"status": "skipped", "reason": out["ev"]["landlock"]["reason"]}
    assert out["ev"]["landlock"]["reason"].startswith("TypeError: ")


def test_mountview_needs_the_sessions_own_mount_namespace():
    def fn():
        p = _profile(rlimits="off", landlock="off", privileges="off", seccomp="off", mountview="best-effort")
        ev = apply_stage("init", p.layers, Context({"namespaces": {"status": "off"}}, p))
        try:
            apply_stage("init", _profile(**{**p.layers, "mountview": "required"}).layers, Context({}, p))
        except LayerError as e:
            return {"ev": ev, "error": [e.layer, e.reason]}
        return {"ev": ev}

    out = in_child(fn)
    reason = "no private mount namespace (namespaces layer off)"
    assert out["ev"]["mountview"] == {"status": "skipped", "reason": reason}
    assert out["error"] == ["mountview", reason]


def test_zygote_and_keeper_stages():
    def fn():
        off = apply_stage("zygote", {"userns": "off"}, Context({}))
        ev = apply_stage("zygote", {"userns": "required"}, Context({}))
        ns = apply_stage("keeper", PROFILE.layers, Context({"containment": {}}, PROFILE))
        return {"off": off, "userns": ev["userns"], "keeper": ns, "uid_map": open("/proc/self/uid_map").read().split()}

    out = in_child(fn)
    assert out["off"] == {"userns": {"status": "off"}}
    assert out["userns"]["status"] == "applied" and out["userns"]["uid_map"][0] == "0"
    assert out["keeper"] == {"containment": {}, "namespaces": {"status": "applied"}}
    assert out["uid_map"][:2] == ["0", "0"]  # the session's user namespace, nested in the zygote's

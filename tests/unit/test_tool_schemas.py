"""Tool arguments: every declared schema is valid JSON Schema, and check() refuses what it must.

Pure functions, no jail: launcher/tools/schema.py and each Tool's declared schema.
"""
from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from launcher.profile import load_profile
from launcher.tools import NAMES, TOOLS, get
from launcher.tools.schema import ArgumentError, fill

PROFILE = load_profile("default")


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
@pytest.mark.parametrize("profile", [None, PROFILE], ids=["generic", "default"])
def test_schema_sent_to_clients_is_valid(tool, profile):
    s = tool.input_schema(profile)
    Draft202012Validator.check_schema(s)
    assert s["type"] == "object" and s["additionalProperties"] is False
    assert s["required"] == list(tool.required) and set(s["required"]) <= set(s["properties"])
    for name, prop in s["properties"].items():
        assert prop.get("description") and "{" + "timeout_s}" not in prop["description"], (tool.name, name)
    assert tool.describe(profile) and "{allowed_imports}" not in tool.describe(profile)


def test_profile_facts_fill_descriptions_and_leave_json_braces():
    assert "Allowed imports: build123d, math" in get("execute").describe(PROFILE)
    assert f"{PROFILE.limits.timeout_s:g} s wall clock" in get("execute").describe(PROFILE)
    assert "the profile's s wall clock" in get("execute").describe(None)
    assert fill('{"axis": "z"} {max_snapshots}', PROFILE) == f'{{"axis": "z"}} {PROFILE.limits.max_snapshots}'


def _refused(tool: str, args) -> str:
    with pytest.raises(ArgumentError) as e:
        get(tool).check(args)
    return str(e.value)


@pytest.mark.parametrize("tool,args,message", [
    ("execute", {}, "missing required argument(s): code"),
    ("execute", {"code": 5}, "code must be of type string"),
    ("execute", {"code": None}, "code must be of type string"),
    ("execute", {"code": "x", "bogus": 1}, "unknown argument(s) 'bogus'; execute takes code, timeout_s"),
    ("execute", {"code": "x", "timeout_s": -1}, "timeout_s must be > 0"),
    ("execute", {"code": "x", "timeout_s": True}, "timeout_s must be of type number"),  # a bool is no number
    ("execute", {"code": "x", "timeout_s": math.nan}, "timeout_s must be a finite number"),
    ("execute", {"code": "x", "timeout_s": math.inf}, "timeout_s must be a finite number"),
    ("execute", [1], "arguments must be an object"),
    ("save_snapshot", {"name": "../x"}, "name '../x' does not match"),
    ("save_snapshot", {"name": "a" * 65}, "name is 65 characters long; the limit is 64"),
    ("export", {"object_name": "p", "filename": ""}, "filename must not be empty"),
    ("export", {"object_name": "p", "filename": "a" * 1025}, "the limit is 1024"),
    ("export", {"object_name": "p", "filename": "p.obj", "format": "obj"}, "format must be one of: '', 'step'"),
    ("export", {"object_name": "", "filename": "p.step"}, "object_name must not be empty"),
    ("render", {"width": 5000}, "width must be <= 1600"),
    ("render", {"height": 10}, "height must be >= 64"),
    ("render", {"width": 800.0}, "width must be of type integer"),  # 1.0 is not an integer here
    ("render", {"view": "side"}, "view must be one of: 'iso'"),
    ("render", {"azimuth": 400}, "azimuth must be <= 360"),
    # nested: items and properties are checked too, with the path in the message
    ("render", {"objects": "part"}, "objects must be of type array"),
    ("render", {"objects": ["a", 3]}, "objects[1] must be of type string"),
    ("render", {"objects": ["a", ""]}, "objects[1] must not be empty"),
    ("render", {"objects": ["x" * 201]}, "objects[0] is 201 characters long; the limit is 200"),
    ("render", {"objects": ["a"] * 65}, "objects must have at most 64 item(s)"),
    ("render", {"section": "z"}, 'section must be of type object: A cutting plane: {"axis": "z", "offset": 5} or '
                                 '{"point": [x, y, z], "normal": [nx, ny, nz]}'),
    ("render", {"section": {"axis": "w"}}, "section.axis must be one of: 'x', 'y', 'z'"),
    ("render", {"section": {"axis": "z", "offset": "5"}}, "section.offset must be of type number"),
    ("render", {"section": {"axis": "z", "offset": 1e10}}, "section.offset must be <= 1000000000"),
    ("render", {"section": {"normal": [0, 0]}}, "section.normal must have at least 3 item(s)"),
    ("render", {"section": {"normal": [0, 0, 1, 0]}}, "section.normal must have at most 3 item(s)"),
    ("render", {"section": {"normal": [0, 0, math.inf]}}, "section.normal[2] must be a finite number"),
    ("render", {"section": {"point": [0, True, 0], "normal": [0, 0, 1]}}, "section.point[1] must be of type number"),
    ("render", {"section": {"normal": [0, 0, 1], "foo": 1}}, "section: unknown key(s) 'foo'"),
    ("api", {"name": "a" * 5000}, "name is 5000 characters long; the limit is 200"),
    ("api", {"name": "Box..x"}, "does not match"),
    ("api", {"query": "x" * 201}, "query is 201 characters long"),
    ("import_file", {"filename": "a.step", "name": "1x"}, "name '1x' does not match"),
    ("import_file", {"filename": "a.step", "name": "x", "format": "STEP"}, "format must be one of"),
    ("measure", {"object_name": 7}, "object_name must be of type string"),
    ("distance", {"a": "x"}, "missing required argument(s): b"),
])
def test_refused_with_a_message_naming_the_parameter(tool, args, message):
    assert message in _refused(tool, args)


def test_unknown_and_missing_arguments_come_first():
    assert _refused("export", {"bogus": 1, "format": 3}).startswith("unknown argument(s) 'bogus'")
    assert _refused("export", {"format": 3}).startswith("missing required argument(s): object_name, filename")
    # then parameters in declaration order, a wrong type before anything else about the same value
    assert _refused("render", {"height": 1, "width": "w"}) == "width must be of type integer"
    assert _refused("render", {"height": "h", "width": 1}) == "width must be >= 64"


def test_names_the_caller_made_up_are_cut_and_escaped():
    msg = _refused("execute", {"code": "x", "k" * 10_000: 1, "\x1b[2J": 2})
    assert len(msg) < 600 and "\x1b" not in msg and "'\\x1b[2J'" in msg
    msg = _refused("render", {"section": {"axis": "z", "\u202e" * 500: 1}})
    assert len(msg) < 600 and "\u202e" not in msg


def test_accepted_arguments_are_returned_with_null_meaning_not_given():
    assert get("execute").check({"code": "x", "timeout_s": None}) == {"code": "x"}
    assert get("execute").check({"code": "x", "timeout_s": 2}) == {"code": "x", "timeout_s": 2}
    sec = {"normal": [0, 0, 1], "point": [1, 2, 3.5]}
    assert get("render").check({"objects": ["a"], "section": sec, "width": 64}) == \
        {"objects": ["a"], "section": sec, "width": 64}
    assert get("list_inputs").check({}) == {}
    with pytest.raises(ArgumentError, match="code must be of type string"):
        get("execute").check({"code": None})  # a required argument cannot be null


@pytest.mark.parametrize("given_format,canonical", [("STP", "step"), (".step", "step"), ("Step", "step"),
                                                   ("brp", "brep"), ("STL", "stl"), ("py", "py"), ("", "")])
def test_export_format_spellings_become_the_schemas(given_format, canonical):
    args = {"object_name": "p", "filename": "p.x", "format": given_format}
    assert get("export").check(args)["format"] == canonical


def test_import_format_takes_stp_but_no_other_spelling():
    assert get("import_file").check({"filename": "a.stp", "name": "a", "format": "stp"})["format"] == "stp"
    assert "format must be one of" in _refused("import_file", {"filename": "a", "name": "a", "format": ".step"})


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                     max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(tool=st.sampled_from(NAMES), args=st.dictionaries(
    st.sampled_from(["code", "name", "objects", "section", "width", "view", "object_name", "filename", "format",
                     "a", "b", "query", "timeout_s", "azimuth", "x"]), _JSON, max_size=5))
def test_check_accepts_only_what_the_schema_does(tool, args):
    """Whatever the arguments: an ArgumentError, or arguments the published schema accepts (with
    nulls dropped), every number in them finite. Nothing else is ever raised."""
    t = get(tool)
    try:
        out = t.check(args)
    except ArgumentError as e:
        assert str(e) and len(str(e)) < 2000
        return
    assert set(out) <= set(t.params) and set(t.required) <= set(out)
    Draft202012Validator(t.input_schema()).validate(out)

    def finite(v):
        if isinstance(v, float):
            assert math.isfinite(v)
        elif isinstance(v, list):
            for x in v:
                finite(x)
        elif isinstance(v, dict):
            for x in v.values():
                finite(x)
    finite(out)

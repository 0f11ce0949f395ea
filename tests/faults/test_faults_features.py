"""A session whose code patched the jail's ``features`` op (Python layers off: only the OS layers,
profile ``os_only``) sends hostile replies: NaN, huge lists, wrong types, text with terminal
sequences and bidi controls. Through the real MCP stdio server and the ``mcp`` SDK client (which
validates ``structuredContent`` against the listed ``outputSchema`` and raises if it does not
conform), every call is either a valid, conforming, safe reply or a clear error, and the session
keeps answering.
"""
from __future__ import annotations

import json

import pytest

from tests.integration import mcpclient
from tests.faults.test_faults_hostile_replies import ANSI, BAD_CHARS as BAD, PATCH_FORKS, assert_safe, call_within
from tests.helpers.faults import profile_path
from tests.unit import test_features as unit

import inspect

PLATE_CODE = inspect.getsource(unit.plate) + "\nplate = plate()\nn = 41\n"

# user code: the forks of this head answer ``features`` with HOSTILE(real result)
PATCH = PATCH_FORKS + r'''
import jail.cad.features as F
def hostile(real, ns, name, kinds=None):
    return HOSTILE(real(ns, name, kinds))
patch_forks(F, "features", hostile)
'''

STEP = ("center=[35, 0, 10], axis=[0, 0, -1], direction=[0, 1, 0], side=[1, 0, 0], width=10, length=60, depth=10, "
        "ends=['open', 'open']")  # a valid step, for the cases to spoil

SLOT = ("center=[0, 0, 15], length=60, width=16, axis=[0, 0, -1], direction=[0, 1, 0], depth=8, through=False, "
        "open_end=True, arc=None, counterbore=None, ends=['open', 'open']")  # a valid V groove's, less its draft

POCKET = ("center=[0, 0, 10], axis=[0, 0, -1], depth=5, through=False, width=16, length=30, direction=[1, 0, 0], "
          "sides=1, shape='oval', corner_radius=None, draft=None, curved=1, island=None, sector=None")  # a valid oval

CASES = {  # name: (body of HOSTILE(r), what the reply must be: "ok" or a substring of the error)
    "nan": ("r['holes'][0]['diameter'] = float('nan'); return r", "error"),
    "inf_center": ("r['holes'][0]['center'] = [float('inf'), 0, 0]; return r", "error"),
    "string_number": ("r['holes'][0]['diameter'] = '6.6'; return r", "holes[0].diameter"),
    "bool_as_int": ("r['fillets'][0]['count'] = True; return r", "fillets[0].count"),
    "short_vector": ("r['holes'][1]['axis'] = [0, 0]; return r", "holes[1].axis"),
    "ansi_type": (f"r['patterns'][0]['type'] = {ANSI!r}; return r", "patterns[0]"),
    "ansi_keys": (f"r['holes'][0][{ANSI!r}] = {ANSI!r}; r[{ANSI!r}] = 1; return r", "ok"),
    "many_holes": ("r['holes'] = r['holes'][:1] * 500; r['patterns'] = []; return r", "ok"),
    "huge_list": ("r['fillets'] = [r['fillets'][0]] * 400000; return r", "error"),
    "not_a_dict": ("return [1, 2, 3]", "error"),
    "member_out_of_range": ("r['patterns'][0]['members'] = [10 ** 6]; return r", "patterns[0].members[0]"),
    "ansi_error": (f"raise ValueError({ANSI!r} * 20)", "ValueError"),
    "open_end_string": ("r['slots'] = [dict(center=[0, 0, 0], length=5, width=10, axis=[0, 0, -1], "
                        "direction=[1, 0, 0], depth=None, through=True, open_end='yes')]; return r", "slots[0].open_end"),
    "groove_profile": ("r['grooves'] = [dict(center=[0, 0, 0], axis=[0, 0, 1], diameter=10, depth=1, width=2, "
                       f"profile={ANSI!r})]; return r", "grooves[0].profile"),
    "groove_face": ("r['grooves'] = [dict(center=[0, 0, 0], axis=[0, 0, 1], diameter=10, depth=1, width=2, "
                    "profile='flat', internal=False, face='yes')]; return r", "grooves[0].face"),
    "arc_sweep": ("r['slots'] = [dict(center=[0, 0, 0], length=5, width=10, axis=[0, 0, -1], direction=[1, 0, 0], "
                  "depth=None, through=True, open_end=False, arc=dict(center=[0, 0, 0], radius=3, sweep=720))]; "
                  "return r", "slots[0].arc.sweep"),
    "arc_text": ("r['slots'] = [dict(center=[0, 0, 0], length=5, width=10, axis=[0, 0, -1], direction=[1, 0, 0], "
                 f"depth=None, through=True, open_end=False, arc={ANSI!r})]; return r", "slots[0].arc"),
    "slot_counterbore": ("r['slots'] = [dict(center=[0, 0, 0], length=5, width=10, axis=[0, 0, -1], "
                         "direction=[1, 0, 0], depth=None, through=True, open_end=False, arc=None, "
                         f"counterbore={ANSI!r})]; return r", "slots[0].counterbore"),
    "pocket_sector": ("r['pockets'] = [dict(center=[0, 0, 0], axis=[0, 0, -1], depth=None, through=True, width=5, "
                      "length=6, direction=[1, 0, 0], sides=4, shape='sector', corner_radius=None, draft=None, "
                      f"curved=2, sector={ANSI!r})]; return r", "pockets[0].sector"),
    "pocket_curved": ("r['pockets'] = [dict(center=[0, 0, 0], axis=[0, 0, -1], depth=None, through=True, width=5, "
                      "length=6, direction=[1, 0, 0], sides=4, shape='other', corner_radius=None, draft=None, "
                      "curved=10 ** 9, sector=None)]; return r", "pockets[0].curved"),
    "pocket_island": ("r['pockets'] = [dict(center=[0, 0, 0], axis=[0, 0, -1], depth=3, through=False, width=5, "
                      "length=6, direction=[1, 0, 0], sides=4, shape='rectangle', corner_radius=None, draft=None, "
                      "curved=0, sector=None, island=dict(count=-1, width=1, length=2))]; return r",
                      "pockets[0].island.count"),
    "keyway_nan": ("r['holes'][0]['keyway'] = {'width': float('nan'), 'depth': 1}; return r", "error"),
    "partial_string": ("r['holes'][0]['partial'] = 'yes'; return r", "holes[0].partial"),
    "draft_range": ("r['holes'][0]['draft'] = 91; return r", "holes[0].draft"),
    "draft_text": (f"r['holes'][0]['draft'] = {ANSI!r}; return r", "holes[0].draft"),
    "boss_draft": ("r['bosses'] = [dict(center=[0, 0, 0], axis=[0, 0, 1], diameter=5, height=3, draft=-100)]; "
                   "return r", "bosses[0].draft"),
    "keyway_text": (f"r['holes'][0]['keyway'] = {ANSI!r}; return r", "holes[0].keyway"),
    "pocket_shape": ("r['pockets'] = [dict(center=[0, 0, 0], axis=[0, 0, -1], depth=None, through=True, width=5, "
                     f"length=6, direction=[1, 0, 0], sides=6, shape={ANSI!r}, corner_radius=None)]; return r",
                     "pockets[0].shape"),
    "pocket_draft": ("r['pockets'] = [dict(center=[0, 0, 0], axis=[0, 0, -1], depth=None, through=True, width=5, "
                     "length=6, direction=[1, 0, 0], sides=4, shape='rectangle', corner_radius=None, draft='5')]; "
                     "return r", "pockets[0].draft"),
    "pocket_sides": ("r['pockets'] = [dict(center=[0, 0, 0], axis=[0, 0, -1], depth=None, through=True, width=5, "
                     "length=6, direction=[1, 0, 0], sides=10 ** 30, shape='regular', corner_radius=None)]; return r",
                     "pockets[0].sides"),
    "staggered_counts": ("p = r['patterns'][0]; p.update(type='staggered', counts=[2, 2, 2], pitch=[1, 1], "
                         "directions=[[1, 0, 0], [0, 1, 0]]); return r", "patterns[0]"),
    "bundle_counts": ("p = r['patterns'][0]; p.update(type='bundle', counts=[2], pitch=[1, 1], "
                      "directions=[[1, 0, 0], [0, 1, 0]]); return r", "patterns[0]"),
    "radial_nan": ("p = r['patterns'][0]; p['type'] = 'radial'; p['radius'] = float('nan'); return r", "error"),
    "radial_no_axis": ("p = r['patterns'][0]; p['type'] = 'radial'; p.pop('axis', None); return r", "patterns[0].axis"),
    "slot_ends": ("r['slots'] = [dict(center=[0, 0, 0], length=5, width=10, axis=[0, 0, -1], direction=[1, 0, 0], "
                  "depth=2, through=False, open_end=True, arc=None, counterbore=None, "
                  f"ends=['open', {ANSI!r}])]; return r", "slots[0].ends"),
    "slot_draft_range": (f"r['slots'] = [dict({SLOT}, draft=-91)]; return r", "slots[0].draft"),
    "slot_draft_text": (f"r['slots'] = [dict({SLOT}, draft={ANSI!r})]; return r", "slots[0].draft"),
    "slot_draft_nan": (f"r['slots'] = [dict({SLOT}, draft=float('nan'))]; return r", "error"),
    "slot_draft_bool": (f"r['slots'] = [dict({SLOT}, draft=True)]; return r", "slots[0].draft"),
    "slot_tee_text": (f"r['slots'] = [dict({SLOT}, tee={ANSI!r})]; return r", "slots[0].tee"),
    "slot_tee_negative": (f"r['slots'] = [dict({SLOT}, tee=dict(width=-16, height=6))]; return r",
                          "slots[0].tee.width"),
    "slot_tee_keys": (f"r['slots'] = [dict({SLOT}, tee={{'width': 16, 'height': 6, {ANSI!r}: 1}})]; return r", "ok"),
    # a V whose numbers disagree (width 1, depth 10**6, draft 45): read as the numbers say, no V
    "slot_draft_odd_v": (f"r['slots'] = [dict(dict({SLOT}), width=1, depth=10 ** 6, draft=45)]; return r", "ok"),
    "step_ends": (f"r['steps'] = [dict(dict({STEP}), ends=['round', 'open'])]; return r", "steps[0].ends"),
    "step_side": (f"r['steps'] = [dict(dict({STEP}), side=[0, 1])]; return r", "steps[0].side"),
    "step_nan": (f"r['steps'] = [dict(dict({STEP}), width=float('nan'))]; return r", "error"),
    "step_text": (f"r['steps'] = [dict(dict({STEP}), depth={ANSI!r})]; return r", "steps[0].depth"),
    "many_steps": (f"r['steps'] = [dict({STEP})] * 500; return r", "ok"),
    "faceted_more_triangles": ("r['faceted'] = {'faces': 3, 'triangles': 5}; return r", "faceted.triangles"),
    "faceted_text": (f"r['faceted'] = {ANSI!r}; return r", "faceted"),
    "faceted_float": ("r['faceted'] = {'faces': 3.5, 'triangles': 1}; return r", "faceted.faces"),
    "faceted_keys": (f"r['faceted'] = {{'faces': 9, 'triangles': 9, {ANSI!r}: 1}}; return r", "ok"),
    "bores_text": (f"r['holes'][0]['bores'] = {ANSI!r}; return r", "holes[0].bores"),
    "bores_missing": ("r['holes'][0].pop('bores', None); return r", "holes[0].bores"),
    "bores_backwards": ("r['holes'][0]['bores'] = [dict(diameter=20, start=9, end=6)]; return r",
                        "holes[0].bores[0].start"),
    "bores_nan": ("r['holes'][0]['bores'] = [dict(diameter=float('nan'), start=1, end=2)]; return r", "error"),
    "bores_many": (f"r['holes'][0]['bores'] = [{{'diameter': 20, 'start': 1, 'end': 2, {ANSI!r}: 1}}] * 500; "
                   "return r", "ok"),
    "oval": (f"r['pockets'] = [dict({POCKET})]; return r", "ok"),
    "oval_no_side": (f"r['pockets'] = [dict(dict({POCKET}), sides=0)]; return r", "pockets[0].sides"),
    "one_sided_rectangle": (f"r['pockets'] = [dict(dict({POCKET}), shape='rectangle')]; return r", "pockets[0].sides"),
    "oval_shape_text": (f"r['pockets'] = [dict(dict({POCKET}), shape={ANSI!r})]; return r", "pockets[0].shape"),
    "freeform": (f"r['pockets'] = [dict(dict({POCKET}), shape='freeform')]; return r", "ok"),
    "freeform_no_side": (f"r['pockets'] = [dict(dict({POCKET}), shape='freeform', sides=0)]; return r",
                         "pockets[0].sides"),
    "freeform_curved_over_sides": (f"r['pockets'] = [dict(dict({POCKET}), shape='freeform', sides=2, curved=3)]; "
                                   "return r", "pockets[0].curved"),
    "ball_negative": ("r['holes'][0]['ball'] = -3; return r", "holes[0].ball"),
    "ball_nan": ("r['holes'][0]['ball'] = float('nan'); return r", "error"),
    "ball_text": (f"r['holes'][0]['ball'] = {ANSI!r}; return r", "holes[0].ball"),
    "ball": ("r['holes'][0]['ball'] = 3; return r", "ok"),
    # members repeated and shared by two radial patterns: a valid reply, one text line per pattern
    # a lattice's empty positions (stop 55): numbers, vectors of three, a list, at most PATTERN_EMPTY_CAP
    "empty_nan": ("p = r['patterns'][0]; p.update(type='grid', counts=[3, 3], pitch=[1, 1], "
                  "directions=[[1, 0, 0], [0, 1, 0]], empty=[[0, float('nan'), 0]]); return r", "error"),
    "empty_short": ("p = r['patterns'][0]; p.update(type='linear', pitch=1, direction=[1, 0, 0], empty=[[0, 0]]); "
                    "return r", "patterns[0].empty[0]"),
    "empty_string": (f"p = r['patterns'][0]; p.update(type='linear', pitch=1, direction=[1, 0, 0], empty={ANSI!r}); "
                     "return r", "patterns[0].empty"),
    "empty_huge": ("p = r['patterns'][0]; p.update(type='linear', pitch=1, direction=[1, 0, 0], "
                   "empty=[[1e11, -1e11, 0.5]] * 2000); return r", "ok"),
    # pads (stop 55): an enum, numbers, an int, vectors of three
    "pad_shape": (f"r['pads'] = [dict(center=[0, 0, 5], axis=[0, 0, 1], shape={ANSI!r}, width=1, length=2, "
                  "direction=[1, 0, 0], height=3, sides=4, corner_radius=None)]; return r", "pads[0].shape"),
    "pad_nan": ("r['pads'] = [dict(center=[0, 0, 5], axis=[0, 0, 1], shape='rectangle', width=1, length=2, "
                "direction=[1, 0, 0], height=float('inf'), sides=4, corner_radius=None)]; return r", "error"),
    "pad_sides_bool": ("r['pads'] = [dict(center=[0, 0, 5], axis=[0, 0, 1], shape='other', width=1, length=2, "
                       "direction=[1, 0, 0], height=3, sides=True, corner_radius=None)]; return r", "pads[0].sides"),
    "pads_many": ("r['pads'] = [dict(center=[0, 0, 5], axis=[0, 0, 1], shape='obround', width=1, length=2, "
                  f"direction=[1, 0, 0], height=3, sides=2, corner_radius=None, junk={ANSI!r})] * 300; "
                  "r['patterns'] = [dict(r['patterns'][0], of='pads', members=[0, 1, 99])]; return r", "ok"),
    "pad_member_out_of_range": ("r['patterns'][0]['of'] = 'pads'; return r", "patterns[0].members[0]"),
    "radial_overlap": ("p = dict(r['patterns'][0], type='radial', members=[0, 0, 1]); "
                       "r['patterns'] = [p, dict(p, members=[1, 2, 6])]; return r", "ok"),
}


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    d = tmp_path_factory.mktemp("features-faults")
    params = mcpclient.server_params(d / "out")
    args = list(params.args)
    args[args.index("--profile") + 1] = profile_path("os_only")
    params = params.model_copy(update={"args": args})
    with mcpclient.running(d / "out", d / "server-stderr.log", params=params) as c:
        assert c.text("execute", {"code": PLATE_CODE}).startswith("OK")
        yield c


@pytest.mark.parametrize("case", list(CASES))
def test_hostile_features_reply(client, case):
    body, expect = CASES[case]
    code = "def HOSTILE(r):\n    " + body + "\n" + PATCH
    assert client.text("execute", {"code": code}).startswith("OK")
    res = call_within(lambda: client.call("features", {"object_name": "plate"}))  # the SDK checks the schema
    text = "\n".join(c.text for c in res.content if c.type == "text")
    assert not any(c in text for c in BAD), repr(text[:300])
    assert len(text) < 20000
    if expect == "ok":
        assert res.is_error is False, text
        data = res.structured_content
        assert_safe(data)
        assert len(data["holes"]) <= 100 and not any(isinstance(k, str) and "\x1b" in k for k in data)
        if case == "many_holes":
            assert data["truncated"] == {"holes": 500} and "holes (500 found)" in text
        if case == "slot_tee_keys":
            assert data["slots"][0]["tee"] == {"width": 16, "height": 6} and "T-slot (cavity 16 wide, 6 high)" in text
        if case == "slot_draft_odd_v":
            assert data["slots"][0]["draft"] == 45 and "draft 45°" in text and " V " not in text, text
        if case == "ball":
            assert data["holes"][0]["ball"] == 3 and "spherical (ball r=3)" in text, text
        if case == "bores_many":  # capped, extra keys dropped, one clean line
            assert data["holes"][0]["bores"] == [{"diameter": 20, "start": 1, "end": 2}] * 8
            assert text.count(", bore d=20 at depth 1 to 2") == 8, text
        if case == "oval":
            assert [(p["shape"], p["sides"]) for p in data["pockets"]] == [("oval", 1)]
            assert "pockets: 1 x oval 30 x 16 along +X depth 5 -Z at (0, 0, 10)" in text, text
        if case == "freeform":  # a closed spline's one wall
            assert [(p["shape"], p["sides"]) for p in data["pockets"]] == [("freeform", 1)]
            assert "pockets: 1 x freeform 30 x 16 along +X depth 5 -Z at (0, 0, 10)" in text, text
        if case == "empty_huge":  # cut to the cap, a few named in one short line
            assert data["patterns"][0]["empty"] == [[1e11, -1e11, 0.5]] * 50, data["patterns"][0]["empty"][:2]
            assert text.count("(50 empty: (1e+11, -1e+11, 0.5), ") == 1 and text.count("1e+11") == 8, text
        if case == "pads_many":  # cut to the cap, the junk key dropped, one line for the pattern's members
            assert len(data["pads"]) == 100 and data["truncated"] == {"pads": 300} and "pads (300 found)" in text
            assert set(data["pads"][0]) == {"center", "axis", "shape", "width", "length", "direction", "height",
                                            "sides", "corner_radius"}, data["pads"][0]
            assert "pads: 3 x obround 2 x 1 along +X height 3 +Z on a" in text, text
        if case == "many_steps":
            assert len(data["steps"]) == 100 and data["truncated"] == {"steps": 500} and "steps (500 found)" in text
    else:
        assert res.is_error is True and res.structured_content is None, res
        if expect != "error":
            assert expect in text, text
    # the session is intact: its own code still runs
    assert "41" in client.text("execute", {"code": "print(n)"})


def test_honest_reply_after_the_patches_are_gone(client):
    assert client.text("execute", {"code": "import jail.cad.features as F\nF.features = F.features"}).startswith("OK")
    client.text("reset")
    assert client.text("execute", {"code": PLATE_CODE}).startswith("OK")
    res = client.call("features", {"object_name": "plate"})
    assert res.is_error is False
    unit.check_plate(res.structured_content)
    json.dumps(res.structured_content, allow_nan=False)

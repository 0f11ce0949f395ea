"""A call whose code finished in time is never failed by its reply's summaries (issue 21, item 5).

Through a real jailed session: 1000 copies of a filleted part bound as top-level names. Before,
each of the 200 summarised names paid build123d's optimal bounding box (~0.2 s here), so the call
timed out at its limit long after the user's code had finished; now copies of one shape are
measured once, and what does not fit the summaries' own budget is listed by name and type.
"""
from __future__ import annotations

import pytest

from tests.helpers import zygotes
from tests.helpers.cli import TEST_PROFILE
from tests.helpers.models import FILLETED, copies
from tests.helpers.toolcalls import ToolCalls

pytestmark = pytest.mark.jail

COPIES = FILLETED + copies(1000)


@pytest.fixture(scope="module")
def ts(tmp_path_factory):
    d = tmp_path_factory.mktemp("prof")
    prof = d / "summary10.toml"
    prof.write_text(f'extends = "{TEST_PROFILE}"\nname = "summary10"\n[limits]\ntimeout_s = 10\ncpu_s = 20\n')
    with zygotes.on_shared_zygote(str(prof), output_dir=d / "out", spare_sessions=0) as L:
        t = ToolCalls(L)
        yield t
        t.close()


def test_a_thousand_top_level_copies_do_not_time_the_call_out(ts):
    r = ts.execute(COPIES)
    assert r.get("ok"), r.get("error")
    objs = {o["name"]: o for o in r["objects"]}
    assert objs["p0"]["kind"] == "shape" and objs["p0"]["bbox"]["min"][0] == pytest.approx(-30.0)
    assert objs["p150"]["bbox"]["min"][0] == pytest.approx(150 * 100 - 30.0)
    assert objs["..."]["kind"] == "omitted"
    state = {o["name"] for o in ts.session_state()["objects"]}
    assert {"part", "p0", "p150"} <= state


def test_names_past_the_budget_are_listed_and_the_call_succeeds(ts):
    # rotated copies: each needs its own bounding box, more than the summaries' budget allows
    code = FILLETED + "".join(f"r{i} = part.rotate(Axis.Z, {i * 0.7:.2f})\n" for i in range(1, 150))
    assert "error" not in ts.reset()  # an empty namespace: the 200-name cap is not what cuts here
    r = ts.execute(code)
    assert r.get("ok"), r.get("error")
    kinds = [o["kind"] for o in r["objects"] if o["name"].startswith("r")]
    assert len(kinds) == 149 and kinds.count("unsummarised") > 0 and kinds[0] == "shape", kinds

"""A call's ``timeout_s`` may go past the profile's ``timeout_s``, up to its ``max_timeout_s`` (issue 21).

The test profile (``sessions_fast``: ``timeout_s = 2``) inherits ``max_timeout_s = 120`` from default:
a call that asks for 4 s runs until 4 s; one that asks for more than the maximum is refused before
anything runs, with an error naming ``max_timeout_s``; a profile without the key never extends.
"""
from __future__ import annotations

import pytest

from launcher.profile import ProfileError, load_profile
from tests.helpers import zygotes
from tests.helpers.cli import TEST_PROFILE
from tests.helpers.toolcalls import ToolCalls

pytestmark = pytest.mark.jail

SPIN = "while True:\n    pass"


@pytest.fixture(scope="module")
def ts(tmp_path_factory):
    with zygotes.on_shared_zygote(TEST_PROFILE, output_dir=tmp_path_factory.mktemp("out"), spare_sessions=0) as L:
        t = ToolCalls(L)
        yield t
        t.close()


def test_default_profile_maximum_is_above_its_limit_and_cpu_covers_it():
    d = load_profile("default").limits
    assert d.max_timeout_s == 120 > d.timeout_s
    assert d.cpu_s >= d.max_timeout_s  # else SIGXCPU stops a CPU-bound call before the wall-clock limit it asked for


def test_timeout_s_extends_the_limit_up_to_the_maximum(ts):
    lim = ts.profile.limits
    assert lim.timeout_s < 4 <= lim.max_timeout_s
    assert ts.execute("keep = 1").get("ok")
    r = ts.execute(SPIN, timeout_s=4)
    assert r["error"]["type"] == "ExecutionTimeout" and "4s wall-clock" in r["error"]["message"], r
    assert r["wall_ms"] >= 4000
    assert ts.execute("keep")["value"]["repr"] == "1"  # the session is unchanged


def test_timeout_s_above_the_maximum_is_refused_naming_it(ts):
    lim = ts.profile.limits
    r = ts.execute("refused = 1", timeout_s=lim.max_timeout_s + 1)
    assert r["ok"] is False and r["error"]["type"] == "InvalidRequest", r
    assert f"max_timeout_s = {lim.max_timeout_s:g} s" in r["error"]["message"]
    assert "refused" not in {o["name"] for o in ts.session_state()["objects"]}


def test_a_profile_without_a_maximum_never_extends(tmp_path):
    p = tmp_path / "nomax.toml"
    p.write_text('name = "nomax"\n[limits]\ntimeout_s = 5\n')
    assert load_profile(str(p)).limits.max_timeout_s == 5
    p.write_text('name = "bad"\n[limits]\ntimeout_s = 5\nmax_timeout_s = 4\n')
    with pytest.raises(ProfileError, match="max_timeout_s .4. is below timeout_s .5."):
        load_profile(str(p))

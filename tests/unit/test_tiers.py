"""The tier markers (tests/helpers/tiers.py) and the guards tests/conftest.py installs."""
from __future__ import annotations

import subprocess
import sys

import pytest

from tests.helpers import tiers
from tests.helpers.cli import REPO
from tests.helpers.tiers import JailMarkerMissing, key_matches, markers_for, stale_keys


def _from_harness():
    """What ``from jailchild import in_session`` puts in a module (not a global here: this module
    would get ``jail`` itself)."""
    def in_session():
        pass
    in_session.__module__ = tiers.LAYER_HARNESS
    return in_session


@pytest.mark.parametrize("nodeid, fixtures, module, expected", [
    ("tests/unit/test_pure_sanitize.py::test_x", [], {}, set()),
    ("tests/unit/test_x.py::test_y", ["tmp_path", "session", "launcher"], {}, {"jail"}),
    ("tests/unit/test_x.py::test_y", ["launcher"], {}, {"jail"}),
    ("tests/unit/test_x.py::test_y", ["faults_launcher"], {}, {"jail"}),
    ("tests/unit/test_x.py::test_y", [], {"in_session": _from_harness()}, {"jail"}),
    ("tests/unit/test_layer_rlimits.py::test_y", [], {}, {"jail"}),
    ("tests/integration/test_cli.py::test_y", [], {}, {"jail"}),
    ("tests/faults/test_faults_fuzz.py::test_y", [], {}, {"jail"}),
    ("tests/escape/test_matrix.py::test_cell[fr01-all]", [], {}, {"jail", "slow"}),
    ("tests/integration/test_inputs_mcp.py::test_y", ["user_env"], {}, {"jail", "unprivileged"}),
    ("tests/integration/test_systemd_user_manager.py::test_y", [], {},
     {"jail", "systemd", "root", "unprivileged"}),
    ("tests/faults/test_faults_session_bounds.py::test_two_spinning_children_get_the_session_share[session_cpu]",
     ["cpu_launcher"], {}, {"jail", "soak"}),
    ("tests/faults/test_faults_session_bounds.py::test_two_spinning_children_get_the_session_share"
     "[session_cpu_half]", ["cpu_launcher"], {}, {"jail"}),
    ("tests/faults/test_faults_render.py::test_escape_payload_then_render_and_measure[rm03-huge-mesh]", [], {},
     {"jail", "slow"}),
    ("tests/faults/test_faults_render.py::test_escape_payload_then_render_and_measure[rm01-x]", [], {}, {"jail"}),
])
def test_markers_for(nodeid, fixtures, module, expected):
    assert markers_for(nodeid, fixtures, module) == expected


def test_key_matching_is_exact_about_names_and_parameters():
    key = "tests/faults/test_faults_load.py::test_one_session_survives_600_calls"
    assert key_matches(key, key)
    assert key_matches(key, key + "[x]")
    assert not key_matches(key, key + "_and_more")
    assert not key_matches(key, "tests/faults/test_faults_load.py::test_load_many_executes")
    assert key_matches("tests/unit/test_layer_*.py", "tests/unit/test_layer_seccomp.py::test_a[b]")
    assert not key_matches("tests/unit/test_layer_*.py", "tests/unit/test_policy.py::test_a")
    assert key_matches("tests/a.py::*[p]", "tests/a.py::Cls::test_m[p]")


def test_a_stale_key_is_reported():
    key = "tests/faults/test_faults_load.py::test_one_session_survives_600_calls"
    good = {"tests/faults/test_faults_load.py": {"test_one_session_survives_600_calls": None}}
    renamed = {"tests/faults/test_faults_load.py": {"test_one_session_survives_700_calls": None}}
    files = ["tests/faults/test_faults_load.py"]
    assert key not in stale_keys(good, files)
    assert key in stale_keys(renamed, files)
    assert key in stale_keys({}, [])  # the file itself is gone


def test_every_key_names_an_existing_test_file():
    files = [p.relative_to(REPO).as_posix() for p in (REPO / "tests").rglob("test_*.py")]
    assert stale_keys({}, files) == []


def test_this_pure_test_has_no_tier_marker(request):
    assert not {m.name for m in request.node.iter_markers()} & set(tiers.MARKERS)


@pytest.mark.parametrize("argv", [
    [sys.executable, "-m", "jail.proc.zygote", "3", "--userns", "auto"],
    [sys.executable, "-m", "launcher", "doctor"],
    ["build123d-launcher", "mcp"],
    f"{sys.executable} -m launcher run x.py",
])
def test_a_test_without_the_jail_marker_cannot_start_a_session(argv):
    with pytest.raises(JailMarkerMissing):
        subprocess.run(argv, shell=isinstance(argv, str), timeout=60)


def test_the_guard_lets_other_processes_start():
    assert subprocess.run([sys.executable, "-c", "print('launcher')"], capture_output=True, text=True,
                          timeout=60).stdout == "launcher\n"


def test_occt_pool_has_one_thread_from_the_first_import():
    from OCP.BOPAlgo import BOPAlgo_Options  # here: the only test of this module that loads OCCT
    from OCP.OSD import OSD_ThreadPool
    assert OSD_ThreadPool.DefaultPool_s().NbThreads() == 1
    assert BOPAlgo_Options.GetParallelMode_s() is False

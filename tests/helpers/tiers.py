"""Which tier markers a test gets; tests/conftest.py applies them at collection.

* ``jail``: every test under tests/escape, tests/faults and tests/integration (they start jailed
  sessions, in process or through the CLI/MCP server); any test using a session fixture; any
  module using the layer harness ``jailchild`` (it applies the jail's layers in a forked child).
* ``unprivileged``: any test using the ``user_env`` fixture (the launcher as uid 65533).
* everything the rules cannot see (needs root, systemd, slow by design, soak variants):
  :data:`EXPLICIT`, keyed by node id. A key that names no existing test is an error, so the
  table cannot silently go stale when a test is renamed.

:func:`audit` (installed by tests/conftest.py with ``sys.addaudithook``) makes a test without
``jail`` that starts a zygote or the launcher's CLI fail with :class:`JailMarkerMissing`.
"""
from __future__ import annotations

import fnmatch
import os
import re

MARKERS = ("jail", "root", "unprivileged", "systemd", "slow", "soak")

JAIL_DIRS = ("tests/escape/", "tests/faults/", "tests/integration/")
SESSION_FIXTURES = frozenset({"launcher", "session", "new_session", "faults_launcher"})
LAYER_HARNESS = "jailchild"

#: node id (the path may be a glob; ``::name`` may end in ``[param]``, ``*`` matches any name) -> markers
EXPLICIT: dict[str, frozenset[str]] = {k: frozenset(v) for k, v in {
    "tests/unit/test_layer_*.py": {"jail"},
    # needs root (and most of these then run the launcher as uid 65533 through setpriv or setuid)
    "tests/faults/test_faults_containment.py::test_unprivileged_launcher_contains_clone_children":
        {"root", "unprivileged"},
    "tests/faults/test_faults_daemon_slots.py::test_silent_connections_hold_no_slot_unprivileged":
        {"root", "unprivileged"},
    "tests/faults/test_faults_delegation.py": {"root", "unprivileged"},
    "tests/faults/test_faults_inputs.py::test_devices_refused": {"root"},
    "tests/faults/test_faults_resources.py::test_disk_full_gives_errors_not_crashes": {"root"},
    "tests/faults/test_faults_session_bounds.py::test_unprivileged_launcher_bounds_children_over_the_session_memory":
        {"root", "unprivileged"},
    "tests/integration/test_daemon.py::test_other_uid_refused": {"root", "unprivileged"},
    "tests/integration/test_mcp_conventions.py::test_server_whose_zygote_cannot_start_answers_every_call": {"root"},
    "tests/integration/test_unprivileged.py": {"unprivileged"},
    "tests/integration/test_systemd_units.py": {"systemd"},
    "tests/integration/test_systemd_units.py::test_jail_works_under_the_units_sandbox": {"root", "unprivileged"},
    "tests/integration/test_systemd_user_manager.py": {"systemd", "root", "unprivileged"},
    # slow by design: installs, the whole escape matrix, waits that outlast a timeout, many calls
    "tests/escape/test_matrix.py": {"slow"},
    "tests/integration/test_install.py": {"slow"},
    "tests/integration/test_strict_profile.py::test_per_call_timeout_shortens_but_never_extends": {"slow"},
    "tests/faults/test_faults_hostile_replies.py::test_deaf_nexts_never_block_the_launcher": {"slow"},
    "tests/faults/test_faults_hostile_replies.py::test_head_that_never_forks_*": {"slow"},
    "tests/faults/test_faults_hostile_replies.py::test_mcp_stdio_server_survives_hostile_replies": {"slow"},
    "tests/faults/test_faults_render.py::test_escape_payload_then_render_and_measure[rm03-huge-mesh]": {"slow"},
    # soak variants (make soak): each repeats what a kept test already proves, at a larger scale.
    # session_cpus = 1.0: the 0.5 variants of the same four tests catch a broken CPU bound.
    "tests/faults/test_faults_session_bounds.py::*[session_cpu]": {"soak"},
    # 600 calls in one session: tests/integration/test_sessions.py::test_500_calls_leak_nothing
    # makes 500 and also checks the state, fds, threads and zombies.
    "tests/faults/test_faults_load.py::test_one_session_survives_600_calls": {"soak", "slow"},
    # the daemon's bounds: the basic silent/trickling/idle tests and the audit's ex06 (32 silent + 33
    # trickling peers) stay in make test; these repeat them at length (a 16 s call, a 68-peer flood)
    "tests/faults/test_faults_daemon_slots.py::test_call_longer_than_every_bound_is_not_cut": {"soak", "slow"},
    "tests/faults/test_faults_daemon_slots.py::test_flood_of_silent_connections_cannot_lock_out_the_user":
        {"soak", "slow"},
}.items()}


def _split(nodeid: str) -> tuple[str, str, str]:
    """(path, test name without parameters, parameter id) of a node id."""
    path, _, name = nodeid.partition("::")
    name = name.rsplit("::", 1)[-1]  # a method of a test class: its own name
    base, _, param = name.partition("[")
    return path, base, param[:-1] if param.endswith("]") else param


def key_matches(key: str, nodeid: str) -> bool:
    kpath, kbase, kparam = _split(key)
    path, base, param = _split(nodeid)
    if not fnmatch.fnmatchcase(path, kpath):
        return False
    if "::" not in key:
        return True
    return fnmatch.fnmatchcase(base, kbase) and (not kparam or kparam == param or kparam in param.split("-"))


def markers_for(nodeid: str, fixturenames, module_globals: dict) -> set[str]:
    """The tier markers of one collected test (``nodeid`` relative to the repository)."""
    out: set[str] = set()
    if nodeid.startswith(JAIL_DIRS) or SESSION_FIXTURES.intersection(fixturenames):
        out.add("jail")
    if any(getattr(v, "__module__", None) == LAYER_HARNESS for v in module_globals.values()):
        out.add("jail")
    if "user_env" in fixturenames:
        out.add("unprivileged")
    for key, marks in EXPLICIT.items():
        if key_matches(key, nodeid):
            out |= marks
    return out


def stale_keys(collected: dict[str, dict], existing_paths) -> list[str]:
    """Keys of :data:`EXPLICIT` that name nothing: a path glob no test file matches, or a test name
    that a collected module does not define. ``collected``: module path -> its globals (modules
    not collected in this run are not judged by name); ``existing_paths``: every test file."""
    bad = []
    for key in EXPLICIT:
        kpath, kbase, _ = _split(key)
        if not any(fnmatch.fnmatchcase(p, kpath) for p in existing_paths):
            bad.append(key)
            continue
        if "::" not in key:
            continue
        for path, names in collected.items():
            if fnmatch.fnmatchcase(path, kpath) and not any(fnmatch.fnmatchcase(n, kbase) for n in names):
                bad.append(key)
                break
    return bad


# ----------------------------------------------------------------- the guard
class JailMarkerMissing(RuntimeError):
    """A test without the ``jail`` marker tried to start a zygote or the launcher's CLI."""


#: a zygote, ``python -m launcher[.module]`` or the console script (not ``git commit -m launcher: x``)
_SPAWNS_JAIL = re.compile(r"jail\.proc\.zygote|-m\s+launcher(?:\.\w+)*(?:\s|$)|build123d-launcher(?:\s|$)")
_guarded = False


def guard(on: bool) -> None:
    """From now on refuse (``on``) or allow the spawns :func:`audit` looks for."""
    global _guarded
    _guarded = on


def audit(event: str, args) -> None:
    """An audit hook: refuses ``subprocess.Popen`` of a zygote or the launcher CLI while guarded."""
    if not _guarded or event != "subprocess.Popen":
        return
    argv = args[1]
    argv = [argv] if isinstance(argv, (str, bytes, os.PathLike)) else list(argv)
    line = " ".join(os.fsdecode(a) if isinstance(a, (str, bytes, os.PathLike)) else str(a) for a in argv)
    if _SPAWNS_JAIL.search(line):
        raise JailMarkerMissing(f"a test without the 'jail' marker started {line[:200]!r}: give it the "
                                "marker (tests/helpers/tiers.py) or keep it free of sessions")

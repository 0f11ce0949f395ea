""".ci/check_subjects.py: the subject rule, and which commits it reads (full and shallow clones)."""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys

import pytest

from tests.helpers.cli import REPO

SCRIPT = REPO / ".ci" / "check_subjects.py"
_spec = importlib.util.spec_from_file_location("check_subjects", SCRIPT)
check_subjects = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_subjects)

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
ENV = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
       "GIT_COMMITTER_EMAIL": "t@example.org", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


@pytest.mark.parametrize("subject", [
    "layout: move modules into role subpackages", "tests: add tiers", "launcher/session: split the channel",
    "ci, tests: check commit subjects", "jail.cad: keep render steps apart", "x" * 3 + ": " + "y" * 67,
])
def test_good_subjects(subject):
    assert check_subjects.problem(subject) is None


@pytest.mark.parametrize("subject, why", [
    ("tests: " + "x" * 66, "73 characters"),
    ("Add tiers", "shaped"), ("tests:add tiers", "shaped"), ("tests:  add", "shaped"), ("Tests: add", "shaped"),
    ("tests add: x y", "shaped"), (": add", "shaped"), ("tests: ", "shaped"), ("", "shaped"),
])
def test_bad_subjects(subject, why):
    assert why in check_subjects.problem(subject)


def git(cwd, *args) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=ENV, check=True, capture_output=True, text=True).stdout


def commit(cwd, subject: str) -> None:
    git(cwd, "commit", "-q", "--allow-empty", "-m", subject, "-m", "a body may be as long as it likes " * 5)


def run(cwd) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT)], cwd=cwd, env=ENV, capture_output=True, text=True,
                          timeout=60)


@needs_git
def test_only_commits_after_the_base_are_checked(tmp_path):
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    commit(repo, "An old subject that rambles on well past the limit of seventy-two characters, as before")
    commit(repo, check_subjects.BASE_SUBJECT)
    commit(repo, "tests: add tiers")
    r = run(repo)
    assert r.returncode == 0 and "1 commit(s)" in r.stdout, r.stdout + r.stderr
    commit(repo, "Fix the thing")
    git(repo, "checkout", "-q", "-b", "side", "HEAD~1")
    commit(repo, "docs: a fine subject")
    git(repo, "checkout", "-q", "-")
    git(repo, "merge", "-q", "--no-edit", "side")  # git's own merge subject is not judged
    r = run(repo)
    assert r.returncode == 1 and "Fix the thing" in r.stdout and "An old subject" not in r.stdout, r.stdout
    assert "3 commit(s)" in r.stdout and "1 bad" in r.stdout, r.stdout


@needs_git
def test_a_shallow_clone_checks_what_it_has_and_a_history_without_the_base_nothing(tmp_path):
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, "init", "-q")
    commit(repo, "Before the base, too long and unshaped, but never read by the check at all")
    commit(repo, check_subjects.BASE_SUBJECT)
    for i in range(3):
        commit(repo, f"tests: step {i}")
    shallow = tmp_path / "s"
    git(tmp_path, "clone", "-q", "--depth", "2", f"file://{repo}", str(shallow))
    r = run(shallow)
    assert r.returncode == 0 and "shallow" in r.stdout and "2 commit(s)" in r.stdout, r.stdout + r.stderr
    commit(shallow, "Not shaped")
    assert run(shallow).returncode == 1

    other = tmp_path / "o"
    other.mkdir()
    git(other, "init", "-q")
    commit(other, "Some unrelated history")
    r = run(other)
    assert r.returncode == 0 and "nothing to check" in r.stdout, r.stdout


def test_outside_a_checkout_there_is_nothing_to_check(tmp_path):
    r = subprocess.run([sys.executable, str(SCRIPT)], cwd=tmp_path, env={**ENV, "GIT_DIR": str(tmp_path / "none")},
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "nothing to check" in r.stdout, r.stdout + r.stderr

#!/usr/bin/env python3
"""Commit subjects since the restructure (issue 19) read as ``area: imperative summary``, <= 72 chars.

Checked: every non-merge commit after the base commit, which is the one whose subject is
``layout: move modules into role subpackages`` (or the revision given as the first argument).
A shallow clone that does not reach the base has only newer commits: all of them are checked.
A full history without the base, or no git checkout at all, has nothing to check (exit 0).
Exit 1 lists the offending commits.
"""
from __future__ import annotations

import re
import subprocess
import sys

BASE_SUBJECT = "layout: move modules into role subpackages"
MAX_LEN = 72
#: one or more areas ("tests", "launcher/session", "ci, docs"), a colon, a summary starting with a word
SHAPE = re.compile(r"[a-z][a-z0-9_./-]*(?:, ?[a-z][a-z0-9_./-]*)*: \S.*")


def problem(subject: str) -> str | None:
    """Why ``subject`` is not acceptable, or None."""
    if len(subject) > MAX_LEN:
        return f"{len(subject)} characters (max {MAX_LEN})"
    if not SHAPE.fullmatch(subject):
        return "not shaped 'area: imperative summary'"
    return None


def git(*args: str) -> str:
    return subprocess.run(["git", *args], check=True, capture_output=True, text=True).stdout


def revisions(base_arg: str | None) -> tuple[str, str]:
    """(the git log range to check, a note on how it was chosen)."""
    if base_arg:
        return f"{base_arg}..HEAD", f"since {base_arg}"
    base = git("log", "--format=%H", "--fixed-strings", f"--grep={BASE_SUBJECT}", "HEAD").split()
    base = [h for h in base if git("log", "-1", "--format=%s", h).strip() == BASE_SUBJECT]
    if base:
        return f"{base[-1]}..HEAD", f"since {base[-1][:12]} ({BASE_SUBJECT})"
    if git("rev-parse", "--is-shallow-repository").strip() == "true":
        return "HEAD", "shallow clone without the base commit: every commit present"
    return "", "no base commit in this history"


def main(argv: list[str]) -> int:
    try:
        git("rev-parse", "--git-dir")
    except (OSError, subprocess.CalledProcessError):
        print("check_subjects: not a git checkout; nothing to check")
        return 0
    rng, note = revisions(argv[1] if len(argv) > 1 else None)
    if not rng:
        print(f"check_subjects: {note}; nothing to check")
        return 0
    bad = []
    lines = git("log", "--no-merges", "--format=%h%x00%s", rng).splitlines()
    for line in lines:
        short, _, subject = line.partition("\0")
        why = problem(subject)
        if why:
            bad.append(f"  {short} {subject[:90]!r}: {why}")
    print(f"check_subjects: {len(lines)} commit(s) {note}: {len(bad)} bad")
    if bad:
        print("\n".join(bad))
        print("Subjects are 'area: imperative summary', at most 72 characters; the detail goes in the body.")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

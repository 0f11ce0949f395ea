"""``build123d-launcher audit [--only PATTERNS] [--columns C,...] [--profile NAME] [--json|--markdown]``.

Exit status: 0 when every required cell is blocked, 1 when one is not, 2 on a usage error (an
unknown column or profile, a bad payload header, no payload matching ``--only``).
"""
from __future__ import annotations

import json
import logging
import signal
import sys

from launcher.profile import find_profile, load_profile
from launcher.selftest.audit.payloads import PayloadError, load_payloads
from launcher.selftest.audit.report import render_markdown, render_text
from launcher.selftest.audit.run import COLUMNS, PROFILES, run_matrix


def _profile_columns(name: str):
    """``audit --profile NAME``: column ``all`` runs on that profile (ordinary and fast payloads alike);
    the os_only/python_only columns keep their single-layer profiles. The default profile keeps its fast
    variant (same layers, shorter limits)."""
    load_profile(name)  # validate it now: a bad name or file is an error, never a silent default
    path = find_profile(name)
    if path == (PROFILES / "default.toml").resolve():
        return None, None
    return {"all": (path, path)}, f"audit: column 'all' runs on profile {path}"


def run_audit(args) -> int:
    columns = [c.strip() for c in (getattr(args, "columns", None) or "all,os_only,python_only").split(",")
               if c.strip()]
    bad = [c for c in columns if c not in COLUMNS]
    if bad:
        print(f"build123d-launcher audit: unknown column(s) {', '.join(bad)} (known: {', '.join(COLUMNS)})",
              file=sys.stderr)
        return 2
    try:
        payloads = load_payloads(getattr(args, "only", None))
    except PayloadError as e:
        print(f"build123d-launcher audit: {e}", file=sys.stderr)
        return 2
    if not payloads:
        print("build123d-launcher audit: no payload matches", file=sys.stderr)
        return 2
    quiet = getattr(args, "json", False) or getattr(args, "markdown", False)
    if not getattr(args, "verbose", False):
        logging.getLogger("build123d_launcher.audit").setLevel(logging.WARNING)
        logging.getLogger("build123d_launcher.session").setLevel(logging.WARNING)

    def progress(col, p, cell):
        if not quiet:
            print(f"  [{col}] {p.id}: {cell.verdict} {cell.layer}", file=sys.stderr, flush=True)

    def _term(signum, frame):  # SIGTERM: leave through the context managers (canaries cleaned up)
        raise SystemExit(128 + signum)
    try:
        signal.signal(signal.SIGTERM, _term)
    except ValueError:  # not the main thread
        pass
    try:
        column_profiles, profile_note = _profile_columns(getattr(args, "profile", None) or "default")
    except Exception as e:  # noqa: BLE001 - ProfileError: the message lists the valid names
        print(f"build123d-launcher audit: {e}", file=sys.stderr)
        return 2
    if profile_note and not quiet:
        print(profile_note, file=sys.stderr)
    report = run_matrix(payloads, columns, jail_uid=getattr(args, "jail_uid", None), progress=progress,
                        column_profiles=column_profiles)
    report["profile"] = str(column_profiles["all"][0]) if column_profiles else "default"
    if getattr(args, "json", False):
        print(json.dumps(report, indent=1, default=str))
    elif getattr(args, "markdown", False):
        print(render_markdown(report), end="")
    else:
        print(render_text(report), end="")
    return 0 if report["ok"] else 1

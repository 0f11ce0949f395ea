"""Run payloads in real sessions and judge each cell by the canaries, not by what it says it did.

A cell is ``blocked`` when no canary fired, ``ESCAPED`` when one did, ``skipped`` (a destructive
payload in ``python_only``) or ``error`` (no session could start). Beyond the host-side canaries
(:mod:`.canaries`) and the launcher-side ones (:mod:`.checks`), a cell checks that nothing the call
started outlives it, that the attacker session still answers (and, where the AST policy is on,
still refuses ``import os``: no persistent disabling of a layer), that the bystander session kept
its variable, that the zygote is alive and that the host did not stall. A payload with a ``then:``
step then has what leaves the jail exercised and judged (:mod:`.exits`). Required: every cell of
``all`` and every ``touches_os: yes`` or ``then:`` cell of ``os_only`` (:meth:`Payload.required`).
"""
from __future__ import annotations

import dataclasses
import logging
import time

from launcher.resources import data_dir
from launcher.selftest.audit.canaries import Canaries
from launcher.selftest.audit.checks import KEPT_FDS, fs_changes, kept_fds, path_fds, reply_findings, reset_peak_rss
from launcher.selftest.audit.classify import classify
from launcher.selftest.audit.exits import run_then
from launcher.selftest.audit.payloads import Payload, substitute
from launcher.selftest.audit.report import host_info
from launcher.selftest.audit.rig import Rig

log = logging.getLogger("build123d_launcher.escape_audit")

TEST_PROFILES = data_dir("test_profiles")    # tests/profiles (the audit's column profiles)
PROFILES = data_dir("profiles")

#: column -> (profile for ordinary payloads, profile for ``fast: yes`` payloads)
COLUMNS = {
    "all": (PROFILES / "default.toml", TEST_PROFILES / "default_fast.toml"),
    "os_only": (TEST_PROFILES / "os_only.toml", TEST_PROFILES / "os_only_fast.toml"),
    "python_only": (TEST_PROFILES / "python_only.toml", TEST_PROFILES / "python_only.toml"),
}
UNRESPONSIVE_S = 2.5
#: the host-side events are read no earlier than this after the payload's call: a datagram or a late
#: signal lands meanwhile
SETTLE_S = 0.04
FDS_SETTLE_S = 1.0  # new path fds of the launcher's own threads close within this (checks.kept_fds)


@dataclasses.dataclass
class Cell:
    verdict: str                 # blocked | ESCAPED | skipped | error
    layer: str = ""              # which layer stopped it (blocked cells)
    detail: str = ""
    canaries: list = dataclasses.field(default_factory=list)
    wall_ms: float = 0.0
    then_ms: float = 0.0         # the then: step's time (host runs, tool calls, a daemon)
    error_type: str | None = None
    notes: list = dataclasses.field(default_factory=list)

    def as_dict(self):
        return dataclasses.asdict(self)


def _execute(session, code: str) -> dict:
    try:
        return session.execute(code)
    except Exception as e:  # SessionDead, SessionError: the session broke
        return {"ok": False, "stdout": "", "stderr": "", "objects": [],
                "error": {"type": "SessionBroke", "message": f"{type(e).__name__}: {e}"}}


def _strays(rig: Rig) -> tuple[bool, list[str]]:
    """(the attacker has a new next, canaries): nothing the call started may outlive it
    (docs/ARCHITECTURE.md, rule 3)."""
    next_ok, fired = True, []
    try:
        try:
            rig.wait_next(timeout=5)  # the head's new next is then known, not a stray
        except Exception:
            next_ok = False  # no new next: the session is broken; it is replaced by run_cell
        extra = rig.strays()
        if extra:
            fired.append(f"strays: {len(extra)} process(es) started by the call still run in the session")
    except Exception:
        pass
    return next_ok, fired


def _add_death_reason(rig: Rig, res: dict) -> None:
    """Why a child died: the head reports it (next_exit) before it forks the following next."""
    if (res.get("error") or {}).get("type") != "ChildDied":
        return
    try:
        time.sleep(0.05)
        rig.wait_next()
        ne = rig.attacker.last_next_exit or {}
        if ne.get("signal") and ne["signal"] not in res["error"]["message"]:
            res["error"]["message"] += f" [head reports: {ne['signal']}]"
    except Exception:
        pass


def _attacker_healthy(rig: Rig, next_ok: bool, notes: list[str]) -> bool:
    """The attacker session still answers, and the Python layers are still on."""
    healthy = next_ok
    try:
        if not healthy:
            raise RuntimeError("the session has no next process")
        h = rig.attacker.execute("print('alive-check')")
        healthy = bool(h.get("ok")) and "alive-check" in h.get("stdout", "")
        if healthy and rig.ast_on:
            h2 = rig.attacker.execute("import subprocess\n")  # refused by every profile's AST policy
            if (h2.get("error") or {}).get("type") != "PolicyError":
                # a Python layer switched off for later calls: reported, not a canary (the OS
                # layers still hold); the session is replaced so the next payload starts clean
                notes.append("persistence: later calls in this session no longer get the AST policy")
                healthy = False
    except Exception:
        healthy = False
    return healthy


def _bystander_and_launcher(rig: Rig) -> list[str]:
    fired = []
    if not rig.launcher.zygote.alive():
        fired.append("launcher: the zygote died")
    try:
        b = rig.bystander.execute("print(bystander_secret)")
        if not b.get("ok") or rig.canaries.tokens["bystander"] not in b.get("stdout", ""):
            fired.append(f"bystander: lost its state ({(b.get('error') or {}).get('type')})")
    except Exception as e:
        fired.append(f"bystander: session broke ({type(e).__name__}: {e})")
        try:
            rig.new_bystander()
        except Exception:
            pass
    return fired


def run_cell(rig: Rig, payload: Payload, column: str) -> Cell:
    can = rig.canaries
    values = can.values(rig.substitutions())
    code = substitute(payload.code, values)
    snap0 = can.fs_snapshot()
    ev0 = len(can.events)
    fds0 = path_fds()
    rss0_kb = reset_peak_rss()
    can.timer.reset()
    notes: list[str] = []
    t0 = time.monotonic()
    res = _execute(rig.attacker, code)
    t_done = time.monotonic()
    wall = (t_done - t0) * 1000
    fired = reply_findings(res, can.leak_markers(), rig.launcher.profile.limits, rss0_kb)
    next_ok, stray = _strays(rig)
    fired += stray
    then_ms = 0.0
    if payload.then:  # before the health check's own calls join the session's history
        t1 = time.monotonic()
        fired += run_then(rig, payload, res, values)
        then_ms = round((time.monotonic() - t1) * 1000, 1)
    _add_death_reason(rig, res)
    healthy = _attacker_healthy(rig, next_ok, notes)
    fired += _bystander_and_launcher(rig)
    if can.timer.worst_gap > UNRESPONSIVE_S:
        fired.append(f"responsiveness: the host stalled {can.timer.worst_gap:.1f}s")
    time.sleep(max(0.0, t_done + SETTLE_S - time.monotonic()))  # the checks above usually took longer
    fired += can.events[ev0:]
    fired += fs_changes(snap0, can.fs_snapshot())
    more, paths = kept_fds(fds0, time.monotonic() + FDS_SETTLE_S)
    if more >= KEPT_FDS:
        named = ", ".join(ascii(p)[:80] for p in paths[:3])
        fired.append(f"launcher-fds: the launcher holds {more} more file descriptors on paths ({named})")
    if not healthy:
        try:
            rig.new_attacker()
        except Exception as e:
            fired.append(f"launcher: cannot start a new session after this payload ({e})")
    elif res.get("ok") or payload.then:
        rig.new_attacker()  # its names (or a then: step's imports) stay in the namespace: back to a clean state
    layer, detail = classify(res)
    err = res.get("error") or {}
    if fired:
        return Cell("ESCAPED", layer, detail, fired, round(wall, 1), then_ms, err.get("type"), notes)
    return Cell("blocked", layer, detail, [], round(wall, 1), then_ms, err.get("type"), notes)


def _run_column(col: str, profiles: tuple, payloads: list[Payload], results: dict, can: Canaries, *,
                jail_uid, progress) -> dict:
    """Run ``payloads`` in column ``col`` (one Rig per profile, started on first use); the column's info."""
    t_col = time.monotonic()
    rigs: dict[bool, Rig | None] = {}
    rig_err: dict[bool, str] = {}
    try:
        for p in payloads:
            skip = p.skipped(col)
            if skip:
                results[p.id]["cells"][col] = Cell("skipped", detail=skip).as_dict()
                continue
            if p.fast not in rigs and p.fast not in rig_err:
                prof = profiles[1 if p.fast else 0]
                try:
                    rigs[p.fast] = Rig(prof, can, jail_uid=jail_uid)
                except Exception as e:
                    rig_err[p.fast] = f"{type(e).__name__}: {e}"
                    log.error("column %s: cannot start a session with %s: %s", col, prof.name, e)
            if p.fast in rig_err:
                results[p.id]["cells"][col] = Cell(
                    "error", "", f"no session could start: {rig_err[p.fast]}"[:300]).as_dict()
                continue
            cell = run_cell(rigs[p.fast], p, col)
            if cell.verdict == "ESCAPED":
                can.restore()
            results[p.id]["cells"][col] = cell.as_dict()
            if progress:
                progress(col, p, cell)
    finally:
        for r in rigs.values():
            if r is not None:
                r.close()
    return {"seconds": round(time.monotonic() - t_col, 1),
            "profiles": [profiles[0].name, profiles[1].name],
            "rig_errors": {("fast" if k else "normal"): v for k, v in rig_err.items()}}


def run_matrix(payloads: list[Payload], columns=("all", "os_only", "python_only"), *, jail_uid=None,
               progress=None, column_profiles: dict | None = None, required_only: bool = False,
               parallel: bool = False) -> dict:
    """``column_profiles`` overrides :data:`COLUMNS` (e.g. ``audit --profile X`` runs column all on X);
    ``required_only`` runs only the cells a column requires (pytest: the others are reports, "—");
    ``parallel``: each column in its own process, side by side (:mod:`.parallel`; ``progress`` is
    then not called)."""
    profiles = {**COLUMNS, **(column_profiles or {})}
    for col in columns:
        if col not in profiles:
            raise ValueError(f"unknown column {col!r} (known: {', '.join(profiles)})")
    started = time.time()
    results = {p.id: {"id": p.id, "category": p.category, "effect": p.effect, "touches_os": p.touches_os,
                      "then": " ".join(p.then), "destructive": p.destructive, "cells": {}} for p in payloads}
    col_info = {}
    if parallel and len(columns) > 1:
        from launcher.selftest.audit.parallel import run_columns
        for rep in run_columns(payloads, columns, profiles, jail_uid=jail_uid, required_only=required_only):
            col_info.update(rep["column_info"])
            for row in rep["payloads"]:
                results[row["id"]]["cells"].update(row["cells"])
    else:
        with Canaries(jail_uid=jail_uid) as can:
            for col in columns:
                todo = [p for p in payloads if p.required(col)] if required_only else payloads
                col_info[col] = _run_column(col, profiles[col], todo, results, can, jail_uid=jail_uid,
                                            progress=progress)
    failures = []
    for p in payloads:
        for col in columns:
            c = results[p.id]["cells"].get(col)
            if c and p.required(col) and c["verdict"] != "blocked":
                failures.append({"id": p.id, "column": col, "verdict": c["verdict"], "canaries": c["canaries"],
                                 "detail": c["detail"]})
    return {
        "host": host_info(jail_uid),
        "columns": list(columns),
        "column_info": col_info,
        "payloads": list(results.values()),
        "failures": failures,
        "ok": not failures,
        "seconds": round(time.time() - started, 1),
    }

"""``build123d-launcher doctor``: every jail layer, on this host, with evidence.

For each layer of jail/layers/table.py: what the kernel supports, whether a real
probe session applied it (the same code path ``execute`` uses), and facts read
back *inside* a jailed child (``/proc/self/status``, uid map, network devices,
namespace inodes, rlimits, and the result of trying a few forbidden things).
``--verbose`` adds the Landlock rules and the seccomp groups the profile uses. Then the daemon's
set-up (launcher/selftest/service.py): user units, user manager, socket, linger, and the backend
``mcp`` would use, each a state and what to do (informational: no effect on the exit status).
Exit status 0 when every ``required`` layer is applied, 3 otherwise.
"""
from __future__ import annotations

import json
import os

from jail.layers import landlock
from jail.layers.syscalls import ARG_RULES, GROUPS
from jail.layers.table import TABLE
from jail.wire.errors import LayerError
from launcher.contain.containment import describe
from launcher.core import Launcher
from launcher.profile import load_profile
from launcher.selftest import service


def kernel_support() -> dict:
    out = {}
    try:
        out["userns"] = "max_user_namespaces=" + open("/proc/sys/user/max_user_namespaces").read().strip()
    except OSError:
        out["userns"] = "unknown"
    try:
        if open("/proc/sys/kernel/apparmor_restrict_unprivileged_userns").read().strip() == "1":
            out["userns"] += ", apparmor_restrict_unprivileged_userns=1"
    except OSError:
        pass
    out["namespaces"] = ", ".join(n for n in ("pid", "net", "ipc", "uts", "mnt")
                                  if os.path.exists(f"/proc/self/ns/{n}")) or "none"
    out["rlimits"] = "yes"
    out["mountview"] = "mount namespace" if os.path.exists("/proc/self/ns/mnt") else "no"
    abi = landlock.abi_version()
    out["landlock"] = f"ABI {abi}" if abi else "not available"
    try:
        out["seccomp"] = "actions: " + open("/proc/sys/kernel/seccomp/actions_avail").read().strip()
    except OSError:
        out["seccomp"] = "unknown"
    out["privileges"] = "python-prctl"
    out["ast_policy"] = out["builtins"] = "python"
    return out


def evidence_for(layer: str, applied: dict, probe: dict) -> str:
    p = probe.get("probes", {})
    if layer == "userns":
        return f"uid_map inside: {' '.join(probe.get('uid_map', [])) if isinstance(probe.get('uid_map'), list) else probe.get('uid_map')}; host uid {applied.get('host_uid', '?')}"
    if layer == "namespaces":
        return f"net devices {probe.get('net_dev')}, {probe.get('ns_net')}, pid {probe.get('pid')} (NSpid {probe.get('NSpid')}), socket(AF_INET): {p.get('socket_inet')}"
    if layer == "rlimits":
        r = probe.get("rlimits", {})
        return (", ".join(f"{k[7:]}={v[1]}" for k, v in r.items()) if r else "?") + f"; {probe.get('sched', '?')}"
    if layer == "mountview":
        return f"/etc/shadow: {p.get('etc_shadow')}, /tmp: {p.get('tmp')}, ~root: {p.get('home')}"
    if layer == "landlock":
        rules = applied.get("rules")
        n = len(rules) if isinstance(rules, list) else "?"
        return f"abi {applied.get('abi', '?')}, {n} rules (doctor --verbose lists them), write /probe-write: {p.get('write_root')}"
    if layer == "privileges":
        return f"CapEff={probe.get('CapEff')} CapBnd={probe.get('CapBnd')} NoNewPrivs={probe.get('NoNewPrivs')}"
    if layer == "seccomp":
        return f"Seccomp={probe.get('Seccomp')} filters={probe.get('Seccomp_filters')}, {applied.get('allowed', '?')} syscalls allowed"
    return ""


def seccomp_groups(profile) -> list[dict]:
    """Each group of jail/layers/syscalls.py and what the profile does with it, then its extra calls."""
    allow, kill = set(profile.seccomp_allow), set(profile.seccomp_kill)
    rows, grouped = [], set()
    for g in GROUPS.values():
        calls = set(g.calls)
        grouped |= calls
        use = ("allow" if calls <= allow else "kill" if calls <= kill
               else f"allow {len(calls & allow)}/{len(calls)}" if calls & allow else "-")
        rows.append({"group": "@" + g.name, "use": use, "why": g.why,
                     "calls": [c + (" (args)" if c in ARG_RULES else "") for c in g.calls]})
    rows.append({"group": "extra", "use": "allow", "why": "named one by one in the profile",
                 "calls": sorted(allow - grouped)})
    return rows


def collect(args) -> dict:
    profile = load_profile(args.profile)
    report = {"profile": profile.name, "source": profile.source, "uid": os.getuid(),
              "kernel": os.uname().release, "layers": [], "ok": True, "error": None}
    support = kernel_support()
    applied_all: dict = {}
    probe: dict = {}
    try:
        with Launcher(profile, jail_uid=args.jail_uid) as launcher:
            applied_all.update(launcher.zygote.evidence)
            s = launcher.new_session()
            applied_all.update(s.evidence)
            probe = s.probe()
            launcher.close_session(s)
    except LayerError as e:
        report["ok"] = False
        report["error"] = f"layer '{e.layer}' cannot be applied: {e.reason}"
        applied_all[e.layer] = {"status": "FAILED", "reason": e.reason}
    except Exception as e:  # a probe session that dies is a failure to report, not a crash
        report["ok"] = False
        report["error"] = f"the probe session failed: {type(e).__name__}: {e}"
    for row in TABLE:
        layer = row.name
        mode = profile.mode(layer)
        a = applied_all.get(layer, {})
        status = a.get("status", "-")
        if row.stage == "call":  # applied by jail/cad in each call, not by a process of the chain
            status = "per call" if mode != "off" else "off"
        if mode == "required" and status not in ("applied", "per call"):
            report["ok"] = False
        report["layers"].append({
            "layer": layer, "mode": mode, "kernel": support.get(layer, ""), "status": status,
            "reason": a.get("reason", ""), "evidence": evidence_for(layer, a, probe) if probe else "",
        })
    report["probe"] = probe
    report["applied"] = applied_all
    report["seccomp_groups"] = seccomp_groups(profile)
    report["containment"] = containment_report(applied_all.get("containment", {}))
    try:
        report["service"] = [vars(c) for c in service.collect(profile.name, getattr(args, "socket", None))]
    except Exception as e:  # noqa: BLE001 - a set-up check that fails is a line, not a crash
        report["service"] = [{"name": "daemon", "state": f"check failed: {type(e).__name__}: {e}", "todo": ""}]
    return report


def containment_report(keeper_ev: dict) -> dict:
    """Which mechanism keeps a call's processes from outliving it, and what bounds the session."""
    d = describe()
    d["oom_score_adj"] = keeper_ev.get("oom_score_adj", "?") if isinstance(keeper_ev, dict) else "?"
    d["identify"] = ("on the host, a jailed process's /proc/PID/cgroup ends in build123d-launcher/"
                     "<launcher pid>-<n>-<session>/..., whatever it calls itself" if d.get("v2") else
                     "on the host, a jailed process is in a pid namespace of its own below its session's "
                     "keeper (a child of the zygote): its /proc/PID/ns/pid differs from the launcher's")
    return d


def print_service(checks: list[dict]) -> None:
    """The daemon/socket/service lines: ``name  state`` and, below, what to do."""
    print("daemon and user service (`mcp` uses a daemon when one answers, else runs embedded):")
    for c in checks:
        print(f"  {c['name']:<14} {c['state']}")
        if c.get("todo"):
            print(f"  {'':<14} -> {c['todo']}")
    print()


def run_doctor(args) -> int:
    report = collect(args)
    if getattr(args, "json", False):
        print(json.dumps(report, indent=1, default=str))
    else:
        print(f"build123d-launcher doctor — profile {report['profile']} ({report['source']}), "
              f"uid {report['uid']}, kernel {report['kernel']}\n")
        rows = [("layer", "mode", "kernel", "status", "evidence (read inside a jailed child)")]
        for l in report["layers"]:
            rows.append((l["layer"], l["mode"], l["kernel"], l["status"] + (f" ({l['reason']})" if l["reason"] else ""),
                         l["evidence"]))
        verbose = getattr(args, "doctor_verbose", False)
        widths = [min(max(len(str(r[i])) for r in rows), 40 if verbose else 26) for i in range(4)]

        def cell(v, w):
            v = str(v)
            return v if verbose or len(v) <= w else v[:w - 1] + "~"
        for r in rows:
            print("  ".join(cell(r[i], widths[i]).ljust(widths[i]) for i in range(4)) + "  " + str(r[4]))
        print()
        if verbose:
            for layer, a in report.get("applied", {}).items():
                rules = a.get("rules") if isinstance(a, dict) else None
                if isinstance(rules, list):
                    print(f"{layer} rules:")
                    for rule in rules:
                        print(f"  {rule}")
            print("seccomp groups (jail/layers/syscalls.py; a profile names them as @group):")
            for g in report.get("seccomp_groups", []):
                print(f"  {g['group']:<10} {g['use']:<10} {g['why']}")
                print(f"  {'':<10} {'':<10} {' '.join(g['calls']) or '-'}")
            print("argument rules (whatever group or profile allows the call):")
            for name, rule in ARG_RULES.items():
                print(f"  {name:<10} {rule.why}")
            print()
        c = report.get("containment") or {}
        print(f"containment: {c.get('mechanism', '?')}")
        if c.get("v2_leaf"):
            print(f"  delegated cgroup: the launcher's processes moved to {c['v2_leaf']}; session cgroups get "
                  f"{', '.join(c.get('v2_controllers') or []) or 'no controller'}")
        elif c.get("v2_delegation_note"):
            print(f"  no delegated v2 controllers: {c['v2_delegation_note']}")
        print("  session bounds (all of a session's processes together, snapshots included):")
        for b in c.get("session_bounds", []) or ["-"]:
            print(f"    {b}")
        print(f"  oom_score_adj {c.get('oom_score_adj', '?')} (the call 1000, head and snapshots 500 where the "
              "launcher may lower it)")
        print(f"  clone in the jail: fork flags only, clone3 ENOSYS (seccomp); {c.get('identify', '')}\n")
        print_service(report.get("service") or [])
        if report["error"]:
            print("ERROR: " + report["error"])
        print("verdict: " + ("OK — every required layer is applied" if report["ok"]
                             else "FAIL — a required layer is missing; no user code would run"))
    return 0 if report["ok"] else 3

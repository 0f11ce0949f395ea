"""The audit report: markdown (``--markdown``, tests/escape/LATEST.md), plain text (the default)
and the host facts both start with. ``--json`` prints the report dict of ``run.run_matrix`` as is.
"""
from __future__ import annotations

import ctypes
import os
import platform
import time


def host_info(jail_uid=None) -> dict:
    info = {"kernel": platform.release(), "python": platform.python_version(), "euid": os.geteuid(),
            "jail_uid": (str(jail_uid) if jail_uid else ("nobody" if os.geteuid() == 0 else "own uid")),
            "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "cpus": os.cpu_count()}
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        info["landlock_abi"] = libc.syscall(444, None, 0, 1)  # landlock_create_ruleset(..., VERSION)
    except Exception:
        pass
    return info


def _cell_text(c: dict | None) -> str:
    if not c:
        return "—"
    v = c["verdict"]
    if v == "blocked":
        note = f"; note: {'; '.join(c['notes'])}" if c.get("notes") else ""
        return f"blocked ({c['layer']}{note})"
    if v == "ESCAPED":
        return "**ESCAPED**: " + "; ".join(c["canaries"])[:200]
    if v == "skipped":
        return "skipped"
    return "error: " + c["detail"][:120]


def render_markdown(report: dict) -> str:
    cols = report["columns"]
    h = report["host"]
    lines = ["# Escape matrix (`build123d-launcher audit`)", "",
             f"Host: kernel {h['kernel']}, Python {h['python']}, euid {h['euid']}, jail uid {h['jail_uid']}, "
             f"Landlock ABI {h.get('landlock_abi', '?')}, {h.get('cpus')} CPUs; {h['date']}; "
             f"{len(report['payloads'])} payloads, {report['seconds']} s.", "",
             "Required: every cell of `all`; every `touches_os: yes` or `then:` cell of `os_only`. "
             "`python_only` is reported, not required (it may really escape).", "",
             "| payload | category | os | " + " | ".join(cols) + " |",
             "|---|---|---|" + "---|" * len(cols)]
    for p in report["payloads"]:
        cells = []
        for c in cols:
            cell = p["cells"].get(c)
            t = _cell_text(cell).replace("|", "\\|")
            if cell and cell["verdict"] != "blocked" and cell["verdict"] != "skipped":
                t += " (required)" if (c == "all" or (c == "os_only" and (p["touches_os"] or p.get("then")))) else ""
            cells.append(t)
        lines.append(f"| `{p['id']}` | {p['category']} | {'yes' if p['touches_os'] else 'no'} | "
                     + " | ".join(cells) + " |")
    lines.append("")
    for c in cols:
        cnt = {}
        for p in report["payloads"]:
            v = (p["cells"].get(c) or {}).get("verdict", "—")
            cnt[v] = cnt.get(v, 0) + 1
        info = report.get("column_info", {}).get(c, {})
        lines.append(f"- `{c}` ({', '.join(info.get('profiles', []))}; {info.get('seconds', '?')} s): "
                     + ", ".join(f"{k} {v}" for k, v in sorted(cnt.items())))
    lines.append("")
    if report["ok"]:
        lines.append("**Verdict: PASS** — every required cell is blocked.")
    else:
        lines.append(f"**Verdict: FAIL** — {len(report['failures'])} required cell(s) not blocked:")
        for f in report["failures"]:
            lines.append(f"- `{f['id']}` [{f['column']}] {f['verdict']}: "
                         + ("; ".join(f["canaries"]) or f["detail"]))
    return "\n".join(lines) + "\n"


def render_text(report: dict) -> str:
    cols = report["columns"]
    w = max([len(p["id"]) for p in report["payloads"]] + [10])
    out = [f"{'payload':<{w}}  {'category':<13} os  " + "  ".join(f"{c:<28}" for c in cols)]
    for p in report["payloads"]:
        cells = []
        for c in cols:
            cell = p["cells"].get(c)
            if not cell:
                t = "-"
            elif cell["verdict"] == "blocked":
                t = f"blocked/{cell['layer']}"
            elif cell["verdict"] == "ESCAPED":
                t = "ESCAPED!"
            else:
                t = cell["verdict"]
            cells.append(f"{t[:28]:<28}")
        out.append(f"{p['id']:<{w}}  {p['category']:<13} {'y' if p['touches_os'] else 'n'}   " + "  ".join(cells))
    out.append("")
    esc = [(p["id"], c, p["cells"][c]) for p in report["payloads"] for c in cols
           if (p["cells"].get(c) or {}).get("verdict") == "ESCAPED"]
    for pid, c, cell in esc:
        out.append(f"ESCAPED {pid} [{c}]: " + "; ".join(cell["canaries"]))
    out.append("")
    if report["ok"]:
        out.append(f"VERDICT: PASS ({len(report['payloads'])} payloads, {report['seconds']} s): "
                   "every required cell is blocked")
    else:
        out.append(f"VERDICT: FAIL: {len(report['failures'])} required cell(s) not blocked:")
        for f in report["failures"]:
            out.append(f"  {f['id']} [{f['column']}] {f['verdict']}: " + ("; ".join(f["canaries"]) or f["detail"]))
    return "\n".join(out) + "\n"

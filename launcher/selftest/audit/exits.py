"""What leaves the jail after a call: a payload's ``# then:`` step, run through the real tools.

The classes of this module are about what reaches the human *after* a call: the exported script
(run with a plain interpreter, collected by pytest), the rendered reply's first line, the names
export writes, the input files import_file hands over, the daemon's connection slots. After the
payload's call, :func:`run_then` drives that exit the way a client and a user would (a
:class:`~launcher.tools.toolset.ToolSet` on the attacker session: schema, handler and renderer as
served) and returns the canaries that fired: ``leak:`` (a planted token in a tool reply, a
rendered text or a host run's output), ``proof:`` (an ``ESCAPE-RESULT: escaped=`` line there),
``forged:`` (the ``{FORGED}`` token shown as real), ``script:``, ``export:``, ``inputs:``,
``daemon:``. Files created on the host are caught by the cell's files canary. The checks judge
effects (tokens, files, bytes written, replies served), never the wording of an error.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from launcher.selftest.audit.payloads import ESCAPE_LINE, Payload
from launcher.selftest.audit.planted import remove
from launcher.tools.toolset import ToolSet

#: the export names of ``then: export`` are each tried with these formats ('' = from the extension)
EXPORT_FORMATS = ("", "step")


def scan(where: str, obj, leak_markers: dict[str, str], *, output: bool = False) -> list[str]:
    """``leak:`` canaries for anything that reached the human (a reply dict, a text); ``output``: it
    is what code printed, so ``proof:`` lines count too (in a script's source they are only text)."""
    blob = obj if isinstance(obj, str) else json.dumps(obj, default=str, ensure_ascii=False)
    fired = [f"leak:{label} (in {where})" for label, marker in leak_markers.items() if marker and marker in blob]
    for line in (blob.splitlines() if output else ()):
        m = ESCAPE_LINE.search(line)
        if m and "escaped=" in m.group(1):
            fired.append(f"proof:{m.group(1).strip()[:100]} (in {where})")
    return fired


def toolset(rig, session=None) -> ToolSet:
    """The tools as a client gets them, on ``session`` (default: the attacker's)."""
    ts = ToolSet(rig.launcher)
    ts.session = session if session is not None else rig.attacker
    return ts


def tree(root: Path) -> set[str]:
    """Every entry under ``root`` (relative names, directories too)."""
    out = set()
    for dirpath, dirnames, filenames in os.walk(root):
        for n in dirnames + filenames:
            out.add(os.path.relpath(os.path.join(dirpath, n), root))
    return out


def clear_new(root: Path, before: set[str]) -> None:
    for rel in sorted(tree(root) - before, key=len):
        remove(root / rel)


def check_reply(rig, res: dict, values: dict) -> list[str]:
    """``then: reply``: the reply as the execute tool renders it; its first line is the launcher's."""
    from launcher.tools.session import execute_content
    text = execute_content(res)[0]["text"]
    first = text.splitlines()[0] if text else ""
    if values["FORGED"] in first:
        return [f"forged: the reply's first line carries the session's text: {first[:160]!r}"]
    return []


def check_export_names(rig, names: tuple[str, ...], values: dict) -> list[str]:
    """``then: export NAME...``: export must refuse every name (with each format of EXPORT_FORMATS):
    nothing may appear in the output directory."""
    outdir, leaks = rig.canaries.outdir, rig.canaries.leak_markers()
    ts, fired = toolset(rig), []
    for name in names:
        for fmt in EXPORT_FORMATS:
            before = tree(outdir)
            r = ts.call("export", {"object_name": "part", "filename": name, "format": fmt})
            fired += scan(f"export {name}", r, leaks)
            new = sorted(tree(outdir) - before)
            if new:
                fired.append(f"export: {name!r} (format {fmt!r}) put {', '.join(new)[:120]} in the output directory")
                clear_new(outdir, before)
    return fired


def run_then(rig, payload: Payload, res: dict, values: dict) -> list[str]:
    """The payload's ``then:`` step (see ``payloads.THEN_KINDS``); the canaries that fired."""
    kind, args = payload.then[0], payload.then[1:]
    try:
        if kind == "reply":
            return check_reply(rig, res, values)
        if kind == "export":
            return check_export_names(rig, args, values)
        if kind == "script":
            from launcher.selftest.audit.hostrun import check_script
            return check_script(rig, values)
        if kind == "inputs":
            from launcher.selftest.audit.inputcheck import check_inputs
            return check_inputs(rig, values)
        if kind == "idle":
            from launcher.selftest.audit.idlecheck import check_idle
            return check_idle(rig, values)
        if kind == "daemon-slots":
            from launcher.selftest.audit.slots import check_slots
            return check_slots(rig, values)
    except Exception as e:  # noqa: BLE001 - a check that cannot run cannot pass
        return [f"{kind}: the check could not run ({type(e).__name__}: {str(e)[:200]})"]
    return [f"{kind}: unknown then: step"]

"""README's tools table and limits table, generated from the declarations.

    python docs/tables.py           # exit 0 if README.md is in sync, else print a diff and exit 1
    python docs/tables.py --write   # rewrite the marked blocks in README.md
    python docs/tables.py --print   # print the two blocks

The tools table reads the tool declarations (``launcher.tools.TOOLS``): name, the first sentence
of the description (profile placeholders filled from profiles/default.toml), whether the tool
changes the session, and its MCP hints (read-only, destructive, idempotent). The limits
table reads ``[limits]`` of profiles/default.toml with one line of meaning per limit (LIMIT_MEANINGS,
from the comments in that file). Each table sits between ``<!-- NAME:begin -->`` and
``<!-- NAME:end -->`` in README.md; tests/unit/test_docs_tables.py fails when they differ.
"""
from __future__ import annotations

import dataclasses
import difflib
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
README = REPO / "README.md"
DEFAULT_PROFILE = REPO / "profiles" / "default.toml"

if str(REPO) not in sys.path:  # `python docs/tables.py` from a checkout without an installed tree
    sys.path.insert(0, str(REPO))

LIMIT_MEANINGS = {
    "timeout_s": "wall clock per `execute`; the launcher SIGKILLs the call's process through a pidfd "
                 "(a call's `timeout_s` may set another, up to `max_timeout_s`)",
    "max_timeout_s": "the most a call's `timeout_s` may ask for (above it the call is refused, naming this key); "
                     "keep `cpu_s` at least this, or CPU-bound calls stop at `cpu_s`",
    "cpu_s": "CPU time per call (`RLIMIT_CPU`, restarts at 0 in every forked process)",
    "memory_mb": "address space per process on top of the session's baseline (`RLIMIT_AS`)",
    "nproc": "processes in the session's own user namespace (`RLIMIT_NPROC`)",
    "nofile": "open files per process (`RLIMIT_NOFILE`)",
    "max_code_bytes": "larger `execute` code is refused before it reaches the jail",
    "max_output_bytes": "stdout+stderr kept per call: half head, half tail; the middle is counted",
    "max_result_bytes": "a reply larger than this is refused and its process killed",
    "max_export_bytes": "largest file `export` writes",
    "max_snapshots": "snapshots per session",
    "max_sessions": "sessions open at once in one launcher (the daemon: also its connections)",
    "session_memory_mb": "all of one session's processes together, snapshots included "
                         "(cgroup memory bound, else the launcher's watchdog)",
    "session_cpus": "the whole session's CPU share (cgroup CPU quota, else the watchdog)",
    "max_output_dir_bytes": "exports refused once the output directory would hold more",
    "max_output_dir_files": "... or more entries (files and directories, counted without following symlinks)",
    "max_input_bytes": "`import_file`: largest file read from the input directory (at most 63 MiB)",
    "import_timeout_s": "`import_file`: wall clock of the parse in the jail (killed past it, session unchanged)",
}

_SENTENCE = re.compile(r"^(.+?[.!?])(?=\s+[A-Z`(]|\s*$)", re.S)


def first_sentence(text: str) -> str:
    """The description up to the first full stop that ends a sentence (``e.g. x`` does not)."""
    text = " ".join(text.split())
    m = _SENTENCE.match(text)
    return m.group(1) if m else text


def _cell(s: str) -> str:
    return " ".join(str(s).split()).replace("|", "\\|")


def _yes(b: bool) -> str:
    return "yes" if b else "no"


def load_default():
    from launcher.profile import load_profile
    return load_profile(str(DEFAULT_PROFILE))


def load_tools():
    from launcher.tools import TOOLS
    return TOOLS


def hints(tool) -> str:
    """The tool's MCP hints in words: read-only, or destructive and/or idempotent."""
    a = tool.annotations
    if a["readOnlyHint"]:
        return "read-only"
    return ", ".join(w for w, on in (("destructive", a["destructiveHint"]), ("idempotent", a["idempotentHint"])) if on) \
        or "-"


def tools_table(tools, profile) -> str:
    rows = ["| tool | what it does | changes the session | MCP hints |", "|---|---|---|---|"]
    for t in tools:
        rows.append(f"| `{t.name}` | {_cell(first_sentence(t.describe(profile)))} "
                    f"| {_yes(t.changes_session)} | {hints(t)} |")
    return "\n".join(rows)


def _size(n: int) -> str:
    for unit, k in (("GiB", 3), ("MiB", 2), ("KiB", 1)):
        if n >= 1024 ** k and n % 1024 ** k == 0:
            return f"{n // 1024 ** k} {unit}"
    return f"{n} bytes"


def limit_value(name: str, v) -> str:
    if name.endswith("_bytes"):
        return _size(int(v))
    if name.endswith("_mb"):
        return f"{v} MiB"
    if name.endswith("_s"):
        return f"{v:g} s"
    if name == "session_cpus":
        return f"{v:g} CPU"
    return f"{v:g}" if isinstance(v, float) else str(v)


def limits_table(profile) -> str:
    rows = ["| limit | default | what it bounds |", "|---|---|---|"]
    for f in dataclasses.fields(profile.limits):
        rows.append(f"| `{f.name}` | {limit_value(f.name, getattr(profile.limits, f.name))} "
                    f"| {_cell(LIMIT_MEANINGS[f.name])} |")
    return "\n".join(rows)


def blocks() -> dict[str, str]:
    profile = load_default()
    return {"tools": tools_table(load_tools(), profile), "limits": limits_table(profile)}


def fill(text: str, new: dict[str, str]) -> str:
    """``text`` with every ``<!-- NAME:begin -->...<!-- NAME:end -->`` block replaced by ``new[NAME]``."""
    for name, body in new.items():
        pat = re.compile(rf"(<!-- {name}:begin -->\n).*?(<!-- {name}:end -->)", re.S)
        if not pat.search(text):
            raise SystemExit(f"README.md has no <!-- {name}:begin --> ... <!-- {name}:end --> block")
        text = pat.sub(lambda m: m.group(1) + body + "\n" + m.group(2), text, count=1)
    return text


def main(argv: list[str]) -> int:
    new = blocks()
    if "--print" in argv:
        print("\n\n".join(new.values()))
        return 0
    old = README.read_text(encoding="utf-8")
    want = fill(old, new)
    if "--write" in argv:
        if want != old:
            README.write_text(want, encoding="utf-8")
            print("README.md: tables rewritten")
        return 0
    if want == old:
        print("README.md: tables in sync")
        return 0
    sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), want.splitlines(True),
                                               "README.md", "README.md (generated)"))
    print("\nREADME.md is out of date: run python docs/tables.py --write")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The escape payload format: a header of ``# key: value`` lines, then Python code.

Header keys: ``id`` (the file name without ``.py``), ``category``, ``effect``, ``touches_os``
(yes: the ``os_only`` column must block it too), ``destructive`` (yes: never run without the OS
layers), ``fast`` (yes: run on the ``*_fast`` profiles, for DoS payloads), ``then`` (what leaves
the jail after the call, exercised by the driver through the real tools and judged by canaries:
:data:`THEN_KINDS`, :mod:`.exits`; such a payload is required in ``all`` and ``os_only`` alike).
``{NAME}`` placeholders are replaced with the canaries' values (:data:`PLACEHOLDERS`) before the
code runs. A payload may print ``ESCAPE-RESULT: key=value ...`` lines (``escaped=<what>`` proves
an effect; ``errno=`` and ``layer=`` say what stopped it).
"""
from __future__ import annotations

import dataclasses
import fnmatch
import re
from pathlib import Path

from launcher.resources import data_dir

PAYLOAD_DIR = data_dir("payloads")  # tests/escape/payloads, or the installed package's copy

HEADER_KEYS = ("id", "category", "effect", "touches_os", "destructive", "fast", "then")
CATEGORIES = ("file-read", "file-write", "network", "process", "introspection", "native", "resource",
              "signal", "kernel", "cross-session", "timing", "protocol", "exit")
#: ``# then: KIND [ARGS]``: after the payload's call, the driver (:mod:`.exits`) ...
THEN_KINDS = {
    "script": "exports the session's script (export format py and the script tool), runs it on the host with "
              "`python FILE` and `python -m pytest` (as a test file in the output directory's parent): nothing "
              "of the session's may run there, and no {FORGED} text may be in it",
    "reply": "renders the call's reply as the execute tool shows it: its first line must not carry {FORGED}",
    "export": "asks export to write each name given (format '' and 'step'): each must be refused, with "
              "nothing appearing in the output directory",
    "inputs": "calls list_inputs and import_file (with and without format=) on the input directory's dot-files "
              "and non-CAD files (must be refused) and its malformed CAD files: no input secret in any reply",
    "idle": "leaves the session idle, so its next warms up through the session's build123d (a patched method "
            "runs there, outside any call): the next's CPU time must stop growing within the warm-up's bound, "
            "and the following call must be served",
    "daemon-slots": "starts a daemon with the column's profile, fills its slots with silent and one-byte-"
                    "trickling connections: a real client must be served within the bound, an idle "
                    "established client must keep its session",
}
ESCAPE_LINE = re.compile(r"ESCAPE-RESULT:\s*(.*)")
PLACEHOLDER = re.compile(r"\{([A-Z][A-Z0-9_]*)\}")

#: Placeholders a payload may use; each ``{NAME}`` is replaced with the value (plain text).
PLACEHOLDERS = {
    "SECRET": "absolute path of the secret file in the temporary $HOME",
    "SECRET_DIR": "the temporary $HOME (also holds a file whose *name* is secret)",
    "SSH_KEY": "$HOME/.ssh/id_rsa (a secret)",
    "BASHRC": "$HOME/.bashrc (a write target)",
    "SECRET_NPY": "a .npy file whose bytes are a secret",
    "SECRET_STL": "an STL file whose geometry sits at x = SECRET_NUM",
    "SECRET_STEP": "a STEP file, same geometry",
    "SECRET_BREP": "a BREP file, same geometry",
    "SECRET_SVG": "an SVG file with a path reaching x = SECRET_NUM",
    "SECRET_NUM": "the secret number (7 digits)",
    "TMP_SECRET": "/tmp/<mark>-other-session.txt, another session's secret",
    "SHM_SECRET": "/dev/shm/<mark>-shm, a secret in RAM-backed shared memory",
    "SYSV_KEY": "key of a SysV shared-memory segment holding a secret (0 if none)",
    "TCP_PORT": "TCP listener on the host's 127.0.0.1",
    "TCP6_PORT": "TCP listener on the host's ::1 (0 if no IPv6)",
    "UDP_PORT": "UDP listener on the host's 127.0.0.1",
    "UNIX_PATH": "a listening unix socket in $HOME",
    "ABSTRACT_NAME": "name (without the leading NUL) of a host abstract unix socket; +'-dgram' is a datagram one",
    "SIGPID": "host pid of the signal recorder (same uid as the jail)",
    "LAUNCHER_PID": "host pid of the launcher (the audit process)",
    "ZYGOTE_PID": "host pid of the zygote",
    "BYSTANDER_PID": "host pid of the bystander session's head",
    "ATTACKER_INIT_PID": "host pid of the attacker session's init",
    "OUTDIR": "the launcher's output directory",
    "INDIR": "the launcher's input directory (import_file reads it; jailed code must not see it), in $HOME",
    "INDIR_SECRET": "a secret file in the input directory",
    "INDIR_STEP": "a STEP file in the input directory, geometry at x = SECRET_NUM",
    "MARK": "a per-run marker: use it in every file name a payload tries to create",
    "HOST_CWD": "the launcher's working directory",
    "FORGED": "a token for text the session forges (a call that never ran, a launcher-looking line): "
              "it must never reach the human as real (see THEN_KINDS)",
    "FORGED_REVERSED": "FORGED reversed: build FORGED at run time ([::-1]) when the payload's own recorded "
                       "source must not carry it",
}


@dataclasses.dataclass
class Payload:
    id: str
    category: str
    effect: str
    touches_os: bool
    destructive: bool
    fast: bool
    path: Path
    code: str
    then: tuple[str, ...] = ()   # (kind, *args): see THEN_KINDS

    def required(self, column: str) -> bool:
        # a `then:` check guards what leaves the jail: the launcher's job whatever the Python layers do
        return column == "all" or (column == "os_only" and (self.touches_os or bool(self.then)))

    def skipped(self, column: str) -> str | None:
        if column == "python_only" and self.destructive:
            return "destructive: never run without the OS layers"
        return None


class PayloadError(ValueError):
    pass


def parse_payload(path: Path) -> Payload:
    text = path.read_text()
    head: dict[str, str] = {}
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        m = re.match(r"#\s*([a-z_]+)\s*:\s*(.*)$", line)
        if m and m.group(1) in HEADER_KEYS:
            head[m.group(1)] = m.group(2).strip()
    missing = [k for k in ("id", "category", "effect", "touches_os") if k not in head]
    if missing:
        raise PayloadError(f"{path.name}: header misses {', '.join(missing)}")
    if head["category"] not in CATEGORIES:
        raise PayloadError(f"{path.name}: unknown category {head['category']!r} (use one of {', '.join(CATEGORIES)})")

    def yn(key, default="no"):
        v = head.get(key, default).lower()
        if v not in ("yes", "no"):
            raise PayloadError(f"{path.name}: {key} must be yes or no, not {v!r}")
        return v == "yes"

    then = tuple(head.get("then", "").split())
    if then and then[0] not in THEN_KINDS:
        raise PayloadError(f"{path.name}: unknown then: {then[0]!r} (use one of {', '.join(THEN_KINDS)})")
    if then and (then[0] == "export") != (len(then) > 1):
        raise PayloadError(f"{path.name}: then: export takes file names, and only export does")
    return Payload(id=head["id"], category=head["category"], effect=head["effect"],
                   touches_os=yn("touches_os"), destructive=yn("destructive"), fast=yn("fast"),
                   path=path, code=text, then=then)


def load_payloads(only: str | None = None, directory: Path = PAYLOAD_DIR) -> list[Payload]:
    out, seen = [], {}
    for p in sorted(directory.glob("*.py")):
        pl = parse_payload(p)
        if pl.id in seen:
            raise PayloadError(f"payload id {pl.id!r} is used by {seen[pl.id]} and {p.name}")
        seen[pl.id] = p.name
        out.append(pl)
    if only:
        pats = [x.strip() for x in only.split(",") if x.strip()]
        out = [p for p in out if any(fnmatch.fnmatchcase(p.id, pat) for pat in pats)]
    return out


def substitute(code: str, values: dict) -> str:
    return PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), code)

"""The matrix's columns side by side: one process per column (``run_matrix(..., parallel=True)``).

Most of a cell's time is waiting (a wall-clock limit, page faults, a session's fork), so columns
overlap well even on two cores. Each column runs in its own interpreter
(``python -m launcher.selftest.audit.parallel SPEC OUT``) with its own launchers, sessions and
host-side canaries (planted secrets, listeners, signal recorder, the environment variable, the
launcher's fd and peak-RSS counts are all per process), exactly the cells it runs sequentially;
the parent merges the column reports. What it does not do: relay progress callbacks, or isolate
a column from the other's load (a stalled host still fires the responsiveness canary: a false
alarm, never a missed one). A column that fails to report is an error, not a skipped column.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path


def run_columns(payloads: list, columns, profiles: dict, *, jail_uid=None, required_only: bool = False) -> list[dict]:
    """One report per column (as :func:`~.run.run_matrix` returns for that column alone). One
    process per column and profile (its fast payloads apart) was slower on 2 cores: 58 s vs 49 s."""
    tmp = Path(tempfile.mkdtemp(prefix="b123d-audit-cols-"))
    procs = []
    try:
        for col in columns:
            spec = {"column": col, "paths": [str(p.path) for p in payloads], "jail_uid": jail_uid,
                    "required_only": required_only, "profiles": [str(x) for x in profiles[col]]}
            (tmp / f"{col}.spec.json").write_text(json.dumps(spec))
            err = open(tmp / f"{col}.stderr", "wb")  # noqa: SIM115 - closed once the child has it
            procs.append((col, subprocess.Popen(
                [sys.executable, "-m", "launcher.selftest.audit.parallel", str(tmp / f"{col}.spec.json"),
                 str(tmp / f"{col}.out.json")], stdin=subprocess.DEVNULL, stdout=err, stderr=err)))
            err.close()
        reports = []
        for name, p in procs:
            rc = p.wait()
            out = tmp / f"{name}.out.json"
            if rc != 0 or not out.exists():
                tail = (tmp / f"{name}.stderr").read_bytes()[-3000:].decode(errors="replace")
                raise RuntimeError(f"escape matrix column {name!r}: its process exited with {rc}:\n{tail}")
            reports.append(json.loads(out.read_text()))
        return reports
    finally:
        for _, p in procs:
            if p.poll() is None:  # the parent failed or was interrupted: the child cleans up on SIGTERM
                p.terminate()
                try:
                    p.wait(60)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        for f in tmp.iterdir():
            f.unlink()
        tmp.rmdir()


def _child(spec_path: str, out_path: str) -> int:
    from launcher.selftest.audit.payloads import parse_payload
    from launcher.selftest.audit.run import run_matrix

    def _term(signum, frame):  # leave through the context managers: canaries and launchers cleaned up
        raise SystemExit(128 + signum)
    signal.signal(signal.SIGTERM, _term)
    spec = json.loads(Path(spec_path).read_text())
    payloads = [parse_payload(Path(p)) for p in spec["paths"]]
    col = spec["column"]
    profiles = {col: tuple(Path(x) for x in spec["profiles"])}
    report = run_matrix(payloads, (col,), jail_uid=spec["jail_uid"], column_profiles=profiles,
                        required_only=spec["required_only"])
    tmp = out_path + ".part"
    with open(tmp, "w") as f:
        json.dump(report, f, default=str)
    os.replace(tmp, out_path)
    return 0


if __name__ == "__main__":
    sys.exit(_child(sys.argv[1], sys.argv[2]))

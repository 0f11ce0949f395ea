#!/usr/bin/env python3
"""build123d's own examples and docs code, unmodified, through ``execute`` (issue 21).

    python bench/bench_corpus.py                  # fetch (once), plain Python, then the jail
    python bench/bench_corpus.py --only tutorial  # files whose path contains "tutorial"
    python bench/bench_corpus.py --extra DIR      # also measure the .py scripts under DIR (third-party code)

1. ``pip download --no-deps --no-binary :all: build123d==<installed version>`` into the cache
   directory (the package registry is the only network used; done once per version), and its
   ``examples/`` and ``docs/`` extracted there.
2. Each ``.py`` file runs in plain Python (a child forked from this interpreter after it imported
   build123d, as ``__main__``), with a no-op ``ocp_vscode`` stub on ``sys.path``, its working
   directory a temporary copy of its own directory's files, a ``--plain-timeout`` each; the files
   that exit 0 form the corpus. The outcome is cached per
   version (``--fresh`` runs them again).
3. Each corpus file is sent **unmodified** as one ``execute`` call of a fresh session (``ToolSet``
   in-process, the ``--profile`` profile, ``timeout_s`` = the profile's maximum), the input
   directory being the file's own directory in the sdist (so ``list_inputs`` offers what it ships).
   At most 2 files run at once.

Printed: the counts, a markdown table of failure categories (the first line of each error,
categorised) and one of every failing file, for bench/RESULTS.md. ``--json FILE`` writes it all.
"""
from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

DEFAULT_CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "build123d-launcher" / "corpus"

# a viewer that does nothing: every name is a callable that accepts anything and returns None
OCP_VSCODE_STUB = '''\
"""No-op stand-in for the ocp_vscode viewer (bench/bench_corpus.py, plain-Python runs)."""
class _Noop:
    def __init__(self, *a, **k): pass
    def __call__(self, *a, **k): return None
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Noop()
    def __iter__(self): return iter(())
    def __bool__(self): return False
_NAMES = ("show show_object show_all show_clear reset_show set_port get_port set_defaults get_defaults "
          "reset_defaults set_colormap get_colormap reset_colormap save_screenshot workspace_config status "
          "Camera Collapse ColorMap Animation ListedColorMap get_pick get_picks").split()
for _n in _NAMES:
    globals()[_n] = _Noop()
__all__ = list(_NAMES)
def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _Noop()
'''


# ------------------------------------------------------------------ corpus
def installed_version() -> str:
    from importlib.metadata import version
    return version("build123d")


def fetch(cache: Path, ver: str) -> Path:
    """The extracted sdist's root (``cache/build123d-<ver>``), downloaded with pip when missing."""
    root = cache / f"build123d-{ver}"
    if (root / "examples").is_dir():
        return root
    cache.mkdir(parents=True, exist_ok=True)
    sdist = cache / f"build123d-{ver}.tar.gz"
    if not sdist.exists():
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
               f"build123d=={ver}", "-d", str(cache)]
        print("fetching:", " ".join(cmd), flush=True)
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    with tarfile.open(sdist) as tf:
        prefix = f"build123d-{ver}/"
        members = [m for m in tf.getmembers() if (m.isfile() or m.isdir()) and ".." not in m.name.split("/") and
                   (m.name.startswith(prefix + "examples/") or m.name.startswith(prefix + "docs/"))]
        if hasattr(tarfile, "data_filter"):  # Python >= 3.11.4 / 3.12
            tf.extractall(cache, members=members, filter="data")
        else:  # regular files and directories only, no "..": nothing lands outside the cache
            tf.extractall(cache, members=members)
    return root


def corpus_files(root: Path, only: str | None) -> list[Path]:
    files = sorted(p for d in ("examples", "docs") for p in (root / d).rglob("*.py") if p.is_file())
    return [p for p in files if only is None or only in str(p.relative_to(root))]


# ------------------------------------------------------------------ plain Python
def stage(f: Path, tmp: Path) -> None:
    """``tmp`` made like ``f``'s directory: its files, its subdirectories (empty: a script may write
    there), and the files in them that the script names in a string literal (what it reads)."""
    base = f.parent
    for p in base.iterdir():
        if p.is_file():
            shutil.copy(p, tmp)
        elif p.is_dir():
            for d in [p, *(q for q in p.rglob("*") if q.is_dir())]:
                (tmp / d.relative_to(base)).mkdir(parents=True, exist_ok=True)
    for lit in set(re.findall(r"[\"']([\w./-]+/[\w.-]+)[\"']", f.read_text(encoding="utf-8", errors="replace"))):
        src = (base / lit).resolve()
        if src.is_file() and base.resolve() in src.parents:
            (tmp / lit).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(src, tmp / lit)


def _child(f: Path, tmp: Path, stub: Path, err: Path) -> None:
    """In a forked child: run ``f`` as ``__main__`` from ``tmp``; never returns."""
    import runpy
    import traceback
    code = 1
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 1)
        efd = os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(efd, 2)
        os.chdir(tmp)
        sys.path[:0] = [str(stub), str(tmp)]
        sys.argv = [f.name]
        runpy.run_path(f.name, run_name="__main__")
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(code)


def run_plain_all(root: Path, files: list[Path], stub: Path, timeout: float, workers: int):
    """Each file in a child forked from this process (build123d already imported: the import is
    paid once), at most ``workers`` at a time; yields one result dict per file as it ends."""
    import signal
    import build123d  # noqa: F401 - paid once, inherited by every fork
    todo = list(files)
    running: dict[int, tuple] = {}
    while todo or running:
        while todo and len(running) < workers:
            f = todo.pop(0)
            tmp = Path(tempfile.mkdtemp(prefix="corpus-plain-"))
            stage(f, tmp)
            err = tmp.parent / (tmp.name + ".err")
            sys.stdout.flush()
            pid = os.fork()
            if pid == 0:
                _child(f, tmp, stub, err)
            running[pid] = (f, tmp, err, time.monotonic())
        pid, status = os.waitpid(-1, os.WNOHANG)
        if pid == 0:
            now = time.monotonic()
            for p, (f, _tmp, _err, t0) in running.items():
                if now - t0 > timeout:
                    os.kill(p, signal.SIGKILL)
            time.sleep(0.05)
            continue
        f, tmp, err, t0 = running.pop(pid)
        code = os.waitstatus_to_exitcode(status)
        killed = code == -signal.SIGKILL and time.monotonic() - t0 > timeout
        why = f"timeout ({timeout:g} s)" if killed else _last_line(err.read_text(errors="replace")) \
            if err.exists() else ""
        shutil.rmtree(tmp, ignore_errors=True)
        err.unlink(missing_ok=True)
        yield {"file": str(f.relative_to(root)), "ok": code == 0, "why": "" if code == 0 else (why or f"exit {code}"),
               "s": round(time.monotonic() - t0, 2)}


def _last_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:200] if lines else ""


def plain_results(root: Path, files: list[Path], cache: Path, ver: str, timeout: float, workers: int,
                  fresh: bool) -> dict[str, dict]:
    store = cache / f"plain-{ver}.json"
    known: dict[str, dict] = {}
    if store.exists():
        known = json.loads(store.read_text())
    if fresh:  # the files asked for run again; the others' results are kept
        for f in files:
            known.pop(str(f.relative_to(root)), None)
    todo = [f for f in files if str(f.relative_to(root)) not in known]
    if todo:
        print(f"plain Python: {len(todo)} files ({len(files) - len(todo)} cached)", flush=True)
        with tempfile.TemporaryDirectory(prefix="corpus-stub-") as stub:
            Path(stub, "ocp_vscode.py").write_text(OCP_VSCODE_STUB)
            for r in run_plain_all(root, todo, Path(stub), timeout, workers):
                known[r["file"]] = r
                print(f"  plain {'ok ' if r['ok'] else 'NO '} {r['s']:6.1f}s {r['file']} {r['why']}", flush=True)
        store.parent.mkdir(parents=True, exist_ok=True)
        store.write_text(json.dumps(known, indent=1, sort_keys=True))
    return {str(f.relative_to(root)): known[str(f.relative_to(root))] for f in files}


# ------------------------------------------------------------------ through execute
def categorise(result: dict) -> str:
    """One short category for a failed execute result (the first line of its error, generalised)."""
    if result.get("ok"):
        return ""
    if "error" in result and not isinstance(result["error"], dict):
        return f"tool error: {str(result['error']).splitlines()[0][:80]}"
    e = result.get("error") or {}
    typ, msg = str(e.get("type", "?")), str(e.get("message", "")).splitlines()[0] if e.get("message") else ""
    if typ == "PolicyError":
        rule = e.get("rule", "?")
        m = re.search(r"import of '([\w.]+)'", msg)
        if rule == "import" and m:
            return f"policy: import {m.group(1).split('.')[0]}"
        m = re.search(r"'(\w+)'", msg)
        return f"policy: {rule}" + (f" {m.group(1)}" if m else "")
    if typ == "ExecutionTimeout":
        return "timeout"
    if typ in ("ImportError", "ModuleNotFoundError"):
        m = re.search(r"'([\w.]+)'", msg)
        return f"{typ}: {m.group(1) if m else msg[:60]}"
    if typ in ("PermissionError", "OSError", "FileNotFoundError", "IsADirectoryError"):
        return f"{typ} (file access)"
    if "write" in msg.lower() and ("file" in msg.lower() or "step" in msg.lower()):
        return f"{typ}: file write"
    if typ == "NameError":
        m = re.search(r"name '(\w+)'", msg)
        return f"NameError: {m.group(1) if m else '?'}"
    return f"{typ}: {re.sub(r'[0-9.]+', 'N', msg)[:60]}"


def run_jailed(root: Path, files: list[str], profile: str, timeout_s: float | None, workers: int,
               out_base: Path) -> dict[str, dict]:
    """One fresh session per file, one Launcher per directory (its input directory)."""
    from launcher.core import Launcher
    from launcher.tools.toolset import ToolSet

    by_dir: dict[str, list[str]] = {}
    for rel in files:
        by_dir.setdefault(str(Path(rel).parent), []).append(rel)
    results: dict[str, dict] = {}
    for d, group in sorted(by_dir.items()):
        with Launcher(profile, output_dir=out_base / d.replace("/", "_"), input_dir=root / d,
                      spare_sessions=workers) as L:
            lim = L.profile.limits
            t = timeout_s or getattr(lim, "max_timeout_s", None) or lim.timeout_s

            def one(rel: str) -> dict:
                code = (root / rel).read_text(encoding="utf-8")
                ts = ToolSet(L)
                t0 = time.monotonic()
                try:
                    r = ts.call("execute", {"code": code, "timeout_s": t})
                finally:
                    ts.close()
                err = r.get("error") if isinstance(r.get("error"), dict) else {"message": r.get("error")}
                first = str((err or {}).get("message") or "").splitlines()[:1]
                return {"file": rel, "ok": bool(r.get("ok")), "category": categorise(r),
                        "why": (f"{(err or {}).get('type', '')}: {first[0] if first else ''}"[:160]
                                if not r.get("ok") else ""),
                        "s": round(time.monotonic() - t0, 2)}

            with cf.ThreadPoolExecutor(workers) as ex:
                for r in ex.map(one, group):
                    results[r["file"]] = r
                    print(f"  jail  {'ok ' if r['ok'] else 'NO '} {r['s']:6.1f}s {r['file']} {r['category']}",
                          flush=True)
    return results


# ------------------------------------------------------------------ report
def report(label: str, plain: dict[str, dict], jailed: dict[str, dict]) -> str:
    ran = [k for k, v in plain.items() if v["ok"]]
    ok = [k for k in ran if jailed.get(k, {}).get("ok")]
    pct = 100.0 * len(ok) / len(ran) if ran else 0.0
    lines = [f"**{label}**: {len(plain)} files, {len(ran)} run in plain Python (no-op viewer), "
             f"**{len(ok)} of {len(ran)} ({pct:.0f} %) run unmodified through `execute`**.", ""]
    cats: dict[str, list[str]] = {}
    for k in ran:
        r = jailed.get(k)
        if r and not r["ok"]:
            cats.setdefault(r["category"], []).append(k)
    if cats:
        lines += ["| why it failed (first error) | files | e.g. |", "|---|---:|---|"]
        for c, fs in sorted(cats.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            lines.append(f"| {c} | {len(fs)} | {', '.join(Path(f).name for f in fs[:3])} |")
        lines += ["", "<details><summary>every failing file</summary>", "",
                  "| file | s | first line of the error |", "|---|---:|---|"]
        for k in sorted(k for fs in cats.values() for k in fs):
            r = jailed[k]
            lines.append(f"| {k} | {r['s']:.1f} | {r['why'].replace('|', '/')} |")
        lines += ["", "</details>"]
    not_plain = [f"{k} ({v['why'][:60]})" for k, v in plain.items() if not v["ok"]]
    if not_plain:
        lines += ["", "Not run (fail in plain Python too): " + "; ".join(not_plain)]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help=f"sdist cache (default {DEFAULT_CACHE})")
    ap.add_argument("--version", default=None, help="build123d version (default: the installed one)")
    ap.add_argument("--profile", default="default")
    ap.add_argument("--workers", type=int, default=2, choices=(1, 2))
    ap.add_argument("--plain-timeout", type=float, default=180.0)
    ap.add_argument("--timeout-s", type=float, default=None, help="execute's timeout_s (default: the profile's max)")
    ap.add_argument("--only", default=None, help="only files whose relative path contains this")
    ap.add_argument("--extra", type=Path, action="append", default=[], help="a directory of other .py scripts")
    ap.add_argument("--fresh", action="store_true", help="run the plain-Python pass again (not the cached one)")
    ap.add_argument("--json", type=Path, default=None, help="write every result to this file")
    args = ap.parse_args()

    ver = args.version or installed_version()
    t0 = time.monotonic()
    sets = [(f"build123d {ver} examples + docs", fetch(args.cache, ver), "sdist")]
    sets += [(f"other scripts: {d}", d.resolve(), f"extra-{i}") for i, d in enumerate(args.extra)]
    out: dict = {"version": ver, "profile": args.profile, "sets": []}
    texts = []
    with tempfile.TemporaryDirectory(prefix="corpus-out-") as outdir:
        for label, root, key in sets:
            files = (corpus_files(root, args.only) if key == "sdist" else
                     sorted(p for p in root.rglob("*.py") if p.is_file() and (args.only or "") in str(p)))
            plain = plain_results(root, files, args.cache, f"{ver}-{key}" if key != "sdist" else ver,
                                  args.plain_timeout, args.workers, args.fresh)
            ran = [k for k, v in plain.items() if v["ok"]]
            print(f"{label}: {len(ran)} of {len(files)} run in plain Python; now through execute", flush=True)
            jailed = run_jailed(root, ran, args.profile, args.timeout_s, args.workers, Path(outdir) / key)
            texts.append(report(label, plain, jailed))
            out["sets"].append({"label": label, "plain": plain, "jailed": jailed})
    print(f"\n## Corpus (bench/bench_corpus.py, profile {args.profile}, {time.monotonic() - t0:.0f} s)\n")
    print("\n\n".join(texts))
    if args.json:
        args.json.write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()

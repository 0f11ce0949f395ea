"""Command line: ``build123d-launcher {mcp,serve,run,demo,doctor,audit}``.

Each command imports what it needs inside its function (start-up cost: ``mcp`` must answer
``initialize`` at once, and no command loads the modules of another).
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import sys

from jail.wire.errors import LayerError

from launcher.profile import ProfileError

DEMO_CODE = '''\
length, width, thickness = 80.0, 60.0, 10.0
with BuildPart() as plate:
    Box(length, width, thickness)
    with GridLocations(length - 20, width - 20, 2, 2):
        Hole(radius=4)
    fillet(plate.edges().filter_by(Axis.Z), radius=3)
print(f"plate: {len(plate.part.faces())} faces")
part = plate.part
'''


def _setup_logging(verbose: bool) -> None:
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO, stream=sys.stderr,
                        format="%(levelname)s %(name)s: %(message)s")


def _launcher(args):
    from launcher.core import Launcher
    return Launcher(args.profile, output_dir=args.output_dir, jail_uid=args.jail_uid,
                    input_dir=getattr(args, "input_dir", None))


def cmd_run(args) -> int:
    """Run a build123d file in a fresh jailed session. A script exported by the launcher (its guard
    line exactly as written) runs call by call: each under its own time limit, errors naming the
    call and its line in the file, imports through ``import_file`` from ``--input-dir``."""
    from launcher.files import script
    from launcher.tools import ToolSet, render_text
    try:
        code = sys.stdin.read() if args.file == "-" else open(args.file, encoding="utf-8").read()
    except (OSError, UnicodeDecodeError) as e:
        print(f"build123d-launcher run: cannot read {args.file}: {getattr(e, 'strerror', None) or e}",
              file=sys.stderr)
        return 2
    calls = script.split(code)
    with _launcher(args) as launcher:
        if calls is not None:
            need = [c for c in calls if script.parse_import(c["code"])]
            if need and launcher.input_dir is None:
                print(f"build123d-launcher run: call {need[0]['call']} of {args.file} imports a file: give "
                      "--input-dir DIR, the folder that holds the imported files", file=sys.stderr)
                return 2
        ts = ToolSet(launcher)
        ts.session = launcher.new_session()  # a layer that cannot be applied raises here: exit 3
        try:
            if calls is None:  # a plain build123d file: one call
                res = ts.call("execute", {"code": code})
                print(render_text("execute", res) if not args.json else json.dumps(res, indent=1))
                return 0 if res.get("ok") else 1
            return _run_calls(ts, calls, args, render_text)
        finally:
            ts.close()


def _run_calls(ts, calls: list[dict], args, render_text) -> int:
    from launcher.files import script
    if not args.json:
        print(f"build123d-launcher run: {args.file} is a script exported by build123d-launcher (untrusted code "
              f"an AI session wrote): running its {len(calls)} call(s) one by one in a fresh jailed session\n")
    done = []
    for c in calls:
        label = f"call {c['call']}" if c["call"] else "the lines before the first call"
        imp = script.parse_import(c["code"])
        if imp is not None:
            name, fmt, filename = imp
            tool, res = "import_file", ts.call("import_file", {"filename": filename, "name": name, "format": fmt})
        else:
            tool, res = "execute", ts.call("execute", {"code": c["code"]})
        done.append({"call": c["call"], "line": c["line"], "tool": tool, "result": res})
        if not args.json:
            print(f"--- {label} (line {c['line']} of {args.file}):\n{render_text(tool, res)}\n")
        if not res.get("ok"):
            if args.json:
                print(json.dumps(done, indent=1))
            err = res.get("error")
            line = err.get("line") if isinstance(err, dict) else None
            at = f", line {c['line'] + line - 1} of the file" if isinstance(line, int) and line > 0 else ""
            print(f"build123d-launcher run: {label} failed{at}; the calls after it did not run", file=sys.stderr)
            return 1
    if args.json:
        print(json.dumps(done, indent=1))
    return 0


def cmd_demo(args) -> int:
    from launcher.tools import ToolSet, render_text
    print("build123d-launcher demo: a plate with four holes, run in the jail\n")
    print(DEMO_CODE)
    with _launcher(args) as launcher:
        ts = ToolSet(launcher)
        ts.session = launcher.new_session()
        res = ts.call("execute", {"code": DEMO_CODE})
        print(render_text("execute", res))
        if not res.get("ok"):
            return 1
        probe = ts._session().probe()
        p = probe.get("probes", {})
        host = launcher.zygote.evidence.get("userns", {})
        print(f"\nThe jail runs as host uid {host.get('host_uid', '?')} (uid 0 only inside its user namespaces).")
        print("Inside the jail: "
              f"Seccomp={probe.get('Seccomp')} NoNewPrivs={probe.get('NoNewPrivs')} CapEff={probe.get('CapEff')} "
              f"uid_map={' '.join(probe.get('uid_map', []) if isinstance(probe.get('uid_map'), list) else [])} "
              f"net={probe.get('net_dev')} socket(AF_INET)={p.get('socket_inet')} /etc/shadow={p.get('etc_shadow')}")
        bad = ts.call("execute", {"code": "import subprocess\nsubprocess.run(['id'])"})
        print("\nAn escape attempt (import subprocess) is refused:\n" + render_text("execute", bad))
        ts.close()
    return 0


def _socket_exists(path: str | None) -> bool:
    import stat
    try:
        return path is not None and stat.S_ISSOCK(os.lstat(path).st_mode)
    except OSError:
        return False


def _mcp_plan(args) -> tuple[str | None, str]:
    """(the daemon socket ``mcp`` tries, or None; the backend as the instructions say it at once)."""
    if args.embedded:
        return None, "embedded (--embedded): the jail runs in this server's process."
    if args.socket:
        return args.socket, f"daemon (socket {args.socket}, --socket: required); being set up."
    from launcher.daemon.client import DaemonUnavailable, default_socket_path
    try:
        path = default_socket_path()
    except DaemonUnavailable:
        return None, "embedded (no daemon socket path: XDG_RUNTIME_DIR is not set)."
    if _socket_exists(path):
        return path, (f"being set up: daemon (socket {path}) if it answers with this profile, else embedded "
                      "(falls back when no daemon answers).")
    return path, f"embedded (no daemon at {path})."


def _say(msg: str) -> None:
    """One line of the launcher's own on stderr (the MCP client's log), whatever the log level."""
    print(f"build123d-launcher mcp: {msg}", file=sys.stderr, flush=True)


def cmd_mcp(args) -> int:
    from launcher.mcp.deferred import DeferredBackend
    from launcher.mcp.server import serve_stdio
    from launcher.profile import load_profile
    profile = load_profile(args.profile)  # a bad profile is a usage error: exit 2 before serving
    log = logging.getLogger("build123d_launcher")
    path, note = _mcp_plan(args)

    def make():
        """Daemon or embedded launcher: set up in the background (DeferredBackend), so initialize and
        tools/list are answered at once; the first call waits. A failure is returned by every call."""
        backend = None
        if not args.embedded:
            from launcher.daemon.client import connect_backend
            try:
                backend = connect_backend(args.socket, required=bool(args.socket), profile=args.profile,
                                          output_dir=args.output_dir)
            except SystemExit as e:  # --socket and no daemon: every call returns this (DeferredBackend)
                _say(f"no backend: {str(e.code).removeprefix('build123d-launcher: ')}; every call returns this error")
                raise
            if backend is not None and args.input_dir:
                log.warning("--input-dir %s is ignored: the daemon reads its own input directory (its `serve "
                            "--input-dir` or profile [inputs] dir); use --embedded to use this one", args.input_dir)
        if backend is not None:
            _say(f"using the daemon at {backend.path} (pid {backend.info.get('pid')}, profile "
                 f"{backend.info.get('profile')})")
        else:
            from launcher.core import Launcher
            from launcher.tools import ToolSet
            # the zygote warms in the background; a jail that cannot start does not stop the server:
            # every call returns why, and the fix
            launcher = Launcher(profile, output_dir=args.output_dir, jail_uid=args.jail_uid,
                                warm_in_background=True, input_dir=args.input_dir)
            backend = ToolSet(launcher)
            why = ("--embedded" if args.embedded else "no daemon socket path" if path is None
                   else f"no daemon answers at {path} with profile {launcher.profile.name}" if _socket_exists(path)
                   else f"no daemon at {path}")
            _say(f"embedded launcher, profile {launcher.profile.name} ({why}); the jail is starting")
        return backend

    backend = DeferredBackend(make)
    try:
        serve_stdio(backend, profile, note)
    finally:
        backend.close()
    return 0


def cmd_doctor(args) -> int:
    from launcher.selftest.doctor import run_doctor
    return run_doctor(args)


def cmd_serve(args) -> int:
    from launcher.daemon.server import serve
    return serve(args)


def cmd_audit(args) -> int:
    from launcher.selftest.audit import run_audit
    return run_audit(args)


def main(argv=None) -> int:
    from launcher import __version__
    ap = argparse.ArgumentParser(
        prog="build123d-launcher",
        description="Run untrusted build123d code from AI assistants in an OS jail.",
        epilog="Start with `build123d-launcher demo` and `build123d-launcher doctor`. "
               "MCP clients run `build123d-launcher mcp`. `build123d-launcher COMMAND -h` for a command's options.")
    ap.add_argument("--version", action="version", version=f"build123d-launcher {__version__}")
    ap.add_argument("-v", "--verbose", action="store_true", help="debug logging (doctor: also every rule)")
    sub = ap.add_subparsers(dest="cmd", required=True, metavar="COMMAND")

    def common(p):
        p.add_argument("--profile", default=os.environ.get("BUILD123D_LAUNCHER_PROFILE", "default"),
                       help="profile name (profiles/NAME.toml) or path to a .toml file")
        p.add_argument("--output-dir", default=None,
                       help="where export() writes (default ~/build123d-out, created 0700 on first use; "
                            "never the client's working directory)")
        p.add_argument("--input-dir", default=None, help="where import_file()/list_inputs() read the user's files "
                                                         "(default: none, or the profile's [inputs] dir)")
        p.add_argument("--jail-uid", default=None, help="host uid/user the jail maps to when run as root "
                                                        "(default: nobody)")

    def add(name, help_, desc):
        return sub.add_parser(name, help=help_, description=desc)

    p = add("mcp", "MCP stdio server (uses the daemon if its socket answers)",
            "Serve the build123d tools to an MCP client over stdin/stdout. Uses the daemon when its socket "
            "answers with the same profile, else runs the jail in this process. Answers initialize and "
            "tools/list at once; the first tool call waits for the jail to be ready.")
    common(p)
    p.add_argument("--embedded", action="store_true", help="never use the daemon")
    p.add_argument("--socket", default=None, help="daemon socket path (fail if it does not answer)")
    p.set_defaults(fn=cmd_mcp)
    p = add("serve", "daemon on a unix socket (systemd user service)",
            "Run the launcher as a daemon on a unix socket (mode 0600, own uid only); `mcp` clients use it. "
            "Socket-activated by the systemd user units (`make install-user-service`).")
    common(p)
    p.add_argument("--socket", default=None, help="socket path (default $XDG_RUNTIME_DIR/build123d-launcher.sock)")
    p.set_defaults(fn=cmd_serve)
    p = add("run", "run a file (or - for stdin) in a fresh jailed session",
            "Run one build123d Python file in a fresh jailed session and print the result. A script exported "
            "by build123d-launcher (script / export format py) runs jailed call by call, its guard line "
            "skipped; its imports read --input-dir. "
            "Exit 0 on success, 1 if the code failed, 2 for a usage error, 3 if the jail cannot start.")
    common(p)
    p.add_argument("file", help="a .py file (an exported session script too), or - to read the code from stdin")
    p.add_argument("--json", action="store_true", help="print the raw result as JSON")
    p.set_defaults(fn=cmd_run)
    p = add("demo", "run a small model through the jail",
            "Build a plate with four holes in the jail, show what the jail looks like from inside, and "
            "show an escape attempt being refused.")
    common(p)
    p.set_defaults(fn=cmd_demo)
    p = add("doctor", "show every jail layer: kernel support, applied, evidence",
            "Start a real probe session and show, for every jail layer, what the kernel supports, whether it "
            "was applied and evidence read inside the jail; then the daemon's set-up (user units, user "
            "manager, socket, linger) and the backend `mcp` would use, each with what to do. Exit 0 when "
            "every required layer is applied, 3 otherwise.")
    common(p)
    p.add_argument("--json", action="store_true", help="the full report as JSON")
    p.add_argument("--verbose", dest="doctor_verbose", action="store_true",
                   help="also list every Landlock rule and the full evidence")
    p.add_argument("--socket", default=None, help="daemon socket to check (default $XDG_RUNTIME_DIR/"
                                                  "build123d-launcher.sock)")
    p.set_defaults(fn=cmd_doctor)
    p = add("audit", "run the escape-attempt matrix on this host",
            "Run every escape payload against the jail (column all: every layer, on --profile; os_only: OS "
            "layers alone; python_only: Python layers alone). PASS when every required cell is blocked.")
    common(p)
    p.add_argument("--json", action="store_true", help="the report as JSON")
    p.add_argument("--markdown", action="store_true", help="the report as a Markdown table")
    p.add_argument("--only", default=None, help="comma-separated payload ids or globs (e.g. 'fr01*,net*')")
    p.add_argument("--columns", default="all,os_only,python_only", help="which columns to run")
    p.set_defaults(fn=cmd_audit)
    args = ap.parse_args(argv)
    _setup_logging(args.verbose)
    try:
        return args.fn(args)
    except LayerError as e:  # the layer, the reason and the fix (or the set-up problem, e.g. root + 0700)
        from launcher.core import explain_layer_error
        print(f"build123d-launcher: {explain_layer_error(e, None)}", file=sys.stderr)
        return 3
    except ProfileError as e:
        print(f"build123d-launcher: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

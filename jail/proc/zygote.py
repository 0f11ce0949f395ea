"""The zygote: imports build123d once, applies the ``zygote`` stage of jail/layers/table.py
(the user namespace), forks sessions. It never runs user code.

Started by the launcher as ``python -m jail.proc.zygote FD [--userns MODE] [--jail-uid UID]``
with a clean environment and one inherited ``SOCK_SEQPACKET`` control socket at FD.
Single-threaded by construction (thread-pool variables set before numpy loads, OCCT's pool
single-threaded): ``unshare(CLONE_NEWUSER)`` and a safe ``fork`` both need one thread.

Control messages: ``{"t": "spawn", "id": N, "profile": {...}}`` with the session's socket as
``SCM_RIGHTS``; reply ``{"t": "spawned", "id": N, "pid": keeper_pid}`` (the keeper is
jail/proc/keeper.py). EOF on the control socket (the launcher died) ends the zygote and kills
every session's process group; keepers and inits have ``PR_SET_PDEATHSIG``, and killing pid 1
of a pid namespace kills everything in it: nothing survives the launcher.
"""
from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS",
             "VECLIB_MAXIMUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import gc  # noqa: E402
import select  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import sys  # noqa: E402
import traceback  # noqa: E402


def warm_up() -> dict:
    """Import and exercise what user code needs, so sessions fork warm."""
    import io
    import math, typing, collections, itertools, functools, copy  # noqa: F401
    import numpy  # noqa: F401
    import build123d
    from build123d import Box, BuildPart, Locations, Hole, fillet, Axis, export_step, export_brep
    try:
        from OCP.OSD import OSD_ThreadPool
        OSD_ThreadPool.DefaultPool_s(1)
    except Exception:
        pass
    try:  # keep OCCT's parallel algorithms off: a forked child has no pool threads
        from OCP.BOPAlgo import BOPAlgo_Options
        BOPAlgo_Options.SetParallelMode_s(False)
    except Exception:
        pass
    with BuildPart() as p:
        Box(20, 20, 5)
        with Locations((5, 5, 0)):
            Hole(2)
    part = p.part
    fillet(part.edges().group_by(Axis.Z)[-1], 0.5)
    part.volume
    part.bounding_box()
    part.is_valid
    part.tessellate(0.1)
    export_step(part, io.BytesIO())
    export_brep(part, io.BytesIO())
    try:
        from jail.cad import serialize
        serialize.warm_up(part)
    except Exception:
        pass
    try:  # render/measure/features ops: Pillow, its fonts, the rasteriser and OCCT queries, used once
        from jail.cad import render
        from jail.cad import features, measure
        render.warm_up(part)
        measure.warm_up(part)
        features.warm_up(part)
    except Exception:
        pass
    try:  # import_file: the readers (STEP stream, sewing, expat, zipfile, SVG) used once
        from jail.cad import importer
        importer.warm_up()
    except Exception:
        pass
    import importlib
    for name in ("cad.runner", "cad.policy", "cad.safe_builtins", "proc.chain", "proc.keeper", "proc.probe",
                 "layers.table", "layers.syscalls", "layers.landlock", "layers.mountview", "layers.privileges",
                 "layers.seccomp", "layers.rlimits", "layers.namespaces", "cad.serialize", "cad.render", "cad.measure"):
        try:
            importlib.import_module(f"jail.{name}")
        except ImportError:
            pass  # reported when the layer is applied
    import prctl, pyseccomp  # noqa: F401
    return {"build123d": getattr(build123d, "__version__", "?")}


def thread_count() -> int:
    return len(os.listdir("/proc/self/task"))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("fd", type=int)
    ap.add_argument("--userns", default="required", choices=["required", "best-effort", "off"])
    ap.add_argument("--jail-uid", default=None)
    args = ap.parse_args(argv)
    ctl = socket.socket(fileno=args.fd)
    sys.path[:] = [p for p in sys.path if p not in ("", ".")]
    # imported once the working directory is off sys.path
    from jail.wire import protocol
    from jail.wire.errors import LayerError
    from jail.wire.profile import Profile

    evidence: dict = {}
    try:
        evidence["warm_up"] = warm_up()
        # after the warm-up (which loads them), inside the try: a failure is reported, not a crash
        from jail.layers.table import Context, apply_stage
        from jail.proc.keeper import keeper_main
        n = thread_count()
        if n != 1:
            raise LayerError("userns", f"the zygote has {n} threads after warm-up; it must be single-threaded")
        apply_stage("zygote", {"userns": args.userns}, Context(evidence, jail_uid=args.jail_uid))
    except LayerError as e:
        protocol.send(ctl, {"t": "zygote_error", "layer": e.layer, "reason": e.reason})
        sys.exit(3)
    except BaseException as e:
        protocol.send(ctl, {"t": "zygote_error", "layer": "internal",
                            "reason": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc()[-4000:]})
        sys.exit(3)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # keepers are reaped by the kernel
    gc.collect()
    gc.freeze()
    protocol.send(ctl, {"t": "zygote_ready", "pid": os.getpid(), "evidence": evidence})
    keepers: dict[int, int] = {}  # keeper pid -> pidfd
    while True:
        try:
            data, fds, _flags, _addr = socket.recv_fds(ctl, protocol.CHUNK + 1, 4)
        except InterruptedError:
            continue
        if not data:
            # the launcher is gone: kill every session's process group (each keeper made one);
            # pid namespaces and pdeathsig cover the rest
            for kpid, pfd in keepers.items():
                if not select.select([pfd], [], [], 0)[0]:
                    try:
                        os.killpg(kpid, signal.SIGKILL)
                    except OSError:
                        pass
            os._exit(0)
        for kpid, pfd in list(keepers.items()):  # forget keepers that have exited
            if select.select([pfd], [], [], 0)[0]:
                os.close(pfd)
                del keepers[kpid]
        try:
            msg, _ = protocol.decode(data[1:])
        except protocol.ProtocolError:
            for fd in fds:
                os.close(fd)
            continue
        if msg["t"] == "spawn" and len(fds) == 1:
            profile = Profile.from_wire(msg["profile"])
            try:
                pid = os.fork()
            except OSError as e:
                os.close(fds[0])
                protocol.send(ctl, {"t": "spawn_error", "id": msg.get("id"), "reason": f"fork: {e}"})
                continue
            if pid == 0:
                try:
                    ctl.close()
                    keeper_main(fds[0], profile)
                finally:
                    os._exit(5)
            os.close(fds[0])
            try:
                keepers[pid] = os.pidfd_open(pid)
            except OSError:
                pass
            protocol.send(ctl, {"t": "spawned", "id": msg.get("id"), "pid": pid})
        else:
            for fd in fds:
                os.close(fd)


if __name__ == "__main__":
    main()

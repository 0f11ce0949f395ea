"""``build123d-launcher audit``: the escape-attempt matrix, run on this host.

Every payload in ``tests/escape/payloads/`` (build123d-session Python code that
would escape if it ran unjailed) is executed in a real session under three
columns:

* ``all``          the ``default`` profile (what users run);
* ``os_only``      ``tests/profiles/os_only.toml``: default with the Python
                   layers (AST policy, filtered builtins) off — the OS layers alone;
* ``python_only``  ``tests/profiles/python_only.toml``: every OS layer off, the
                   Python layers on. This column may really escape; destructive
                   payloads are skipped in it. Reported, never required.

A cell is judged by **canaries**, not by what the payload says it did:

* leaks: random tokens (a secret file in a temporary ``$HOME``, a ``.ssh`` key,
  a ``.npy``/STL/STEP/BREP/SVG file carrying a secret number, a file in
  ``/tmp`` and ``/dev/shm``, a SysV shared-memory segment, the launcher's
  environment, the bystander session's variable, ``/etc/machine-id`` and the
  root line of ``/etc/shadow``) must not appear anywhere in the reply;
* network: TCP (IPv4 and IPv6) and UDP listeners on the host's loopback, a unix
  socket in ``$HOME`` and an abstract unix socket must see no connection or datagram;
* files: names+mtimes+sizes of the temporary ``$HOME`` and output directory, and
  of marker-named entries in ``/tmp``, ``/dev/shm``, ``/`` and the cwd, must not change;
* signals: a recorder process (same uid as the jail) must receive no signal, not be
  stopped, traced or killed; the launcher's zygote must stay alive;
* the attacker session must still answer (and, where the AST policy is on, still
  refuse ``import os``: no persistent disabling of a layer); a second "bystander"
  session must answer with its variable unchanged;
* the host stays responsive (a timer thread's worst lateness) and the launcher
  leaks no file descriptors;
* a payload may prove an effect it cannot make visible otherwise (a forbidden
  syscall returned a file descriptor, ``sh -c 'exit 7'`` returned 7) by printing
  ``ESCAPE-RESULT: escaped=<what>``; that counts as a fired canary.

The layer that stopped a blocked payload is read from its error (PolicyError ->
ast_policy, EPERM -> seccomp, EACCES -> landlock, ENOENT/EROFS -> mountview,
MemoryError/EFBIG/EAGAIN/EMFILE -> rlimits, Timeout -> wall-clock, SIGSYS ->
seccomp, SIGXCPU -> rlimits ...) or from ``ESCAPE-RESULT: errno=...`` lines.

Required: every cell of ``all``, and every ``touches_os: yes`` cell of ``os_only``.
"""
from __future__ import annotations

import dataclasses
import errno as _errno
import fnmatch
import json
import logging
import os
import platform
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

log = logging.getLogger("build123d_launcher.escape_audit")

from launcher.resources import data_dir

PAYLOAD_DIR = data_dir("payloads")           # tests/escape/payloads, or the installed package's copy
TEST_PROFILES = data_dir("test_profiles")    # tests/profiles (the audit's column profiles)
PROFILES = data_dir("profiles")

#: column -> (profile for ordinary payloads, profile for ``fast: yes`` payloads)
COLUMNS = {
    "all": (PROFILES / "default.toml", TEST_PROFILES / "default_fast.toml"),
    "os_only": (TEST_PROFILES / "os_only.toml", TEST_PROFILES / "os_only_fast.toml"),
    "python_only": (TEST_PROFILES / "python_only.toml", TEST_PROFILES / "python_only.toml"),
}
COLUMN_ORDER = ("all", "os_only", "python_only")

HEADER_KEYS = ("id", "category", "effect", "touches_os", "destructive", "fast")
CATEGORIES = ("file-read", "file-write", "network", "process", "introspection", "native", "resource",
              "signal", "kernel", "cross-session", "timing", "protocol")
ESCAPE_LINE = re.compile(r"ESCAPE-RESULT:\s*(.*)")
PLACEHOLDER = re.compile(r"\{([A-Z][A-Z0-9_]*)\}")
UNRESPONSIVE_S = 2.5

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
}


# ------------------------------------------------------------------ payloads
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

    def required(self, column: str) -> bool:
        return column == "all" or (column == "os_only" and self.touches_os)

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

    return Payload(id=head["id"], category=head["category"], effect=head["effect"],
                   touches_os=yn("touches_os"), destructive=yn("destructive"), fast=yn("fast"),
                   path=path, code=text)


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


# ------------------------------------------------------------------ canaries
RECORDER = r'''
import os, signal, sys, time
def h(n, f):
    os.write(1, b"SIG %d\n" % n)
for s in range(1, int(signal.SIGRTMAX) + 1):
    if s in (signal.SIGKILL, signal.SIGSTOP):
        continue
    try:
        signal.signal(s, h)
    except (OSError, ValueError, RuntimeError):
        pass
os.write(1, b"READY\n")
while True:
    time.sleep(3600)
'''

MAKE_CAD = r'''
import sys
from build123d import Box, Pos, export_step, export_brep, export_stl
d, n = sys.argv[1], float(sys.argv[2])
b = Pos(n, 0, 0) * Box(1, 1, 1)
export_step(b, d + "/secret.step")
export_brep(b, d + "/secret.brep")
export_stl(b, d + "/secret.stl")
'''


def _tok(n: int = 12) -> str:
    return os.urandom(n).hex()


def _uid_of(jail_uid) -> int:
    if jail_uid is None:
        jail_uid = "nobody"
    try:
        return int(jail_uid)
    except ValueError:
        import pwd
        return pwd.getpwnam(str(jail_uid)).pw_uid


class _Listener(threading.Thread):
    def __init__(self, sock: socket.socket, name: str, events: list, dgram: bool = False):
        super().__init__(daemon=True, name=f"canary-{name}")
        self.sock, self.label, self.events, self.dgram = sock, name, events, dgram
        self.stop = False

    def run(self):
        self.sock.settimeout(0.2)
        while not self.stop:
            try:
                if self.dgram:
                    data, addr = self.sock.recvfrom(65536)
                    self.events.append(f"net:{self.label} got a datagram ({len(data)} bytes)")
                else:
                    c, addr = self.sock.accept()
                    self.events.append(f"net:{self.label} accepted a connection")
                    c.close()
            except (socket.timeout, BlockingIOError):
                continue
            except OSError:
                if self.stop:
                    return
                time.sleep(0.05)


class Canaries:
    """The host-side traps. One set for the whole audit; ``baseline``/``check`` per payload."""

    def __init__(self, jail_uid=None):
        self.jail_uid = jail_uid
        self.mark = "b123d-audit-" + _tok(4)
        self.events: list[str] = []
        self.threads: list[_Listener] = []
        self.cleanup: list = []
        self.tokens: dict[str, str] = {}

    # -- setup
    def __enter__(self):
        try:
            self._setup()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc):
        self.close()

    def _setup(self):
        t = self.tokens
        t.update(home=_tok(), ssh=_tok(), npy=_tok(), tmp=_tok(), shm=_tok(), sysv=_tok(), env=_tok(),
                 bystander=_tok(), indir=_tok())
        self.secret_num = str(int.from_bytes(os.urandom(3), "big") % 9000000 + 1000000)
        t["num"] = self.secret_num
        self.home = Path(tempfile.mkdtemp(prefix=self.mark + "-home-"))
        self.outdir = Path(tempfile.mkdtemp(prefix=self.mark + "-out-"))
        self.cleanup += [lambda: shutil.rmtree(self.home, True), lambda: shutil.rmtree(self.outdir, True)]
        h = self.home
        (h / "secret.txt").write_text(f"SECRET-{t['home']}\n" * 64)  # every line: line-based tricks too
        (h / ".ssh").mkdir(mode=0o700)
        (h / ".ssh" / "id_rsa").write_text(f"-----BEGIN KEY-----\n{t['ssh']}\n-----END KEY-----\n")
        (h / ".bashrc").write_text("# canary bashrc\n")
        self._write_npy(h / "secret.npy", t["npy"])
        n = self.secret_num
        (h / "secret.svg").write_text(
            f'<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100">'
            f'<path d="M 0 0 L {n} 0 L {n} 10 Z"/></svg>\n')
        self.cad_ok = self._make_cad()
        self.indir = h / "cad-inputs"  # the launcher's input directory (import_file); never in the jail's view
        self.indir.mkdir()
        (self.indir / "customer-part.txt").write_text(f"INPUT-{t['indir']}\n" * 16)
        if (h / "secret.step").exists():
            shutil.copyfile(h / "secret.step", self.indir / "part.step")
        for p in h.rglob("*"):
            os.chmod(p, 0o700 if p.is_dir() else 0o600)
        os.chmod(h, 0o700)
        self.tmp_secret = Path("/tmp") / f"{self.mark}-other-session.txt"
        self.tmp_secret.write_text(f"OTHER-{t['tmp']}\n")
        os.chmod(self.tmp_secret, 0o600)
        self.cleanup.append(lambda: self.tmp_secret.unlink(missing_ok=True))
        self.shm_secret = Path("/dev/shm") / f"{self.mark}-shm"
        try:
            self.shm_secret.write_text(f"SHM-{t['shm']}\n")
            os.chmod(self.shm_secret, 0o600)
            self.cleanup.append(lambda: self.shm_secret.unlink(missing_ok=True))
        except OSError:
            pass
        self.sysv_key = self._make_sysv(t["sysv"])
        # os.environ of the launcher (what a jailed reader of /proc/<launcher>/environ would see)
        self._old_env = os.environ.get("B123D_AUDIT_CANARY")
        os.environ["B123D_AUDIT_CANARY"] = t["env"]
        self.cleanup.append(self._restore_env)
        # static host secrets (only those this uid can read)
        self.static_markers: dict[str, str] = {}
        try:
            mid = Path("/etc/machine-id").read_text().strip()
            if len(mid) >= 16:
                self.static_markers["/etc/machine-id"] = mid
        except OSError:
            pass
        try:
            for line in Path("/etc/shadow").read_text().splitlines():
                if line.startswith("root:") and len(line) > 14:
                    self.static_markers["/etc/shadow"] = line
        except OSError:
            pass
        self._listeners()
        self._recorder()
        self._timer()

    def _restore_env(self):
        if self._old_env is None:
            os.environ.pop("B123D_AUDIT_CANARY", None)
        else:
            os.environ["B123D_AUDIT_CANARY"] = self._old_env

    @staticmethod
    def _write_npy(path: Path, token: str):
        data = token.encode()
        hdr = "{'descr': '|u1', 'fortran_order': False, 'shape': (%d,), }" % len(data)
        hdr = hdr + " " * (63 - (10 + len(hdr)) % 64) + "\n"
        path.write_bytes(b"\x93NUMPY\x01\x00" + len(hdr).to_bytes(2, "little") + hdr.encode() + data)

    def _make_cad(self) -> bool:
        env = {k: v for k, v in os.environ.items()}
        env.setdefault("OPENBLAS_NUM_THREADS", "1")
        try:
            r = subprocess.run([sys.executable, "-c", MAKE_CAD, str(self.home), self.secret_num],
                               capture_output=True, timeout=120, env=env, cwd="/")
            return r.returncode == 0
        except (OSError, subprocess.SubprocessError):
            return False

    def _make_sysv(self, token: str) -> int | None:
        try:
            import ctypes
            libc = ctypes.CDLL(None, use_errno=True)
            libc.shmat.restype = ctypes.c_void_p
            libc.shmat.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_int]
            key = int.from_bytes(os.urandom(3), "big") + 0x1000000
            shmid = libc.shmget(key, 4096, 0o1000 | 0o600)  # IPC_CREAT, owner only
            if shmid < 0:
                return None
            addr = libc.shmat(shmid, None, 0)
            if addr in (None, ctypes.c_void_p(-1).value):
                libc.shmctl(shmid, 0, None)
                return None
            data = f"SYSV-{token}\n".encode()
            ctypes.memmove(addr, data, len(data))
            libc.shmdt(ctypes.c_void_p(addr))
            self.cleanup.append(lambda: libc.shmctl(shmid, 0, None))  # IPC_RMID
            return key
        except Exception:
            return None

    def _listeners(self):
        ev = self.events
        tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        tcp.bind(("127.0.0.1", 0))
        tcp.listen(16)
        udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        udp.bind(("127.0.0.1", 0))
        self.tcp_port, self.udp_port = tcp.getsockname()[1], udp.getsockname()[1]
        socks = [(tcp, "tcp4", False), (udp, "udp4", True)]
        self.tcp6_port = 0
        try:
            tcp6 = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
            tcp6.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            tcp6.bind(("::1", 0))
            tcp6.listen(16)
            self.tcp6_port = tcp6.getsockname()[1]
            socks.append((tcp6, "tcp6", False))
        except OSError:
            pass
        self.unix_path = str(self.home / "canary.sock")
        ux = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        ux.bind(self.unix_path)
        os.chmod(self.unix_path, 0o777)
        ux.listen(16)
        self.abstract_name = self.mark + "-abstract"
        ab = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        ab.bind("\0" + self.abstract_name)
        ab.listen(16)
        abd = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        abd.bind("\0" + self.abstract_name + "-dgram")
        socks += [(ux, "unix-path", False), (ab, "unix-abstract", False), (abd, "unix-abstract-dgram", True)]
        for s, name, dg in socks:
            th = _Listener(s, name, ev, dg)
            th.start()
            self.threads.append(th)
            self.cleanup.append(s.close)

    def _recorder(self):
        kw = {}
        if os.geteuid() == 0:
            uid = _uid_of(self.jail_uid)
            kw = dict(user=uid, group=uid, extra_groups=[])
        self.rec = subprocess.Popen([sys.executable, "-c", RECORDER], stdin=subprocess.DEVNULL,
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd="/",
                                    start_new_session=True, **kw)
        line = self.rec.stdout.readline()
        if line.strip() != b"READY":
            raise RuntimeError("the signal recorder did not start")
        self.cleanup.append(self._stop_recorder)

        def pump():
            for line in self.rec.stdout:
                self.events.append(f"signal:recorder received {line.decode(errors='replace').strip()}")
        threading.Thread(target=pump, daemon=True, name="canary-recorder").start()
        self._rec_stop = False

        def watch():
            while not self._rec_stop:
                try:
                    st = Path(f"/proc/{self.rec.pid}/status").read_text()
                    tracer = re.search(r"TracerPid:\s*(\d+)", st)
                    state = re.search(r"State:\s*(\S)", st)
                    if tracer and tracer.group(1) != "0":
                        self.events.append("signal:recorder was ptrace-attached")
                    if state and state.group(1) in ("T", "t"):
                        self.events.append("signal:recorder was stopped")
                except OSError:
                    pass
                time.sleep(0.01)
        threading.Thread(target=watch, daemon=True, name="canary-tracer").start()

    def _stop_recorder(self):
        self._rec_stop = True
        try:
            self.rec.kill()
            self.rec.wait(5)
        except Exception:
            pass

    def _timer(self):
        self.worst_gap = 0.0
        self._timer_stop = False

        def tick():
            last = time.monotonic()
            while not self._timer_stop:
                time.sleep(0.05)
                now = time.monotonic()
                self.worst_gap = max(self.worst_gap, now - last - 0.05)
                last = now
        threading.Thread(target=tick, daemon=True, name="canary-timer").start()
        self.cleanup.append(lambda: setattr(self, "_timer_stop", True))

    def close(self):
        for th in self.threads:
            th.stop = True
        for fn in reversed(self.cleanup):
            try:
                fn()
            except Exception:
                pass
        self.cleanup.clear()
        for d in ("/tmp", "/dev/shm", "/", os.getcwd()):
            self._remove_marked(Path(d))

    def _remove_marked(self, d: Path):
        try:
            for p in d.iterdir():
                if self.mark in p.name:
                    if p.is_dir() and not p.is_symlink():
                        shutil.rmtree(p, True)
                    else:
                        p.unlink(missing_ok=True)
        except OSError:
            pass

    # -- values substituted into payloads
    def values(self, extra: dict | None = None) -> dict[str, str]:
        h = self.home
        v = {
            "SECRET": str(h / "secret.txt"), "SECRET_DIR": str(h), "SSH_KEY": str(h / ".ssh" / "id_rsa"),
            "BASHRC": str(h / ".bashrc"),
            "SECRET_NPY": str(h / "secret.npy"), "SECRET_STL": str(h / "secret.stl"),
            "SECRET_STEP": str(h / "secret.step"), "SECRET_BREP": str(h / "secret.brep"),
            "SECRET_SVG": str(h / "secret.svg"), "SECRET_NUM": self.secret_num,
            "TMP_SECRET": str(self.tmp_secret), "SHM_SECRET": str(self.shm_secret),
            "SYSV_KEY": str(self.sysv_key or 0),
            "TCP_PORT": str(self.tcp_port), "TCP6_PORT": str(self.tcp6_port), "UDP_PORT": str(self.udp_port),
            "UNIX_PATH": self.unix_path, "ABSTRACT_NAME": self.abstract_name,
            "SIGPID": str(self.rec.pid), "LAUNCHER_PID": str(os.getpid()),
            "OUTDIR": str(self.outdir), "MARK": self.mark, "HOST_CWD": os.getcwd(),
            "INDIR": str(self.indir), "INDIR_SECRET": str(self.indir / "customer-part.txt"),
            "INDIR_STEP": str(self.indir / "part.step"),
        }
        v.update(extra or {})
        return v

    # -- per payload
    def fs_snapshot(self) -> dict:
        snap = {}
        for root in (self.home, self.outdir):
            for dirpath, dirnames, filenames in os.walk(root):
                for n in dirnames + filenames:
                    p = os.path.join(dirpath, n)
                    try:
                        st = os.lstat(p)
                        snap[p] = (st.st_mtime_ns, st.st_size, st.st_mode)
                    except OSError:
                        pass
        skip = {str(self.home), str(self.outdir)}
        for d in ("/tmp", "/dev/shm", "/", os.getcwd()):
            try:
                entries = list(Path(d).iterdir())
            except OSError:
                continue
            for p in entries:
                if self.mark in p.name and str(p) not in skip:
                    try:
                        st = os.lstat(p)
                        snap[str(p)] = (st.st_mtime_ns, st.st_size, st.st_mode)
                    except OSError:
                        pass
        # the secret files' contents could be rewritten with the same size within one mtime tick
        return snap

    def leak_markers(self, bystander_token: str | None = None) -> dict[str, str]:
        t = self.tokens
        m = {"$HOME secret file": t["home"], "$HOME/.ssh key": t["ssh"], "$HOME .npy secret": t["npy"],
             "other session's /tmp file": t["tmp"], "/dev/shm file": t["shm"], "SysV shared memory": t["sysv"],
             "launcher environment": t["env"], "bystander variable": t["bystander"],
             "input directory file": t["indir"]}
        m["secret number (CAD/SVG files)"] = self.secret_num
        m.update(self.static_markers)
        return m


@dataclasses.dataclass
class Cell:
    verdict: str                 # blocked | ESCAPED | skipped | error
    layer: str = ""              # which layer stopped it (blocked cells)
    detail: str = ""
    canaries: list = dataclasses.field(default_factory=list)
    wall_ms: float = 0.0
    error_type: str | None = None
    notes: list = dataclasses.field(default_factory=list)

    def as_dict(self):
        return dataclasses.asdict(self)


# ---------------------------------------------------------- classification
ERRNO_LAYER = {
    "EPERM": "seccomp", "ENOSYS": "seccomp", "EACCES": "landlock", "ENOENT": "mountview", "EROFS": "mountview",
    "ENOTDIR": "mountview", "EXDEV": "mountview", "EFBIG": "rlimits", "EAGAIN": "rlimits", "EMFILE": "rlimits",
    "ENFILE": "rlimits", "ENOMEM": "rlimits", "ENOSPC": "rlimits", "EDQUOT": "rlimits",
    "ESRCH": "namespaces", "ENETUNREACH": "namespaces", "ECONNREFUSED": "namespaces",
    "EADDRNOTAVAIL": "namespaces", "EHOSTUNREACH": "namespaces", "ENETDOWN": "namespaces",
    "EINVAL": "kernel(EINVAL)", "EBADF": "fd-hygiene",
}
SIGNAL_LAYER = {"SIGSYS": "seccomp(kill)", "SIGXCPU": "rlimits(cpu)", "SIGXFSZ": "rlimits(fsize)",
                "SIGKILL": "rlimits/oom(SIGKILL)", "SIGSEGV": "crash(SIGSEGV)", "SIGABRT": "crash(SIGABRT)",
                "SIGBUS": "crash(SIGBUS)"}
EXC_ERRNO = {"PermissionError": None, "FileNotFoundError": "ENOENT", "ProcessLookupError": "ESRCH",
             "ConnectionRefusedError": "ECONNREFUSED", "BlockingIOError": "EAGAIN", "IsADirectoryError": None,
             "NotADirectoryError": "ENOTDIR"}


def _errno_name(n: int) -> str:
    return _errno.errorcode.get(n, str(n))


def classify(res: dict) -> tuple[str, str]:
    """(layer, detail) from an execute() reply."""
    err = res.get("error") or {}
    et, msg = err.get("type") or "", str(err.get("message") or "")
    kv: dict[str, str] = {}
    for line in (res.get("stdout") or "").splitlines():
        m = ESCAPE_LINE.search(line)
        if m:
            for part in m.group(1).split():
                k, _, v = part.partition("=")
                kv.setdefault(k, v)
                if k == "errno" and v not in ("0", "OK", ""):
                    kv.setdefault("errnos", "")
                    kv["errnos"] += v + ","
    if et == "PolicyError":
        return "ast_policy", f"rule {err.get('rule')}"
    if et == "ExecutionTimeout":
        return "wall-clock", "killed at the wall-clock limit"
    if et == "ChildDied":
        for sig, layer in SIGNAL_LAYER.items():
            if sig in msg:
                return layer, msg[:120]
        return "child-died", msg[:120]
    if et == "ProtocolError":
        return "protocol", msg[:120]
    if et == "SessionMemoryLimit":
        return "session-memory(watchdog)", msg[:120]
    if et in ("NameError",) and "is not defined" in msg:
        return "builtins", msg[:120]
    if et in ("ImportError", "ModuleNotFoundError") and "not allowed" in msg:
        return "builtins", msg[:120]
    if et == "MemoryError":
        return "rlimits", "MemoryError"
    if "layer" in kv:
        return kv["layer"], " ".join(f"{k}={v}" for k, v in kv.items() if k != "errnos")[:120]
    m = re.search(r"\[Errno (\d+)\]", msg)
    if m:
        name = _errno_name(int(m.group(1)))
        return ERRNO_LAYER.get(name, f"errno {name}"), f"{et}: {msg[:100]}"
    if et in EXC_ERRNO and EXC_ERRNO[et]:
        name = EXC_ERRNO[et]
        return ERRNO_LAYER.get(name, name), f"{et}: {msg[:100]}"
    if et == "RuntimeError" and "new thread" in msg:
        return "seccomp", "can't start new thread"
    if kv.get("errnos"):
        names = [x for x in kv["errnos"].split(",") if x]
        layers = [ERRNO_LAYER.get(n, f"errno {n}") for n in names]
        # the most specific one: first non-EINVAL
        best = next((layer for layer in layers if not layer.startswith("kernel")), layers[0])
        return best, "errno=" + ",".join(dict.fromkeys(names))
    if et:
        return "python", f"{et}: {msg[:100]}"
    said = " ".join(f"{k}={v}" for k, v in kv.items() if k != "errnos")
    if said:
        return "contained", said[:160]
    out = (res.get("stdout") or "").strip().replace("\n", " | ")
    return "contained", ("ran; printed: " + out[:140]) if out else "ran; no canary fired"


# ------------------------------------------------------------------ rigs
class Rig:
    """One launcher for one profile, an attacker session and a bystander session."""

    def __init__(self, profile_path: Path, canaries: Canaries, jail_uid=None):
        from launcher.core import Launcher
        self.profile_path = profile_path
        self.canaries = canaries
        self.launcher = Launcher(str(profile_path), output_dir=str(canaries.outdir), jail_uid=jail_uid,
                                 input_dir=str(canaries.indir))
        self.ast_on = self.launcher.profile.on("ast_policy")
        self.attacker = None
        self.bystander = None
        self.resets = 0
        self._bystander()
        self._attacker()

    def _fresh(self, old):
        """Close ``old`` (if any) and return a new session."""
        if old is not None:
            try:
                self.launcher.close_session(old)
            except Exception:
                pass
        return self.launcher.new_session()

    def _attacker(self):
        self.attacker = self._fresh(self.attacker)
        self.resets += 1

    def restore_attacker(self) -> None:
        """Back to a clean state after a payload that succeeded (its names stay in the
        namespace and would show up in every later summary): a fresh session (~0.1 s)."""
        self._attacker()

    def _bystander(self):
        self.bystander = self._fresh(self.bystander)
        r = self.bystander.execute(f"bystander_secret = {self.canaries.tokens['bystander']!r}\n")
        if not r.get("ok"):
            raise RuntimeError(f"the bystander session could not set its variable: {r.get('error')}")

    def substitutions(self) -> dict:
        p = self.bystander.pids() if self.bystander else {}
        return {"BYSTANDER_PID": str(p.get("head") or 0), "ZYGOTE_PID": str(self.launcher.zygote.pid),
                "ATTACKER_INIT_PID": str(self.attacker.pids().get("init") or 0)}

    def close(self):
        try:
            self.launcher.close()
        except Exception:
            pass


def _fd_count() -> int:
    """File descriptors of the launcher that name a path (files, devices): what fds passed
    with SCM_RIGHTS and kept would add. Sockets, pipes and pidfds come and go with sessions."""
    n = 0
    try:
        for fd in os.listdir("/proc/self/fd"):
            try:
                if os.readlink(f"/proc/self/fd/{fd}").startswith("/"):
                    n += 1
            except OSError:
                pass
    except OSError:
        return -1
    return n


def _known_pids(session) -> list[int]:
    """The session's own processes: keeper, init, head, next, snapshots. Call after
    ``Session.ensure_next()`` so that the next forked after the call is announced."""
    p = session.pids()
    known = [x for x in (p.get("keeper"), p.get("init"), p.get("head"), p.get("next")) if x]
    return known + list((p.get("snapshots") or {}).values())


def substitute(code: str, values: dict) -> str:
    return PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), code)


_DECEIVING = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e"
                        "\u2066-\u2069\ud800-\udfff]")
LAUNCHER_GROWTH_KB = 128 * 1024


def _status_kb(key: str) -> int:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _reset_peak_rss() -> int:
    """Reset this process's peak RSS (VmHWM) to its current RSS; return that RSS (kB), or -1."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return -1
    return _status_kb("VmRSS")


def _strings(v, depth: int = 0):
    if isinstance(v, str):
        yield v
    elif depth < 20 and isinstance(v, dict):
        for k, x in v.items():
            yield from _strings(k, depth + 1)
            yield from _strings(x, depth + 1)
    elif depth < 20 and isinstance(v, (list, tuple)):
        for x in v:
            yield from _strings(x, depth + 1)


def _reply_canaries(res: dict, limits, rss0_kb: int) -> list[str]:
    """The launcher side of a hostile reply: the reply must be strict UTF-8 JSON with finite numbers,
    hold no character that can deceive a terminal or a reader (C0/C1 controls but newline and tab,
    bidi overrides, line separators, lone surrogates), stay within the profile's caps, and the
    launcher's peak RSS must not have grown by more than LAUNCHER_GROWTH_KB during the call."""
    fired = []
    try:
        blob = json.dumps(res, ensure_ascii=False, allow_nan=False)
        blob.encode("utf-8")
    except (ValueError, TypeError, UnicodeEncodeError) as e:
        return [f"reply: not encodable as strict UTF-8 JSON ({type(e).__name__})"]
    for text in _strings(res):
        m = _DECEIVING.search(text.replace("\n", "").replace("\t", ""))
        if m:
            fired.append(f"reply: raw U+{ord(m.group()):04X} in the reply text")
            break
    cap = limits.max_output_bytes + limits.max_result_bytes
    if len(blob.encode("utf-8")) > cap + 16384:
        fired.append(f"reply-size: {len(blob)} characters came back (caps: {cap} bytes)")
    if rss0_kb >= 0:
        grown = _status_kb("VmHWM") - rss0_kb
        if grown > LAUNCHER_GROWTH_KB:
            fired.append(f"launcher-memory: the launcher's RSS grew by {grown // 1024} MB during the call")
    return fired


def run_cell(rig: Rig, payload: Payload, column: str) -> Cell:
    can = rig.canaries
    values = can.values(rig.substitutions())
    code = substitute(payload.code, values)
    snap0 = can.fs_snapshot()
    ev0 = len(can.events)
    fds0 = _fd_count()
    rss0_kb = _reset_peak_rss()
    can.worst_gap = 0.0
    fired: list[str] = []
    notes: list[str] = []
    t0 = time.monotonic()
    try:
        res = rig.attacker.execute(code)
    except Exception as e:  # SessionDead, SessionError: the session broke
        res = {"ok": False, "stdout": "", "stderr": "", "objects": [],
               "error": {"type": "SessionBroke", "message": f"{type(e).__name__}: {e}"}}
    wall = (time.monotonic() - t0) * 1000
    time.sleep(0.03)  # let a datagram or a late signal land
    # leaks anywhere in the reply
    blob = json.dumps(res, default=str)
    for label, marker in can.leak_markers().items():
        if marker and marker in blob:
            fired.append(f"leak:{label}")
    for line in (res.get("stdout") or "").splitlines():
        m = ESCAPE_LINE.search(line)
        if m and "escaped=" in m.group(1):
            fired.append("proof:" + m.group(1).strip()[:120])
    out_cap = rig.launcher.profile.limits.max_output_bytes
    out_len = len((res.get("stdout") or "").encode()) + len((res.get("stderr") or "").encode())
    if out_len > out_cap + 4096:
        fired.append(f"output-cap: {out_len} bytes of output came back (cap {out_cap})")
    fired += _reply_canaries(res, rig.launcher.profile.limits, rss0_kb)
    # nothing the call started may outlive it (docs/ARCHITECTURE.md, rule 3)
    next_ok = True
    try:
        from launcher.contain.procs import descendants, exiting, state_of

        def live_strays():  # a process being torn down (~0.3 s for 800 MB) is not running any more
            return {x for x in set(descendants(a.init.pid)) - set(_known_pids(a))
                    if state_of(x) not in (None, "Z", "X") and not exiting(x)}
        a = rig.attacker
        try:
            a.ensure_next(timeout=5)  # the head's new next is then known, not a stray
        except Exception:
            next_ok = False  # no new next: the session is broken; it is replaced below
        if a.init is not None:
            extra = live_strays()
            deadline = time.monotonic() + 3.0  # a SIGKILL the sweep queued may not be taken yet
            while extra and time.monotonic() < deadline:
                time.sleep(0.05)
                extra = live_strays()
            if extra:
                fired.append(f"strays: {len(extra)} process(es) started by the call still run in the session")
    except Exception:
        pass
    # why a child died: the head reports it (next_exit) before it forks the following next
    if (res.get("error") or {}).get("type") == "ChildDied":
        try:
            time.sleep(0.05)
            rig.attacker.ensure_next()
            ne = rig.attacker.last_next_exit or {}
            if ne.get("signal") and ne["signal"] not in res["error"]["message"]:
                res["error"]["message"] += f" [head reports: {ne['signal']}]"
        except Exception:
            pass
    # health of the attacker session (and the Python layers still on)
    healthy = next_ok
    try:
        if not healthy:
            raise RuntimeError("the session has no next process")
        h = rig.attacker.execute("print('alive-check')")
        healthy = bool(h.get("ok")) and "alive-check" in h.get("stdout", "")
        if healthy and rig.ast_on:
            h2 = rig.attacker.execute("import os\n")
            if (h2.get("error") or {}).get("type") != "PolicyError":
                # a Python layer switched off for later calls: reported, not a canary (the OS
                # layers still hold); the session is replaced so the next payload starts clean
                notes.append("persistence: later calls in this session no longer get the AST policy")
                healthy = False
    except Exception:
        healthy = False
    # bystander and launcher
    if not rig.launcher.zygote.alive():
        fired.append("launcher: the zygote died")
    try:
        b = rig.bystander.execute("print(bystander_secret)")
        if not b.get("ok") or can.tokens["bystander"] not in b.get("stdout", ""):
            fired.append(f"bystander: lost its state ({(b.get('error') or {}).get('type')})")
    except Exception as e:
        fired.append(f"bystander: session broke ({type(e).__name__}: {e})")
        try:
            rig._bystander()
        except Exception:
            pass
    if can.worst_gap > UNRESPONSIVE_S:
        fired.append(f"responsiveness: the host stalled {can.worst_gap:.1f}s")
    time.sleep(0.01)
    fired += can.events[ev0:]
    snap1 = can.fs_snapshot()
    for p in sorted(set(snap0) | set(snap1)):
        if snap0.get(p) != snap1.get(p):
            what = "created" if p not in snap0 else "removed" if p not in snap1 else "modified"
            fired.append(f"fs:{p} {what}")
    fds1 = _fd_count()
    if fds0 >= 0 and fds1 - fds0 >= 3:
        fired.append(f"launcher-fds: the launcher holds {fds1 - fds0} more file descriptors on paths")
    if not healthy:
        try:
            rig._attacker()
        except Exception as e:
            fired.append(f"launcher: cannot start a new session after this payload ({e})")
    elif res.get("ok"):
        rig.restore_attacker()
    layer, detail = classify(res)
    err = res.get("error") or {}
    if fired:
        return Cell("ESCAPED", layer, detail, fired, round(wall, 1), err.get("type"), notes)
    return Cell("blocked", layer, detail, [], round(wall, 1), err.get("type"), notes)


def _restore_marked(can: Canaries):
    """Undo what an escaped payload did to the canaries so the next one starts clean."""
    for d in ("/tmp", "/dev/shm", "/", os.getcwd()):
        try:
            for p in Path(d).iterdir():
                if can.mark in p.name and p not in (can.tmp_secret, can.shm_secret) \
                        and not str(p).startswith(str(can.home)) and not str(p).startswith(str(can.outdir)):
                    if p.is_dir() and not p.is_symlink():
                        shutil.rmtree(p, True)
                    else:
                        p.unlink(missing_ok=True)
        except OSError:
            pass
    for p in list(can.outdir.iterdir()):
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, True)
        else:
            p.unlink(missing_ok=True)
    keep = {"secret.txt", ".ssh", ".bashrc", "secret.npy", "secret.svg", "secret.step", "secret.brep",
            "secret.stl", "canary.sock", "cad-inputs"}
    for p in list(can.home.iterdir()):
        if p.name not in keep:
            if p.is_dir() and not p.is_symlink():
                shutil.rmtree(p, True)
            else:
                p.unlink(missing_ok=True)


# ------------------------------------------------------------------ matrix
def run_matrix(payloads: list[Payload], columns=("all", "os_only", "python_only"), *, jail_uid=None,
               progress=None, column_profiles: dict | None = None) -> dict:
    """``column_profiles`` overrides :data:`COLUMNS` (e.g. ``audit --profile X`` runs column all on X)."""
    COLUMNS = {**globals()["COLUMNS"], **(column_profiles or {})}  # noqa: N806
    started = time.time()
    results = {p.id: {"id": p.id, "category": p.category, "effect": p.effect, "touches_os": p.touches_os,
                      "destructive": p.destructive, "cells": {}} for p in payloads}
    col_info = {}
    with Canaries(jail_uid=jail_uid) as can:
        for col in columns:
            if col not in COLUMNS:
                raise ValueError(f"unknown column {col!r} (known: {', '.join(COLUMNS)})")
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
                        prof = COLUMNS[col][1 if p.fast else 0]
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
                        _restore_marked(can)
                    results[p.id]["cells"][col] = cell.as_dict()
                    if progress:
                        progress(col, p, cell)
            finally:
                for r in rigs.values():
                    if r is not None:
                        r.close()
            col_info[col] = {"seconds": round(time.monotonic() - t_col, 1),
                             "profiles": [COLUMNS[col][0].name, COLUMNS[col][1].name],
                             "rig_errors": {("fast" if k else "normal"): v for k, v in rig_err.items()}}
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


def host_info(jail_uid=None) -> dict:
    info = {"kernel": platform.release(), "python": platform.python_version(), "euid": os.geteuid(),
            "jail_uid": (str(jail_uid) if jail_uid else ("nobody" if os.geteuid() == 0 else "own uid")),
            "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "cpus": os.cpu_count()}
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        info["landlock_abi"] = libc.syscall(444, None, 0, 1)  # landlock_create_ruleset(..., VERSION)
    except Exception:
        pass
    return info


# ------------------------------------------------------------------ output
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
             "Required: every cell of `all`; every `touches_os: yes` cell of `os_only`. "
             "`python_only` is reported, not required (it may really escape).", "",
             "| payload | category | os | " + " | ".join(cols) + " |",
             "|---|---|---|" + "---|" * len(cols)]
    for p in report["payloads"]:
        cells = []
        for c in cols:
            cell = p["cells"].get(c)
            t = _cell_text(cell).replace("|", "\\|")
            if cell and cell["verdict"] != "blocked" and cell["verdict"] != "skipped":
                t += " (required)" if (c == "all" or (c == "os_only" and p["touches_os"])) else ""
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


def _profile_columns(name: str):
    """``audit --profile NAME``: column ``all`` runs on that profile (ordinary and fast payloads alike);
    the os_only/python_only columns keep their single-layer profiles. The default profile keeps its fast
    variant (same layers, shorter limits)."""
    from launcher.profile import find_profile, load_profile
    load_profile(name)  # validate it now: a bad name or file is an error, never a silent default
    path = find_profile(name)
    if path == (PROFILES / "default.toml").resolve():
        return None, None
    return {"all": (path, path)}, f"audit: column 'all' runs on profile {path}"


def run_audit(args) -> int:
    columns = [c.strip() for c in (getattr(args, "columns", None) or "all,os_only,python_only").split(",")
               if c.strip()]
    bad = [c for c in columns if c not in COLUMNS]
    if bad:
        print(f"build123d-launcher audit: unknown column(s) {', '.join(bad)} (known: {', '.join(COLUMNS)})",
              file=sys.stderr)
        return 2
    try:
        payloads = load_payloads(getattr(args, "only", None))
    except PayloadError as e:
        print(f"build123d-launcher audit: {e}", file=sys.stderr)
        return 2
    if not payloads:
        print("build123d-launcher audit: no payload matches", file=sys.stderr)
        return 2
    quiet = getattr(args, "json", False) or getattr(args, "markdown", False)
    if not getattr(args, "verbose", False):
        logging.getLogger("build123d_launcher.audit").setLevel(logging.WARNING)
        logging.getLogger("build123d_launcher.session").setLevel(logging.WARNING)

    def progress(col, p, cell):
        if not quiet:
            print(f"  [{col}] {p.id}: {cell.verdict} {cell.layer}", file=sys.stderr, flush=True)

    def _term(signum, frame):  # SIGTERM: leave through the context managers (canaries cleaned up)
        raise SystemExit(128 + signum)
    try:
        signal.signal(signal.SIGTERM, _term)
    except ValueError:  # not the main thread
        pass
    try:
        column_profiles, profile_note = _profile_columns(getattr(args, "profile", None) or "default")
    except Exception as e:  # noqa: BLE001 - ProfileError: the message lists the valid names
        print(f"build123d-launcher audit: {e}", file=sys.stderr)
        return 2
    if profile_note and not quiet:
        print(profile_note, file=sys.stderr)
    report = run_matrix(payloads, columns, jail_uid=getattr(args, "jail_uid", None), progress=progress,
                        column_profiles=column_profiles)
    report["profile"] = str(column_profiles["all"][0]) if column_profiles else "default"
    if getattr(args, "json", False):
        print(json.dumps(report, indent=1, default=str))
    elif getattr(args, "markdown", False):
        print(render_markdown(report), end="")
    else:
        print(render_text(report), end="")
    return 0 if report["ok"] else 1

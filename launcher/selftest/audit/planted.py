"""The planted secrets: random tokens where jailed code must not reach, and the files to watch.

A temporary ``$HOME`` (a secret file, ``.ssh/id_rsa``, ``.bashrc``, a ``.npy`` and STL/STEP/BREP/SVG
files carrying a secret number, the launcher's input directory with its own secrets: dot-files, a
non-CAD file, a STEP file in a dot directory, malformed CAD files, :data:`INPUT_FILES`), the
output directory, a file in
``/tmp`` and ``/dev/shm``, a SysV shared-memory segment, a variable in the launcher's environment,
and ``/etc/machine-id`` and the root line of ``/etc/shadow`` when this uid can read them. None of
these may appear in a reply (:meth:`PlantedSecrets.leak_markers`); the names, mtimes, sizes and
modes of ``$HOME``, the output directory and marker-named entries must not change
(:meth:`PlantedSecrets.fs_snapshot`).
"""
from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

#: Makes the secret CAD files (a box at x = the secret number), run in a plain subprocess.
MAKE_CAD = r'''
import sys
from build123d import Box, Pos, export_step, export_brep, export_stl
d, n = sys.argv[1], float(sys.argv[2])
b = Pos(n, 0, 0) * Box(1, 1, 1)
export_step(b, d + "/secret.step")
export_brep(b, d + "/secret.brep")
export_stl(b, d + "/secret.stl")
'''
ENV_VAR = "B123D_AUDIT_CANARY"
#: The input directory's files besides ``part.step`` (name -> (token key, content template with {t})):
#: none may reach a session; the malformed CAD files may, but their parse errors must not echo them.
INPUT_FILES = {
    "customer-part.txt": ("indir", "INPUT-{t}\n" * 16),
    ".env": ("dotenv", "AWS_SECRET_ACCESS_KEY=DOTENV-{t}\nAPI_TOKEN=DOTENV-{t}\n"),
    ".git/config": ("gitcfg", '[remote "origin"]\n\turl = https://user:GITCFG-{t}@git.invalid/x.git\n'),
    "notes.txt": ("notes", "NOTES-{t}\n" * 8),
    "broken.dxf": ("malformed", "0\nSECTION\n2\nENTITIES\n0\nLINE\n10\nAWS_SECRET_ACCESS_KEY=MALFORMED-{t}\n"
                                "0\nENDSEC\n0\nEOF\n"),
    "broken.stl": ("malformed", "solid MALFORMED-{t}\n facet normal MALFORMED-{t}\n endfacet\nendsolid\n"),
    "broken.3mf": ("malformed", None),  # a zip holding MODEL_3MF
}
MODEL_3MF = ('<?xml version="1.0"?><model xmlns="http://schemas.microsoft.com/3dmanufacturing/core/2015/02" '
             'unit="millimeter"><resources><object id="1" type="model"><mesh><vertices>'
             '<vertex x="AWS_SECRET_ACCESS_KEY=MALFORMED-{t}" y="0" z="0"/><vertex x="1" y="0" z="0"/>'
             '<vertex x="0" y="1" z="0"/></vertices><triangles><triangle v1="0" v2="1" v3="2"/></triangles>'
             '</mesh></object></resources><build><item objectid="1"/></build></model>')
#: Leak labels of the input directory's tokens (``leak:<label>`` when one shows up in a reply).
INPUT_LABELS = {"indir": "input directory file", "dotenv": "input .env", "gitcfg": "input .git/config",
                "notes": "input notes.txt", "malformed": "input malformed CAD file"}


def token(n: int = 12) -> str:
    return os.urandom(n).hex()


def write_npy(path: Path, data_token: str) -> None:
    """A valid ``.npy`` file (uint8 vector) whose bytes are ``data_token``."""
    data = data_token.encode()
    hdr = "{'descr': '|u1', 'fortran_order': False, 'shape': (%d,), }" % len(data)
    hdr = hdr + " " * (63 - (10 + len(hdr)) % 64) + "\n"
    path.write_bytes(b"\x93NUMPY\x01\x00" + len(hdr).to_bytes(2, "little") + hdr.encode() + data)


def remove_marked(d: Path, mark: str) -> None:
    """Remove every entry of ``d`` whose name holds ``mark``."""
    try:
        for p in d.iterdir():
            if mark in p.name:
                remove(p)
    except OSError:
        pass


def remove(p: Path) -> None:
    if p.is_dir() and not p.is_symlink():
        shutil.rmtree(p, True)
    else:
        p.unlink(missing_ok=True)


def marked_dirs() -> tuple[str, ...]:
    """Where a payload may try to create marker-named files outside ``$HOME``."""
    return ("/tmp", "/dev/shm", "/", os.getcwd())


class PlantedSecrets:
    """Creates the secrets (:meth:`plant`), removes them (:meth:`close`)."""

    def __init__(self, mark: str):
        self.mark = mark
        self.tokens: dict[str, str] = {}
        self.static_markers: dict[str, str] = {}
        self.cleanup: list = []

    def plant(self) -> None:
        t = self.tokens
        t.update(home=token(), ssh=token(), npy=token(), tmp=token(), shm=token(), sysv=token(), env=token(),
                 bystander=token(), indir=token(), dotenv=token(), gitcfg=token(), notes=token(),
                 malformed=token(), forged="b123d-forged-" + token(6))
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
        write_npy(h / "secret.npy", t["npy"])
        n = self.secret_num
        (h / "secret.svg").write_text(
            f'<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100">'
            f'<path d="M 0 0 L {n} 0 L {n} 10 Z"/></svg>\n')
        self._make_cad()  # the STEP/BREP/STL secrets; without build123d they are simply missing
        self.indir = h / "cad-inputs"  # the launcher's input directory (import_file); never in the jail's view
        self.indir.mkdir()
        for name, (key, text) in INPUT_FILES.items():
            (self.indir / name).parent.mkdir(parents=True, exist_ok=True)
            if text is None:
                with zipfile.ZipFile(self.indir / name, "w") as z:
                    z.writestr("3D/3dmodel.model", MODEL_3MF.replace("{t}", t[key]))
            else:
                (self.indir / name).write_text(text.replace("{t}", t[key]))
        if (h / "secret.step").exists():  # a real CAD file, and the same in a dot directory
            shutil.copyfile(h / "secret.step", self.indir / "part.step")
            (self.indir / ".hidden").mkdir()
            shutil.copyfile(h / "secret.step", self.indir / ".hidden" / "part.step")
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
        self._old_env = os.environ.get(ENV_VAR)
        os.environ[ENV_VAR] = t["env"]
        self.cleanup.append(self._restore_env)
        self._read_static_markers()

    def _read_static_markers(self) -> None:
        """Host secrets that exist anyway (only those this uid can read)."""
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

    def _restore_env(self) -> None:
        if self._old_env is None:
            os.environ.pop(ENV_VAR, None)
        else:
            os.environ[ENV_VAR] = self._old_env

    def _make_cad(self) -> bool:
        env = {k: v for k, v in os.environ.items()}
        env.setdefault("OPENBLAS_NUM_THREADS", "1")
        try:
            r = subprocess.run([sys.executable, "-c", MAKE_CAD, str(self.home), self.secret_num],
                               capture_output=True, timeout=120, env=env, cwd="/")
            return r.returncode == 0
        except (OSError, subprocess.SubprocessError):
            return False

    def _make_sysv(self, data_token: str) -> int | None:
        try:
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
            data = f"SYSV-{data_token}\n".encode()
            ctypes.memmove(addr, data, len(data))
            libc.shmdt(ctypes.c_void_p(addr))
            self.cleanup.append(lambda: libc.shmctl(shmid, 0, None))  # IPC_RMID
            return key
        except Exception:
            return None

    def close(self) -> None:
        for fn in reversed(self.cleanup):
            try:
                fn()
            except Exception:
                pass
        self.cleanup.clear()

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
        for d in marked_dirs():
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

    def leak_markers(self) -> dict[str, str]:
        t = self.tokens
        m = {"$HOME secret file": t["home"], "$HOME/.ssh key": t["ssh"], "$HOME .npy secret": t["npy"],
             "other session's /tmp file": t["tmp"], "/dev/shm file": t["shm"], "SysV shared memory": t["sysv"],
             "launcher environment": t["env"], "bystander variable": t["bystander"]}
        m.update({label: t[key] for key, label in INPUT_LABELS.items()})
        m["secret number (CAD/SVG files)"] = self.secret_num
        m.update(self.static_markers)
        return m

    def restore(self, keep_in_home: set[str]) -> None:
        """Undo what an escaped payload did (marker-named entries, the output directory's content,
        new entries in ``$HOME``) so the next one starts clean."""
        for d in marked_dirs():
            try:
                for p in Path(d).iterdir():
                    if self.mark in p.name and p not in (self.tmp_secret, self.shm_secret) \
                            and not str(p).startswith(str(self.home)) and not str(p).startswith(str(self.outdir)):
                        remove(p)
            except OSError:
                pass
        for p in list(self.outdir.iterdir()):
            remove(p)
        for p in list(self.home.iterdir()):
            if p.name not in keep_in_home:
                remove(p)

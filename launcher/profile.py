"""Profiles: declarative TOML files that say how tight the jail is.

A profile is data, never code: it is parsed with :mod:`tomllib`, validated
against the schema below, and turned into a frozen :class:`Profile`. Unknown
keys and wrong types are errors (a typo must not silently loosen a layer).
The ``[seccomp]`` lists name syscall groups as ``@name`` (jail/layers/syscalls.py)
and single calls; they are resolved here into plain names.

Profiles are looked up by name in ``$BUILD123D_LAUNCHER_PROFILES`` (if set),
then in the repository's ``profiles/`` directory (in an installed wheel: its copy,
see launcher/resources.py); a path to a ``.toml`` file is accepted too.
``extends = "default"`` starts from another profile and overrides tables key by
key (test profiles use it so they test exactly what users run).
"""
from __future__ import annotations

import math
import os
import sys
import sysconfig
import tomllib
from pathlib import Path

from jail.layers.syscalls import GROUPS
from jail.wire.profile import LAYERS, MODES, Limits, Profile  # noqa: F401

from launcher.resources import data_dir

REPO_PROFILES = data_dir("profiles")  # the repository's profiles/, or the installed package's copy

_LIMIT_KEYS = {
    "timeout_s": float, "max_timeout_s": float, "cpu_s": int, "memory_mb": int, "nproc": int, "nofile": int,
    "max_code_bytes": int, "max_output_bytes": int, "max_result_bytes": int,
    "max_export_bytes": int, "max_snapshots": int, "max_sessions": int,
    "max_output_dir_bytes": int, "max_output_dir_files": int, "max_input_bytes": int, "import_timeout_s": float,
    "session_memory_mb": int, "session_cpus": float,
}


class ProfileError(ValueError):
    """A profile that cannot be loaded; the message names the file and key."""


def search_dirs() -> list[Path]:
    dirs = []
    env = os.environ.get("BUILD123D_LAUNCHER_PROFILES")
    if env:
        dirs.extend(Path(p) for p in env.split(os.pathsep) if p)
    dirs.append(REPO_PROFILES)
    return dirs


def find_profile(name_or_path: str) -> Path:
    p = Path(name_or_path)
    if p.suffix == ".toml":
        if not p.is_file():
            raise ProfileError(f"profile file {p} does not exist")
        return p.resolve()
    if "/" in name_or_path or not name_or_path.replace("-", "").replace("_", "").isalnum():
        raise ProfileError(f"bad profile name {name_or_path!r}: use a name like 'default' or a path to a .toml file")
    for d in search_dirs():
        cand = d / f"{name_or_path}.toml"
        if cand.is_file():
            return cand.resolve()
    raise ProfileError(f"no profile named {name_or_path!r}; available: {', '.join(available_profiles()) or 'none'} "
                       f"(looked in {', '.join(map(str, search_dirs()))}), or pass a path to a .toml file")


def available_profiles() -> list[str]:
    """The profile names ``find_profile`` would accept, in search order."""
    names: list[str] = []
    for d in search_dirs():
        try:
            for f in sorted(d.glob("*.toml")):
                if f.stem not in names:
                    names.append(f.stem)
        except OSError:
            pass
    return names


def _read(path: Path, seen: tuple[Path, ...] = ()) -> dict:
    if path in seen:
        raise ProfileError(f"{path}: 'extends' loops back to itself")
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as e:
        raise ProfileError(f"{path}: not valid TOML: {e}") from None
    base_name = data.pop("extends", None)
    if base_name is None:
        return data
    if not isinstance(base_name, str):
        raise ProfileError(f"{path}: 'extends' must be a profile name")
    base_path = find_profile(base_name) if not base_name.endswith(".toml") else (path.parent / base_name).resolve()
    base = _read(base_path, seen + (path,))
    merged = dict(base)
    for key, val in data.items():
        if isinstance(val, dict) and isinstance(base.get(key), dict):
            merged[key] = {**base[key], **val}
        else:
            merged[key] = val
    lim = merged.get("limits")
    own = data.get("limits") if isinstance(data.get("limits"), dict) else {}
    if isinstance(lim, dict) and "timeout_s" in own and "max_timeout_s" not in own:
        m, t = lim.get("max_timeout_s"), own["timeout_s"]
        if isinstance(m, (int, float)) and isinstance(t, (int, float)) and m < t:
            lim["max_timeout_s"] = t  # a profile that raises timeout_s past its base's maximum raises that too
    return merged


def _strlist(where: str, v) -> tuple[str, ...]:
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise ProfileError(f"{where} must be a list of strings")
    return tuple(v)


def _syscalls(where: str, key: str, v) -> tuple[str, ...]:
    """A [seccomp] list with its ``@group`` entries expanded, de-duplicated (``allow`` sorted:
    the order of an allowlist means nothing; ``kill``/``enosys`` in the order given)."""
    names: list[str] = []
    for entry in _strlist(f"{where}: [seccomp] {key}", v):
        if not entry.startswith("@"):
            names.append(entry)
        elif entry[1:] in GROUPS:
            names.extend(GROUPS[entry[1:]].calls)
        else:
            raise ProfileError(f"{where}: [seccomp] {key} names unknown group {entry!r}; groups: "
                               f"{', '.join('@' + g for g in GROUPS)} (jail/layers/syscalls.py)")
    names = list(dict.fromkeys(names))
    return tuple(sorted(names) if key == "allow" else names)


def interpreter_paths() -> dict[str, str]:
    return {
        "prefix": sys.prefix,
        "base_prefix": sys.base_prefix,
        "stdlib": sysconfig.get_paths()["stdlib"],
        "site_packages": sysconfig.get_paths()["purelib"],
        "platlib": sysconfig.get_paths()["platlib"],
        "platstdlib": sysconfig.get_paths()["platstdlib"],
        "libdir": sysconfig.get_config_var("LIBDIR") or sys.base_prefix + "/lib",
    }


def expand_path(p: str) -> str:
    try:
        return p.format(**interpreter_paths())
    except (KeyError, IndexError, ValueError):
        raise ProfileError(f"filesystem path {p!r} uses an unknown placeholder "
                           f"(known: {', '.join(sorted(interpreter_paths()))})") from None


def load_profile(name_or_path: str = "default") -> Profile:
    path = find_profile(name_or_path)
    d = _read(path)
    where = str(path)
    known_top = {"name", "description", "limits", "layers", "filesystem", "python", "seccomp", "inputs"}
    unknown = set(d) - known_top
    if unknown:
        raise ProfileError(f"{where}: unknown key(s) {sorted(unknown)}")
    lim = d.get("limits", {})
    for k, v in lim.items():
        if k not in _LIMIT_KEYS:
            raise ProfileError(f"{where}: [limits] unknown key {k!r}")
        typ = _LIMIT_KEYS[k]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or (typ is int and not isinstance(v, int)):
            raise ProfileError(f"{where}: [limits] {k} must be a {typ.__name__}")
        if not math.isfinite(v) or v <= 0:  # TOML has nan and inf: a bound that compares false is no bound
            raise ProfileError(f"{where}: [limits] {k} must be a positive, finite number (got {v!r})")
    lim = {k: _LIMIT_KEYS[k](v) for k, v in lim.items()}
    lim.setdefault("max_timeout_s", lim.get("timeout_s", Limits.timeout_s))  # unnamed: a call may only shorten it
    if lim["max_timeout_s"] < lim.get("timeout_s", Limits.timeout_s):
        raise ProfileError(f"{where}: [limits] max_timeout_s ({lim['max_timeout_s']:g}) is below timeout_s "
                           f"({lim.get('timeout_s', Limits.timeout_s):g}): the maximum a call may ask for "
                           "cannot be less than the default")
    limits = Limits(**lim)
    layers_in = d.get("layers", {})
    layers = {}
    for k in LAYERS:
        mode = layers_in.get(k, "required")
        if mode not in MODES:
            raise ProfileError(f"{where}: [layers] {k} = {mode!r}; use one of {', '.join(MODES)}")
        layers[k] = mode
    unknown = set(layers_in) - set(LAYERS)
    if unknown:
        raise ProfileError(f"{where}: [layers] unknown layer(s) {sorted(unknown)}")
    fs = d.get("filesystem", {})
    unknown = set(fs) - {"read_paths", "devices", "require_landlock_abi"}
    if unknown:
        raise ProfileError(f"{where}: [filesystem] unknown key(s) {sorted(unknown)}")
    read_paths = tuple(expand_path(p) for p in _strlist(f"{where}: [filesystem] read_paths", fs.get("read_paths", [])))
    for p in read_paths:
        if not os.path.isabs(p):
            raise ProfileError(f"{where}: [filesystem] read path {p!r} is not absolute")
    devices = _strlist(f"{where}: [filesystem] devices", fs.get("devices", []))
    py = d.get("python", {})
    unknown = set(py) - {"allowed_imports", "blocked_calls"}
    if unknown:
        raise ProfileError(f"{where}: [python] unknown key(s) {sorted(unknown)}")
    sc = d.get("seccomp", {})
    unknown = set(sc) - {"default_action", "allow", "kill", "enosys"}
    if unknown:
        raise ProfileError(f"{where}: [seccomp] unknown key(s) {sorted(unknown)}")
    inputs = d.get("inputs", {})
    if not isinstance(inputs, dict) or set(inputs) - {"dir"} or not isinstance(inputs.get("dir", ""), str):
        raise ProfileError(f"{where}: [inputs] takes one key, dir (a string: the input directory, \"\" for none)")
    default_action = sc.get("default_action", "errno")
    if default_action not in ("errno", "kill"):
        raise ProfileError(f"{where}: [seccomp] default_action must be 'errno' or 'kill'")
    return Profile(
        name=str(d.get("name", path.stem)),
        description=str(d.get("description", "")),
        source=where,
        limits=limits,
        layers=layers,
        read_paths=read_paths,
        devices=devices,
        allowed_imports=_strlist(f"{where}: [python] allowed_imports", py.get("allowed_imports", [])),
        blocked_calls=_strlist(f"{where}: [python] blocked_calls", py.get("blocked_calls", [])),
        seccomp_default=default_action,
        seccomp_allow=_syscalls(where, "allow", sc.get("allow", [])),
        seccomp_kill=_syscalls(where, "kill", sc.get("kill", [])),
        seccomp_enosys=_syscalls(where, "enosys", sc.get("enosys", [])),
        require_landlock_abi=int(fs.get("require_landlock_abi", 1)),
        extra={"input_dir": inputs.get("dir", "")},
    )

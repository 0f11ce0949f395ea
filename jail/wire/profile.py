"""Profile data types, shared by the launcher (which loads and validates TOML profiles) and the
jail (which receives a profile over the wire from the zygote's control socket).

Pure data: no file access, no imports from ``launcher``. ``Profile.from_wire`` rebuilds a
profile from the JSON-safe dict ``to_wire`` produces; the launcher validates profiles when it
loads them (launcher/profile.py, which also resolves seccomp ``@groups`` into plain names), the
zygote only reconstructs them.
"""
from __future__ import annotations

from dataclasses import dataclass, field

# the profile's [layers] keys, in the order jail/layers/table.py applies them (it checks this)
LAYERS = ("userns", "namespaces", "rlimits", "mountview", "landlock", "privileges",
          "seccomp", "ast_policy", "builtins")
MODES = ("required", "best-effort", "off")


@dataclass(frozen=True)
class Limits:
    timeout_s: float = 30.0
    max_timeout_s: float = 120.0  # the most a call's timeout_s may ask for (a profile without it: timeout_s)
    cpu_s: int = 60
    memory_mb: int = 3072
    nproc: int = 64
    nofile: int = 128
    max_code_bytes: int = 262144
    max_output_bytes: int = 16384
    max_result_bytes: int = 262144
    max_export_bytes: int = 100 * 1024 * 1024
    max_snapshots: int = 16
    max_sessions: int = 64
    session_memory_mb: int = 4096  # all of a session's processes together (cgroup memory bound)
    session_cpus: float = 1.0      # CPU share of the whole session, in CPUs (cgroup CPU quota)
    max_output_dir_bytes: int = 2 * 1024 ** 3  # total under the output directory (exports refused past it)
    max_output_dir_files: int = 10000          # entries (files + directories) under the output directory
    max_input_bytes: int = 32 * 1024 * 1024    # import_file: largest file read from the input directory
    import_timeout_s: float = 60.0             # import_file: wall-clock limit of the parse (a big STEP takes time)


@dataclass(frozen=True)
class Profile:
    name: str
    description: str
    source: str
    limits: Limits
    layers: dict[str, str]
    read_paths: tuple[str, ...]
    devices: tuple[str, ...]
    allowed_imports: tuple[str, ...]
    blocked_calls: tuple[str, ...]
    seccomp_default: str
    seccomp_allow: tuple[str, ...]      # plain syscall names: the launcher resolved the @groups
    seccomp_kill: tuple[str, ...]
    seccomp_enosys: tuple[str, ...]
    require_landlock_abi: int = 1
    extra: dict = field(default_factory=dict)

    def mode(self, layer: str) -> str:
        return self.layers[layer]

    def on(self, layer: str) -> bool:
        return self.layers[layer] != "off"

    def required(self, layer: str) -> bool:
        return self.layers[layer] == "required"

    def to_wire(self) -> dict:
        """The JSON-safe form sent to the zygote (which re-validates it)."""
        return {
            "name": self.name, "description": self.description, "source": self.source,
            "limits": self.limits.__dict__.copy(), "layers": dict(self.layers),
            "read_paths": list(self.read_paths), "devices": list(self.devices),
            "allowed_imports": list(self.allowed_imports),
            "blocked_calls": list(self.blocked_calls),
            "seccomp_default": self.seccomp_default,
            "seccomp_allow": list(self.seccomp_allow), "seccomp_kill": list(self.seccomp_kill),
            "seccomp_enosys": list(self.seccomp_enosys),
            "require_landlock_abi": self.require_landlock_abi,
        }

    @classmethod
    def from_wire(cls, d: dict) -> "Profile":
        return cls(
            name=d["name"], description=d["description"], source=d["source"],
            limits=Limits(**d["limits"]), layers=dict(d["layers"]),
            read_paths=tuple(d["read_paths"]), devices=tuple(d["devices"]),
            allowed_imports=tuple(d["allowed_imports"]), blocked_calls=tuple(d["blocked_calls"]),
            seccomp_default=d["seccomp_default"], seccomp_allow=tuple(d["seccomp_allow"]),
            seccomp_kill=tuple(d["seccomp_kill"]), seccomp_enosys=tuple(d["seccomp_enosys"]),
            require_landlock_abi=int(d.get("require_landlock_abi", 1)),
        )

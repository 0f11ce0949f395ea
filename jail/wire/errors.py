"""Errors shared by the jail layers."""


class LayerError(RuntimeError):
    """A jail layer could not be applied.

    ``layer`` is the profile's layer name (``userns``, ``namespaces``, ``rlimits``,
    ``mountview``, ``landlock``, ``privileges``, ``seccomp``); ``reason`` says why
    in words a user can act on (errno, kernel setting, what to change).
    """

    def __init__(self, layer: str, reason: str):
        super().__init__(f"{layer}: {reason}")
        self.layer = layer
        self.reason = reason

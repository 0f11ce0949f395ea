"""Errors shared by the jail layers."""


class LayerError(RuntimeError):
    """A jail layer could not be applied.

    ``layer`` is the profile's layer name (a row of jail/layers/table.py; ``internal`` or
    ``startup`` when no layer is to blame); ``reason`` says why in words a user can act on
    (errno, kernel setting, what to change).
    """

    def __init__(self, layer: str, reason: str):
        super().__init__(f"{layer}: {reason}")
        self.layer = layer
        self.reason = reason

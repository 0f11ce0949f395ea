"""The OS layers (1-6 of the layer table), one module each, applied from ``jail.layers.table``."""

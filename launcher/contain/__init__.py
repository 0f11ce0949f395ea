"""Bounds kept from outside the session: cgroups, the /proc watchdog, stray sweeps, the launcher's own limit."""

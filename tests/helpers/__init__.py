"""Helpers shared by the test tree: ``from tests.helpers.<module> import ...``.

* ``cli``: the repository, the test profiles, the launcher run as a subprocess;
* ``proc``: /proc readers (states, trees, fds, memory) and ``wait_until``;
* ``faults``: the reliability tests' profiles and a raw JSON-RPC stdio client;
* ``contain``: sessions made as an unprivileged launcher without cgroups sees the host, watchdog probes;
* ``tiers``: which markers a test gets (used by tests/conftest.py);
* ``models``: build123d code shared by tests (a filleted plate, top-level copies of it);
* ``daemon``: a raw connection to a daemon's socket, a forked child as another uid.

Fixtures stay in the conftest.py files; these modules import no build123d/OCP.
"""

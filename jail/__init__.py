"""What runs inside the jail, and what both sides of the boundary share.

* ``jail.layers``  the OS layers (user namespace ... seccomp), applied from one ordered table
* ``jail.proc``    the processes: zygote, keeper, init, head, next, snapshots; the op table
* ``jail.cad``     the workload: runner, Python layers, render, measure, import, export, api
* ``jail.wire``    what the launcher imports too: protocol, profile types, errors, caps, SVG check

Every module here runs in a process that user code may later run in, or in the zygote that
forks them. Nothing here imports ``launcher`` (which opens sockets and writes files).
"""

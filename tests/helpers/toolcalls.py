"""Tool calls written like method calls, for tests: ``ts.execute(code)``, ``ts.export("part", "p.step")``.

:class:`ToolCalls` is a :class:`~launcher.tools.toolset.ToolSet` whose ``ts.<tool>(*args, **kw)``
is ``ts.call("<tool>", {...})``: positional arguments in the order of the tool's declared
parameters, ``None`` for ``timeout_s`` meaning "not given". Test sugar only, kept out of the runtime.
"""
from __future__ import annotations

from launcher.tools import ToolSet, get


class ToolCalls(ToolSet):
    def __getattr__(self, name):
        t = get(name) if not name.startswith("_") else None
        if t is None:
            raise AttributeError(name)

        def bound(*pos, **kw):
            names = list(t.params)
            if len(pos) > len(names):
                raise TypeError(f"{name}() takes at most {len(names)} positional arguments")
            args = dict(zip(names, pos))
            args.update(kw)
            if "timeout_s" in args and args["timeout_s"] is None:
                del args["timeout_s"]
            return self.call(name, args)
        return bound

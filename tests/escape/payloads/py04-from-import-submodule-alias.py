# id: py04-from-import-submodule-alias
# category: introspection
# effect: a submodule bound by 'from ... import ... as', then aliased, exposes the real os (the default profile's own os view has no system())
# touches_os: no
# destructive: no
# fast: no
from build123d import importers as im
x = im
o = x.os
try:
    run = o.system
except AttributeError:
    run = None
if run is not None:
    print("ESCAPE-RESULT: escaped=os-via-from-import-alias")

# id: py04-from-import-submodule-alias
# category: introspection
# effect: a submodule bound by 'from ... import ... as', then aliased, exposes os
# touches_os: no
# destructive: no
# fast: no
from build123d import importers as im
x = im
o = x.os
if o.listdir is not None:
    print("ESCAPE-RESULT: escaped=os-via-from-import-alias")

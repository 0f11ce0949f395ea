# id: py08-star-import-foreign-modules
# category: introspection
# effect: 'from <allowed submodule without __all__> import *' binds the foreign modules it imported (sys, inspect)
# touches_os: no
# destructive: no
# fast: no
from build123d.build_common import *
got = []
try:
    sys
    got.append("sys")
except NameError:
    pass
try:
    inspect
    got.append("inspect")
except NameError:
    pass
if got:
    print("ESCAPE-RESULT: escaped=star-import-bound-" + "+".join(got))

# id: py02-build123d-alias-os
# category: introspection
# effect: reach the os module through an alias of build123d (build123d.importers imports os)
# touches_os: no
# destructive: no
# fast: no
import build123d
b = build123d
o = b.importers.os
if o.system is not None:
    print("ESCAPE-RESULT: escaped=os-via-build123d-alias")

# id: py06-private-module-attr-alias
# category: introspection
# effect: a private module attribute (collections._sys) read through an alias
# touches_os: no
# destructive: no
# fast: no
import collections
c = collections
s = c._sys
if s.modules is not None:
    print("ESCAPE-RESULT: escaped=sys-via-private-attr-alias")

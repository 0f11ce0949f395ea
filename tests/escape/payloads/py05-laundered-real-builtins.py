# id: py05-laundered-real-builtins
# category: introspection
# effect: a module laundered through a list gives sys.modules['builtins']: the real open and __import__
# touches_os: no
# destructive: no
# fast: no
import typing
m = [typing][0]
bi = m.sys.modules["builtins"]
op = bi.open
if callable(op):
    print("ESCAPE-RESULT: escaped=real-builtins-open")

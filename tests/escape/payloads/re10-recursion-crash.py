# id: re10-recursion-crash
# category: resource
# effect: raise the recursion limit and recurse until the C stack overflows
# touches_os: no
# destructive: no
# fast: yes
import typing
t = typing            # an alias: the AST policy only checks names bound by import
mods = t.sys.modules
t.sys.setrecursionlimit(10 ** 7)
def f(n):
    return f(n + 1) + 1
f(0)

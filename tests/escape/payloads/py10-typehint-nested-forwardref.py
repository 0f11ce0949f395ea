# id: py10-typehint-nested-forwardref
# category: introspection
# effect: a forward reference nested in a generic (List["..."]) is evaluated with the real builtins by typing.get_type_hints; get_args hands back the real os
# touches_os: no
# destructive: no
# fast: no
import typing
def f(x: typing.List["__import__('os')"]):
    pass
real_os = typing.get_args(typing.get_type_hints(f, {})["x"])[0]
if callable(real_os.getpid) and callable(real_os.open):
    print("ESCAPE-RESULT: escaped=real-os-via-nested-forward-reference")

# id: py09-typehint-eval-real-builtins
# category: introspection
# effect: typing.get_type_hints evaluates a string annotation with the real builtins: the real __import__, os and open
# touches_os: no
# destructive: no
# fast: no
import typing
class A:
    b: "__import__('builtins')"
hints = typing.get_type_hints(A, {})
real = hints["b"]
if callable(real.open) and callable(real.compile):
    print("ESCAPE-RESULT: escaped=real-builtins-via-type-hint-evaluation")

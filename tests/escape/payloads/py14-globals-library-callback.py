# id: py14-globals-library-callback
# category: introspection
# effect: globals() handed to a library as a callback: it runs in contextlib's frame and copies contextlib's globals (sys, os)
# touches_os: no
# destructive: no
# fast: no
import contextlib
g = contextlib.contextmanager(globals)().gen
real_sys = g["sys"]
if "os" in real_sys.modules and callable(real_sys.modules["os"].getpid):
    print("ESCAPE-RESULT: escaped=sys-via-globals-callback")

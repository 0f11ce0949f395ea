# id: py17-logging-currentframe
# category: introspection
# effect: logging.currentframe() hands out a frame; its globals/builtins are the runner's (real __import__)
# touches_os: no
# destructive: no
# fast: no
import logging
f = logging.currentframe()
b = getattr(f, "f_" + "builtins")
if "open" in b and callable(b["open"]):
    print("ESCAPE-RESULT: escaped=real-builtins-via-logging-currentframe")

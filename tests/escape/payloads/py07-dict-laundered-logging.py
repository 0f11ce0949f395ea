# id: py07-dict-laundered-logging
# category: introspection
# effect: build123d's logging module (file handlers) through a module kept in a dict
# touches_os: no
# destructive: no
# fast: no
import build123d
d = {"b": build123d}
lg = d["b"].logging
if lg.FileHandler is not None:
    print("ESCAPE-RESULT: escaped=logging-via-dict-alias")

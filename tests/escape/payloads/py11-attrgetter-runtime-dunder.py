# id: py11-attrgetter-runtime-dunder
# category: introspection
# effect: operator.attrgetter with a dunder built at run time: a library function's globals -> the real os
# touches_os: no
# destructive: no
# fast: no
import operator
d = "_" * 2             # dunders assembled at run time: no literal dunder in the source
g = operator.attrgetter(d + "globals" + d)(import_step)
real_os = g["os"]
if callable(real_os.getpid) and callable(real_os.open):
    print("ESCAPE-RESULT: escaped=real-os-via-attrgetter")

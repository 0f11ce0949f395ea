# id: py12-attrgetter-type-of-instance
# category: introspection
# effect: the class of an attrgetter instance (the unchecked C type if the view wrapped only the factory) with a run-time dunder
# touches_os: no
# destructive: no
# fast: no
import operator
d = "_" * 2
cls = type(operator.attrgetter("volume"))
real_os = cls(d + "globals" + d)(import_step)["os"]
if callable(real_os.getpid):
    print("ESCAPE-RESULT: escaped=real-os-via-type-of-attrgetter")

# id: py15-formatter-get-field
# category: introspection
# effect: string.Formatter.get_field (an allowed module now) walks a run-time field to a library function's globals
# touches_os: no
# destructive: no
# fast: no
import string
d = "_" * 2
f = string.Formatter()
real_os, _ = f.get_field("0." + d + "globals" + d + "[os]", (import_step,), {})
if callable(real_os.getpid):
    print("ESCAPE-RESULT: escaped=real-os-via-formatter-get-field")

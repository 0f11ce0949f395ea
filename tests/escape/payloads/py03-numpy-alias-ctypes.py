# id: py03-numpy-alias-ctypes
# category: introspection
# effect: reach ctypes (raw memory, foreign calls) through an alias of numpy (numpy.ctypeslib.ctypes)
# touches_os: no
# destructive: no
# fast: no
import numpy as np
n = np
c = n.ctypeslib.ctypes
if c.CDLL is not None:
    print("ESCAPE-RESULT: escaped=ctypes-via-numpy-alias")

# id: pr07-numpy-internals-os
# category: process
# effect: os through numpy internals (numpy.lib._datasource.os, aliased)
# touches_os: yes
# destructive: no
# fast: no
import numpy
n = numpy
o = n.lib._datasource.os   # numpy.lib._datasource imports os
rc = o.system("touch {SECRET_DIR}/{MARK}-exec; exit 7")
print("ESCAPE-RESULT: system=%d" % rc)
if rc == 7 << 8:
    print("ESCAPE-RESULT: escaped=numpy-os.system")

# id: re01-memory-bomb
# category: resource
# effect: allocate and touch memory in 256 MB steps until something gives
# touches_os: yes
# destructive: yes
# fast: no
import numpy
keep = []
for i in range(256):
    a = numpy.empty(256 << 20, dtype=numpy.uint8)
    a[::4096] = 1          # touch every page: real memory, little CPU
    keep.append(a)
print("ESCAPE-RESULT: allocated=%d MB" % (256 * len(keep)))

# id: fw16-numpy-memmap-write
# category: file-write
# effect: numpy.memmap(mode='w+') creates and writes a file in /tmp
# touches_os: yes
# destructive: no
# fast: no
import numpy
m = numpy.memmap("/tmp/{MARK}.mm", dtype=numpy.uint8, mode="w+", shape=(16,))
m[:] = 1
m.flush()

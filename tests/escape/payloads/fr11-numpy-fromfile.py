# id: fr11-numpy-fromfile
# category: file-read
# effect: read the secret with numpy.fromfile
# touches_os: yes
# destructive: no
# fast: no
import numpy
print(numpy.fromfile("{SECRET}", dtype=numpy.uint8).tobytes())

# id: fr10-numpy-loadtxt
# category: file-read
# effect: read the secret with numpy.loadtxt
# touches_os: yes
# destructive: no
# fast: no
import numpy
print(numpy.loadtxt("{SECRET}", dtype=str))

# id: fr14-numpy-genfromtxt
# category: file-read
# effect: read the secret with numpy.genfromtxt
# touches_os: yes
# destructive: no
# fast: no
import numpy
print(numpy.genfromtxt("{SECRET}", dtype=str))

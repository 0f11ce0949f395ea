# id: fr12-numpy-memmap
# category: file-read
# effect: map the secret with numpy.memmap
# touches_os: yes
# destructive: no
# fast: no
import numpy
print(bytes(numpy.memmap("{SECRET}", dtype=numpy.uint8, mode="r")))

# id: fr13-numpy-load
# category: file-read
# effect: load a .npy file holding the secret with numpy.load
# touches_os: yes
# destructive: no
# fast: no
import numpy
print(numpy.load("{SECRET_NPY}").tobytes())

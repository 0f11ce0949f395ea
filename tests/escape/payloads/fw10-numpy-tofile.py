# id: fw10-numpy-tofile
# category: file-write
# effect: ndarray.tofile into /tmp
# touches_os: yes
# destructive: no
# fast: no
import numpy
numpy.arange(10).tofile("/tmp/{MARK}.bin")

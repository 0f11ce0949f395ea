# id: fw09-numpy-save
# category: file-write
# effect: numpy.save into $HOME
# touches_os: yes
# destructive: no
# fast: no
import numpy
numpy.save("{SECRET_DIR}/{MARK}.npy", numpy.arange(10))

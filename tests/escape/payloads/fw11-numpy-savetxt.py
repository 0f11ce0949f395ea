# id: fw11-numpy-savetxt
# category: file-write
# effect: numpy.savetxt over $HOME/.bashrc
# touches_os: yes
# destructive: no
# fast: no
import numpy
numpy.savetxt("{BASHRC}", numpy.arange(3))

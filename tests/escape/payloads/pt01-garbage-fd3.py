# id: pt01-garbage-fd3
# category: protocol
# effect: write random garbage datagrams to the inherited launcher socket (fd 3)
# touches_os: no
# destructive: no
# fast: no
import os
for i in range(200):
    os.write(3, os.urandom(1 + i * 37 % 4000))

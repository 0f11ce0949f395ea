# id: re09-fd1-flood
# category: resource
# effect: write 2 GB straight to file descriptors 1 and 2 (past the captured streams)
# touches_os: yes
# destructive: no
# fast: yes
import os
chunk = b"B" * (1 << 20)
for i in range(1024):
    os.write(1, chunk)
    os.write(2, chunk)

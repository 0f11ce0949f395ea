# id: fw13-mkfifo-tmp
# category: file-write
# effect: create a FIFO in /tmp
# touches_os: yes
# destructive: no
# fast: no
import os
os.mkfifo("/tmp/{MARK}-fifo")

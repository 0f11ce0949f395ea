# id: fw24-mknod-fifo-cwd
# category: file-write
# effect: make a FIFO and a device node in the working directory, and in /tmp
# touches_os: yes
# destructive: no
# fast: no
import os, stat
for d in ("", "/tmp/"):
    try:
        os.mkfifo(d + "{MARK}-fifo")
    finally:
        os.mknod(d + "{MARK}-null", stat.S_IFCHR | 0o666, os.makedev(1, 3))

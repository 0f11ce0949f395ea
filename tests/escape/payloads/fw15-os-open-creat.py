# id: fw15-os-open-creat
# category: file-write
# effect: os.open(O_CREAT) in $HOME, /tmp and /dev/shm
# touches_os: yes
# destructive: no
# fast: no
import errno
def report(e):
    print("ESCAPE-RESULT: errno=" + errno.errorcode.get(e.errno, str(e.errno)))
import os
for p in ("{SECRET_DIR}/{MARK}-o", "/tmp/{MARK}-o", "/dev/shm/{MARK}-o"):
    try:
        fd = os.open(p, os.O_WRONLY | os.O_CREAT, 0o644)
        os.write(fd, b"x")
    except OSError as e:
        report(e)

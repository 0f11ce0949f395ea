# id: re07-disk-fill
# category: resource
# effect: fill the disk: write 64 MB chunks into $HOME, /tmp and the cwd (capped at 512 MB)
# touches_os: yes
# destructive: yes
# fast: yes
import errno
def report(e):
    print("ESCAPE-RESULT: errno=" + errno.errorcode.get(e.errno, str(e.errno)))
import os
chunk = b"\0" * (64 << 20)
for p in ("{SECRET_DIR}/{MARK}-fill", "/tmp/{MARK}-fill", "{MARK}-fill"):
    try:
        with open(p, "wb") as f:
            for i in range(8):
                f.write(chunk)
    except OSError as e:
        report(e)

# id: re11-tmpfs-shm-fill
# category: resource
# effect: fill /dev/shm (RAM-backed) with 64 MB chunks (capped at 512 MB)
# touches_os: yes
# destructive: yes
# fast: yes
import errno
def report(e):
    print("ESCAPE-RESULT: errno=" + errno.errorcode.get(e.errno, str(e.errno)))
chunk = b"\0" * (64 << 20)
try:
    with open("/dev/shm/{MARK}-fill", "wb") as f:
        for i in range(8):
            f.write(chunk)
except OSError as e:
    report(e)

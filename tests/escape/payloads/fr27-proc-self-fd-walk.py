# id: fr27-proc-self-fd-walk
# category: file-read
# effect: walk inherited fds via /proc/self/fd and read every readable one
# touches_os: yes
# destructive: no
# fast: no
import errno
def report(e):
    print("ESCAPE-RESULT: errno=" + errno.errorcode.get(e.errno, str(e.errno)))
import os
for n in os.listdir("/proc/self/fd"):
    try:
        print(n, os.readlink("/proc/self/fd/" + n))
    except OSError as e:
        report(e)
try:
    print(open("/proc/self/cwd/{SECRET}").read())
except OSError as e:
    report(e)

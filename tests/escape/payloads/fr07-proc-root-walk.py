# id: fr07-proc-root-walk
# category: file-read
# effect: reach the host root through /proc/1/root and /proc/<launcher>/root
# touches_os: yes
# destructive: no
# fast: no
import errno
def report(e):
    print("ESCAPE-RESULT: errno=" + errno.errorcode.get(e.errno, str(e.errno)))

for base in ("/proc/1/root", "/proc/{LAUNCHER_PID}/root", "/proc/self/root"):
    try:
        print(open(base + "{SECRET}").read())
    except OSError as e:
        report(e)

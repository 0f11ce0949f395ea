# id: xs05-bystander-proc-info
# category: cross-session
# effect: list the bystander's fds, cwd and environ through /proc/<pid>
# touches_os: yes
# destructive: no
# fast: no
import errno
def report(e):
    print("ESCAPE-RESULT: errno=" + errno.errorcode.get(e.errno, str(e.errno)))
import os
for p in ("fd", "cwd", "root"):
    try:
        print(p, os.listdir("/proc/{BYSTANDER_PID}/" + p))
    except OSError as e:
        report(e)
try:
    print(open("/proc/{BYSTANDER_PID}/environ", "rb").read())
except OSError as e:
    report(e)

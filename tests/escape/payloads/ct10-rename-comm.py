# id: ct10-rename-comm
# category: process
# effect: rename the process (prctl PR_SET_NAME, /proc/self/comm) to look like a host daemon in ps
# touches_os: yes
# destructive: no
# fast: no
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
r = libc.prctl(15, b"sshd", 0, 0, 0)
print("ESCAPE-RESULT: prctl-set-name=%d errno=%s" % (r, errno.errorcode.get(ctypes.get_errno(), "?") if r else "OK"))
try:
    with open("/proc/self/comm", "w") as f:
        f.write("systemd-journal")
except OSError as e:
    print("ESCAPE-RESULT: comm-write errno=%s" % errno.errorcode.get(e.errno, "?"))
name = open("/proc/self/comm").read().strip()
if name in ("sshd", "systemd-journal"):
    print("ESCAPE-RESULT: escaped=renamed-to-%s" % name)

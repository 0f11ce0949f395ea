# id: ke10-setns-launcher
# category: kernel
# effect: setns into the launcher's network namespace via /proc/<pid>/ns/net
# touches_os: yes
# destructive: no
# fast: no
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def sys_(*a):
    r = libc.syscall(*a)
    e = ctypes.get_errno()
    return r, (errno.errorcode.get(e, str(e)) if r < 0 else "OK")
import os
try:
    fd = os.open("/proc/{LAUNCHER_PID}/ns/net", os.O_RDONLY)
    r, e = sys_(308, fd, 0x40000000)
    print("ESCAPE-RESULT: setns=%d errno=%s" % (r, e))
except OSError as ex:
    print("ESCAPE-RESULT: errno=" + errno.errorcode.get(ex.errno, "?"))

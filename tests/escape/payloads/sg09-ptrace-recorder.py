# id: sg09-ptrace-recorder
# category: signal
# effect: PTRACE_SEIZE the host recorder (then hold it for a moment)
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
import time
r, e = sys_(101, 0x4206, {SIGPID}, 0, 0)
print("ESCAPE-RESULT: ptrace_seize=%d errno=%s" % (r, e))
if r == 0:
    print("ESCAPE-RESULT: escaped=ptrace")
    time.sleep(0.3)

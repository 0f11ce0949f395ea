# id: sg13-ptrace-launcher
# category: signal
# effect: PTRACE_SEIZE the launcher itself by host pid
# touches_os: yes
# destructive: yes
# fast: no
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def sys_(*a):
    r = libc.syscall(*a)
    e = ctypes.get_errno()
    return r, (errno.errorcode.get(e, str(e)) if r < 0 else "OK")
r, e = sys_(101, 0x4206, {LAUNCHER_PID}, 0, 0)
print("ESCAPE-RESULT: ptrace_seize=%d errno=%s" % (r, e))
if r == 0:
    print("ESCAPE-RESULT: escaped=ptrace-launcher")
    sys_(101, 17, {LAUNCHER_PID}, 0, 0)

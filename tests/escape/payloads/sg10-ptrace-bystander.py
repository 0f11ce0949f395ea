# id: sg10-ptrace-bystander
# category: signal
# effect: PTRACE_ATTACH the bystander head and peek its memory
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
r, e = sys_(101, 16, {BYSTANDER_PID}, 0, 0)
print("ESCAPE-RESULT: ptrace_attach=%d errno=%s" % (r, e))
if r == 0:
    print("ESCAPE-RESULT: escaped=ptrace-bystander")
    time.sleep(0.1)
    sys_(101, 17, {BYSTANDER_PID}, 0, 0)

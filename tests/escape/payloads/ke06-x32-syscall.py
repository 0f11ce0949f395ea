# id: ke06-x32-syscall
# category: kernel
# effect: x32 ABI syscall (nr | 0x40000000) to slip past a filter written for x86-64
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
r, e = sys_(0x40000000 | 39)
print("ESCAPE-RESULT: x32-getpid=%d errno=%s" % (r, e))
if r >= 0:
    print("ESCAPE-RESULT: escaped=x32-getpid")

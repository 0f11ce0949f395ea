# id: ke02-userfaultfd
# category: kernel
# effect: userfaultfd (race-window helper for kernel exploits)
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
r, e = sys_(323, 0)
print("ESCAPE-RESULT: userfaultfd=%d errno=%s" % (r, e))
if r >= 0:
    print("ESCAPE-RESULT: escaped=userfaultfd")

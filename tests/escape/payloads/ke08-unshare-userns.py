# id: ke08-unshare-userns
# category: kernel
# effect: unshare(CLONE_NEWUSER|CLONE_NEWNS): a new user namespace = capabilities over new kernel code
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
r = libc.unshare(0x10000000 | 0x00020000)
e = errno.errorcode.get(ctypes.get_errno(), "?")
print("ESCAPE-RESULT: unshare=%d errno=%s" % (r, e))
if r == 0:
    print("ESCAPE-RESULT: escaped=unshare-userns")

# id: ke14-clone-newns-flags
# category: kernel
# effect: raw clone() with CLONE_NEWUSER|CLONE_NEWNET (namespace flags the filter must refuse)
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
r, e = sys_(56, 0x10000000 | 0x40000000 | 17, 0, 0, 0, 0)
if r == 0:
    os._exit(0)
print("ESCAPE-RESULT: clone-newns=%d errno=%s" % (r, e))
if r > 0:
    print("ESCAPE-RESULT: escaped=clone-newuser")
    os.waitpid(r, 0)

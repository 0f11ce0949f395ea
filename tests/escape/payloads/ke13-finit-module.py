# id: ke13-finit-module
# category: kernel
# effect: load a kernel module (finit_module on /dev/null)
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
fd = os.open("/dev/null", os.O_RDONLY)
r, e = sys_(313, fd, b"", 0)
print("ESCAPE-RESULT: finit_module=%d errno=%s" % (r, e))

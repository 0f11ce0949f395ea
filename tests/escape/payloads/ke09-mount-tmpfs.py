# id: ke09-mount-tmpfs
# category: kernel
# effect: mount a tmpfs (then unmount it)
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
import os
r = libc.mount(b"none", b"/tmp", b"tmpfs", 0, None)
e = errno.errorcode.get(ctypes.get_errno(), "?")
print("ESCAPE-RESULT: mount=%d errno=%s" % (r, e))
if r == 0:
    libc.umount2(b"/tmp", 2)
    print("ESCAPE-RESULT: escaped=mount")

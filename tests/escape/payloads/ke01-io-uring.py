# id: ke01-io-uring
# category: kernel
# effect: io_uring_setup (a large kernel attack surface; also bypasses syscall filters)
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
params = ctypes.create_string_buffer(120)
r, e = sys_(425, 4, params)
print("ESCAPE-RESULT: io_uring_setup=%d errno=%s" % (r, e))
if r >= 0:
    print("ESCAPE-RESULT: escaped=io_uring_setup")

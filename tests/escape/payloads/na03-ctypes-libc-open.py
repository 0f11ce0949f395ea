# id: na03-ctypes-libc-open
# category: native
# effect: libc open()/read() of the secret through ctypes
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
fd = libc.open(b"{SECRET}", 0)
if fd < 0:
    print("ESCAPE-RESULT: errno=" + errno.errorcode.get(ctypes.get_errno(), "?"))
else:
    buf = ctypes.create_string_buffer(200)
    libc.read(fd, buf, 200)
    print(buf.value)

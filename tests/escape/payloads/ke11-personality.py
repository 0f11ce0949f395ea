# id: ke11-personality
# category: kernel
# effect: personality(READ_IMPLIES_EXEC | ADDR_NO_RANDOMIZE)
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
r, e = sys_(135, 0x0400000 | 0x0040000)
print("ESCAPE-RESULT: personality=%d errno=%s" % (r, e))
r2, e2 = sys_(135, 0xffffffff)
if r2 >= 0 and r2 & 0x0040000:
    print("ESCAPE-RESULT: escaped=personality")
sys_(135, 0)

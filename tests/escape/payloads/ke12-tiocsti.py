# id: ke12-tiocsti
# category: kernel
# effect: TIOCSTI: push characters into the controlling terminal's input
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
for path in ("/dev/tty", "/proc/self/fd/0"):
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError as ex:
        print("ESCAPE-RESULT: errno=" + errno.errorcode.get(ex.errno, "?"))
        continue
    c = ctypes.c_char(b"#")
    r = libc.ioctl(fd, 0x5412, ctypes.byref(c))
    print("ESCAPE-RESULT: tiocsti=%d errno=%s" % (r, errno.errorcode.get(ctypes.get_errno(), "?")))
    if r == 0:
        print("ESCAPE-RESULT: escaped=tiocsti")

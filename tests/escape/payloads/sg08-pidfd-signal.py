# id: sg08-pidfd-signal
# category: signal
# effect: pidfd_open + pidfd_send_signal at the host recorder
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
fd, e = sys_(434, {SIGPID}, 0)
print("ESCAPE-RESULT: pidfd_open=%d errno=%s" % (fd, e))
r, e = sys_(424, fd if fd >= 0 else 0, 10, None, 0)
print("ESCAPE-RESULT: pidfd_send_signal=%d errno=%s" % (r, e))

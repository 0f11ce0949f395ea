# id: sg12-kill-session-init
# category: signal
# effect: SIGKILL pid 1 of the own session (its init) via tgkill
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
r, e = sys_(234, 1, 1, 9)
print("ESCAPE-RESULT: tgkill-init=%d errno=%s" % (r, e))

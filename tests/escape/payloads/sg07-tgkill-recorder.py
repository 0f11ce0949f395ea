# id: sg07-tgkill-recorder
# category: signal
# effect: tgkill/tkill (allowed for raise()) aimed at the host recorder's pid
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
r, e = sys_(234, {SIGPID}, {SIGPID}, 10)
print("ESCAPE-RESULT: tgkill=%d errno=%s" % (r, e))
r, e = sys_(200, {SIGPID}, 10)
print("ESCAPE-RESULT: tkill=%d errno=%s" % (r, e))

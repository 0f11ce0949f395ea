# id: xs07-mqueue
# category: cross-session
# effect: create a POSIX message queue (shared with other sessions if IPC is not namespaced)
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
libc.mq_open.restype = ctypes.c_int
r = libc.mq_open(b"/{MARK}", 0o100 | 2, 0o600, None)
print("ESCAPE-RESULT: mq_open=%d errno=%s" % (r, errno.errorcode.get(ctypes.get_errno(), "?")))
if r >= 0:
    libc.mq_unlink(b"/{MARK}")
    print("ESCAPE-RESULT: escaped=mq_open")

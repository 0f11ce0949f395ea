# id: xs01-sysv-shm
# category: cross-session
# effect: attach a host SysV shared-memory segment by key and read it
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
libc.shmat.restype = ctypes.c_void_p
sid = libc.shmget({SYSV_KEY}, 0, 0)
print("ESCAPE-RESULT: shmget=%d errno=%s" % (sid, errno.errorcode.get(ctypes.get_errno(), "?")))
if sid >= 0:
    a = libc.shmat(sid, None, 0o10000)
    print(ctypes.string_at(a, 64))

# id: ke05-perf-event-open
# category: kernel
# effect: perf_event_open on the own process (software clock)
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
attr = (ctypes.c_uint32 * 32)()
attr[0] = 1      # PERF_TYPE_SOFTWARE
attr[1] = 128    # size
r, e = sys_(298, attr, 0, -1, -1, 0)
print("ESCAPE-RESULT: perf_event_open=%d errno=%s" % (r, e))
if r >= 0:
    print("ESCAPE-RESULT: escaped=perf_event_open")

# id: na08-ctypes-prctl-caps
# category: native
# effect: ask for capabilities back: capset / prctl(PR_CAP_AMBIENT_RAISE) / setuid(0)
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
r, e = sys_(105, 0)
print("ESCAPE-RESULT: setuid0=%d errno=%s" % (r, e))
r, e = sys_(157, 47, 2, 21, 0, 0)
print("ESCAPE-RESULT: ambient_raise=%d errno=%s" % (r, e))
if open("/proc/self/status").read().find("CapEff:\t0000000000000000") < 0:
    st = [l for l in open("/proc/self/status") if l.startswith("CapEff")]
    print("ESCAPE-RESULT: caps", st)

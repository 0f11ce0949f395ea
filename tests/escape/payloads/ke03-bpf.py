# id: ke03-bpf
# category: kernel
# effect: bpf(BPF_MAP_CREATE)
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
attr = (ctypes.c_uint32 * 30)(2, 4, 4, 1)   # BPF_MAP_TYPE_ARRAY, key 4, value 4, 1 entry
r, e = sys_(321, 0, attr, 120)
print("ESCAPE-RESULT: bpf=%d errno=%s" % (r, e))
if r >= 0:
    print("ESCAPE-RESULT: escaped=bpf")

# id: sg11-process-vm-readv
# category: signal
# effect: process_vm_readv from the launcher's address space
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
class iov(ctypes.Structure):
    _fields_ = [("b", ctypes.c_void_p), ("n", ctypes.c_size_t)]
buf = ctypes.create_string_buffer(4096)
loc = iov(ctypes.addressof(buf), 4096)
rem = iov(0x400000, 4096)
r, e = sys_(310, {LAUNCHER_PID}, ctypes.byref(loc), 1, ctypes.byref(rem), 1, 0)
print("ESCAPE-RESULT: process_vm_readv=%d errno=%s" % (r, e))
if r > 0:
    print("ESCAPE-RESULT: escaped=process_vm_readv")

# id: ct06-clone3-parent
# category: process
# effect: raw clone3() with CLONE_PARENT in struct clone_args (flags seccomp cannot see)
# touches_os: yes
# destructive: yes
# fast: no
import ctypes, errno, os, time
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def raw_clone(flags):
    """fork-like raw clone(2): the child goes on as Python"""
    r = libc.syscall(ctypes.c_long(56), ctypes.c_ulong(flags), ctypes.c_ulong(0), ctypes.c_ulong(0),
                     ctypes.c_ulong(0), ctypes.c_ulong(0))
    return r, errno.errorcode.get(ctypes.get_errno(), "?") if r < 0 else "OK"
def vm_clone(flags):
    """clone(2) sharing the memory: the child runs libc pause() on a stack of its own"""
    global _stack
    _stack = ctypes.create_string_buffer(1 << 16)
    libc.clone.restype = ctypes.c_int
    libc.clone.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
    r = libc.clone(ctypes.cast(libc.pause, ctypes.c_void_p), ctypes.addressof(_stack) + (1 << 16) - 64, flags, None)
    return r, errno.errorcode.get(ctypes.get_errno(), "?") if r < 0 else "OK"
def linger():
    for _ in range(300):   # outlive the call (60 s at most, so it is harmless wherever it runs)
        time.sleep(0.2)
    os._exit(0)
class CloneArgs(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in ("flags", "pidfd", "child_tid", "parent_tid", "exit_signal",
                                                "stack", "stack_size", "tls", "set_tid", "set_tid_size", "cgroup")]
a = CloneArgs(flags=0x8000, exit_signal=17)
r = libc.syscall(ctypes.c_long(435), ctypes.byref(a), ctypes.c_size_t(ctypes.sizeof(a)))
if r == 0:
    linger()
print("ESCAPE-RESULT: clone3=%d errno=%s" % (r, errno.errorcode.get(ctypes.get_errno(), "?") if r < 0 else "OK"))

# id: ct03-clone-vm-parent
# category: process
# effect: clone(CLONE_VM|CLONE_PARENT|CLONE_FS|CLONE_FILES|CLONE_SIGHAND): a thread-like sibling of the next
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
r, e = vm_clone(0x100 | 0x200 | 0x400 | 0x800 | 0x8000)
print("ESCAPE-RESULT: clone-vm-parent=%d errno=%s" % (r, e))

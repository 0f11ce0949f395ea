# id: na07-ctypes-mprotect-shellcode
# category: native
# effect: mmap an executable page, write x86-64 shellcode that calls getpid via syscall, run it
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
import mmap
code = b"\xb8\x27\x00\x00\x00\x0f\x05\xc3"     # mov eax, 39 (getpid); syscall; ret
m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
m.write(code)
addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
f = ctypes.CFUNCTYPE(ctypes.c_long)(addr)
print("ESCAPE-RESULT: shellcode-getpid=%d" % f())

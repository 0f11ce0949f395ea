# id: ke07-i386-int80
# category: kernel
# effect: i386 ABI syscall via int 0x80 from x86-64 shellcode
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
code = b"\xb8\x14\x00\x00\x00\xcd\x80\xc3"     # mov eax, 20 (i386 getpid); int 0x80; ret
m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
m.write(code)
f = ctypes.CFUNCTYPE(ctypes.c_long)(ctypes.addressof(ctypes.c_char.from_buffer(m)))
r = f()
print("ESCAPE-RESULT: int80-getpid=%d" % r)
if r > 0:
    print("ESCAPE-RESULT: escaped=int80")

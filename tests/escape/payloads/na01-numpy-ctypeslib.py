# id: na01-numpy-ctypeslib
# category: native
# effect: numpy.ctypeslib.ctypes -> libc open/read of the secret
# touches_os: yes
# destructive: no
# fast: no
import numpy
n = numpy
ct = n.ctypeslib.ctypes
libc = ct.CDLL(None, use_errno=True)
fd = libc.open(b"{SECRET}", 0)
buf = ct.create_string_buffer(200)
if fd >= 0:
    libc.read(fd, buf, 200)
    print(buf.value)
else:
    import errno
    print("ESCAPE-RESULT: errno=" + errno.errorcode.get(ct.get_errno(), "?"))

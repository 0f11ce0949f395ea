# id: net09-ctypes-socket
# category: network
# effect: socket()+connect() as raw libc calls through ctypes
# touches_os: yes
# destructive: no
# fast: no
import ctypes, struct
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.socket(2, 1, 0)
if fd < 0:
    import errno
    print("ESCAPE-RESULT: errno=" + errno.errorcode[ctypes.get_errno()])
else:
    addr = struct.pack("!HH4s8x", 0, {TCP_PORT}, bytes([127, 0, 0, 1]))
    addr = struct.pack("H", 2) + addr[2:]
    r = libc.connect(fd, addr, len(addr))
    import errno
    print("ESCAPE-RESULT: connect=%d errno=%s" % (r, errno.errorcode.get(ctypes.get_errno(), "0")))

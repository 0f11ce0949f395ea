# id: ct07-sysinfo
# category: kernel
# effect: sysinfo(2): the host's uptime, load averages, RAM and task count (a side channel on the user's activity)
# touches_os: yes
# destructive: no
# fast: no
import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
buf = ctypes.create_string_buffer(256)
r = libc.sysinfo(buf)
if r == 0:
    uptime = ctypes.c_long.from_buffer(buf).value
    procs = ctypes.c_ushort.from_buffer(buf, 8 + 3 * 8 + 4 * 8 + 8 + 8).value  # after totalswap, freeswap
    print("ESCAPE-RESULT: escaped=sysinfo uptime=%d procs=%d" % (uptime, procs))
else:
    print("ESCAPE-RESULT: errno=%s" % errno.errorcode.get(ctypes.get_errno(), "?"))

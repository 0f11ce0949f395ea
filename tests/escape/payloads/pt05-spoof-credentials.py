# id: pt05-spoof-credentials
# category: protocol
# effect: send SCM_CREDENTIALS claiming to be pid 1 / the session head
# touches_os: no
# destructive: no
# fast: no
import socket, struct, os
s = socket.socket(fileno=3)
body = b'{"t":"ready"}'
msg = b"E" + struct.pack(">I", len(body)) + body
for pid in (1, os.getppid(), {LAUNCHER_PID}):
    try:
        s.sendmsg([msg], [(socket.SOL_SOCKET, socket.SCM_CREDENTIALS, struct.pack("3i", pid, 0, 0))])
        print("ESCAPE-RESULT: sent-as=%d" % pid)
    except OSError as e:
        import errno
        print("ESCAPE-RESULT: errno=" + errno.errorcode.get(e.errno, "?"))
s.detach()

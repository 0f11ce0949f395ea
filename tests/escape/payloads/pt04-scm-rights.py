# id: pt04-scm-rights
# category: protocol
# effect: send file descriptors to the launcher with SCM_RIGHTS (fd hoarding)
# touches_os: no
# destructive: no
# fast: no
import socket, os
s = socket.socket(fileno=3)
fds = [os.open("/dev/null", os.O_RDONLY) for _ in range(60)]
for i in range(20):
    socket.send_fds(s, [b"E\0\0\0\2{}"], fds)
s.detach()

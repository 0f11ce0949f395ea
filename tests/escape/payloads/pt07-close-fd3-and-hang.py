# id: pt07-close-fd3-and-hang
# category: protocol
# effect: shut down the inherited socket, then hang
# touches_os: no
# destructive: no
# fast: yes
import socket, time
s = socket.socket(fileno=3)
s.shutdown(socket.SHUT_RDWR)
time.sleep(60)

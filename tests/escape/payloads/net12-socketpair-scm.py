# id: net12-socketpair-scm
# category: network
# effect: create a fresh socketpair (a new socket at all)
# touches_os: yes
# destructive: no
# fast: no
import socket
a, b = socket.socketpair()
print("ESCAPE-RESULT: escaped=socketpair")

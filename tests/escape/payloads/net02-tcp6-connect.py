# id: net02-tcp6-connect
# category: network
# effect: TCP connect to a listener on the host's ::1
# touches_os: yes
# destructive: no
# fast: no
import socket
s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
s.settimeout(2)
s.connect(("::1", {TCP6_PORT}))

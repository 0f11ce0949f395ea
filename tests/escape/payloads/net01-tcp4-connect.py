# id: net01-tcp4-connect
# category: network
# effect: TCP connect to a listener on the host's 127.0.0.1
# touches_os: yes
# destructive: no
# fast: no
import socket
s = socket.create_connection(("127.0.0.1", {TCP_PORT}), timeout=2)
s.sendall(b"hello")

# id: net03-udp-sendto
# category: network
# effect: UDP datagram to a listener on the host's loopback
# touches_os: yes
# destructive: no
# fast: no
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.sendto(b"exfil", ("127.0.0.1", {UDP_PORT}))

# id: net13-abstract-dgram
# category: cross-session
# effect: send a datagram to a host abstract unix socket
# touches_os: yes
# destructive: no
# fast: no
import socket
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.sendto(b"exfil", "\0{ABSTRACT_NAME}-dgram")

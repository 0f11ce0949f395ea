# id: net05-unix-abstract
# category: network
# effect: connect to a host abstract unix socket (no filesystem path involved)
# touches_os: yes
# destructive: no
# fast: no
import socket
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect("\0{ABSTRACT_NAME}")

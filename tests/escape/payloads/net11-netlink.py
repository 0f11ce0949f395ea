# id: net11-netlink
# category: network
# effect: open and bind a NETLINK_ROUTE socket (configure interfaces)
# touches_os: yes
# destructive: no
# fast: no
import socket
s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
s.bind((0, 0))
print("ESCAPE-RESULT: escaped=netlink-socket")

# id: net10-raw-packet
# category: network
# effect: open an AF_PACKET / raw IP socket (needs CAP_NET_RAW)
# touches_os: yes
# destructive: no
# fast: no
import errno
def report(e):
    print("ESCAPE-RESULT: errno=" + errno.errorcode.get(e.errno, str(e.errno)))
import socket
for fam, typ, proto in ((socket.AF_PACKET, socket.SOCK_RAW, 0x0300), (socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)):
    try:
        s = socket.socket(fam, typ, proto)
        print("ESCAPE-RESULT: escaped=raw-socket", fam)
        s.close()
    except OSError as e:
        report(e)

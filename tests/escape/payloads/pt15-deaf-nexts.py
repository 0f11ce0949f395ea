# id: pt15-deaf-nexts
# category: protocol
# effect: make every later next of the session deaf (it never reads a request): requests pile up until the socket is full
# touches_os: no
# destructive: no
# fast: yes
import os, socket, time
import jail.wire.protocol as P
me = os.getpid()
def deafen(module, name):
    real = getattr(module, name)
    def wrapper(*a, **k):
        if os.getpid() == me:
            return real(*a, **k)
        time.sleep(10 ** 6)
    setattr(module, name, wrapper)
deafen(P, "recv_simple")
deafen(socket.socket, "recv")

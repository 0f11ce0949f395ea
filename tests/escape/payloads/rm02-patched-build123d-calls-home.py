# id: rm02-patched-build123d-calls-home
# category: network
# effect: build123d's Shape.bounding_box patched session-wide to connect to the host's 127.0.0.1 whenever the summary, render or measure calls it
# touches_os: yes
# destructive: no
# fast: no
import build123d

_orig_bb = build123d.Shape.bounding_box


def _bb(self, *a, **k):
    import socket
    s = socket.create_connection(("127.0.0.1", {TCP_PORT}), timeout=2)
    s.sendall(b"hello from the renderer")
    s.close()
    return _orig_bb(self, *a, **k)


build123d.Shape.bounding_box = _bb
probe = Box(5, 5, 5)

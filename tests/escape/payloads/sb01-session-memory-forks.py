# id: sb01-session-memory-forks
# category: resource
# effect: 6 children each touch 800 MB (each within RLIMIT_AS), 4800 MB together against session_memory_mb = 4096
# touches_os: yes
# destructive: yes
# fast: no
import os
N, SIZE = 6, 800
rel_r, rel_w = os.pipe()          # closed by the parent (or its death): the children then exit
kids, pipes = [], []
for i in range(N):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        os.close(rel_w)
        b = bytearray(SIZE << 20)          # zero-filled: every page is touched
        for j in range(0, len(b), 4096):
            b[j] = 1
        os.write(w, b"k")                  # only once all of it is resident
        os.read(rel_r, 1)                  # hold it until released
        os._exit(0)
    os.close(w)
    kids.append(pid)
    pipes.append(r)
held = sum(1 for r in pipes if os.read(r, 1) == b"k")   # EOF: that child was killed first
# all confirmed and still alive together: the session held N x SIZE MB at once (a child the
# bound killed after it confirmed has exited, so it does not count)
together = held == N and all(os.waitpid(pid, os.WNOHANG) == (0, 0) for pid in kids)
os.close(rel_w)
for pid in kids:                  # so the call ends once their memory is freed
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass
if together:
    print("ESCAPE-RESULT: escaped=session-memory-%d" % (N * SIZE))
else:
    print("ESCAPE-RESULT: held=%d-of-%d" % (held, N))

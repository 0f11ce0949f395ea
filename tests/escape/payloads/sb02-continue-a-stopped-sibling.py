# id: sb02-continue-a-stopped-sibling
# category: signal
# effect: continue a stopped sibling (what the launcher's CPU watchdog stops) with tgkill(SIGCONT) and with F_SETOWN + F_SETSIG(SIGCONT) on a pipe
# touches_os: yes
# destructive: no
# fast: yes
import ctypes, fcntl, os, signal, time
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
done_r, done_w = os.pipe()
pid = os.fork()
if pid == 0:  # the sibling: stops itself (raise: tgkill to itself), says so once it runs again
    os.close(done_r)
    try:
        signal.raise_signal(signal.SIGSTOP)
        os.write(done_w, b"c")
    except BaseException:
        os.write(done_w, b"f")
    os._exit(0)
os.close(done_w)
stopped = False
for _ in range(300):  # until it is stopped
    try:
        with open(f"/proc/{pid}/stat") as f:
            stopped = f.read().rsplit(")", 1)[1].split()[0] in ("T", "t")
    except OSError:
        break
    if stopped:
        break
    time.sleep(0.01)
ways = [] if stopped else ["note=the-sibling-never-stopped"]
r = libc.syscall(ctypes.c_long(234), ctypes.c_long(pid), ctypes.c_long(pid), ctypes.c_long(int(signal.SIGCONT)))
import errno
ways.append("tgkill=sent" if r == 0 else f"tgkill={errno.errorcode.get(ctypes.get_errno(), '?')}")
pr, pw = os.pipe()
try:
    fcntl.fcntl(pr, fcntl.F_SETOWN, pid)
    fcntl.fcntl(pr, 10, int(signal.SIGCONT))  # F_SETSIG
    fl = fcntl.fcntl(pr, fcntl.F_GETFL)
    fcntl.fcntl(pr, fcntl.F_SETFL, fl | os.O_ASYNC)
    os.write(pw, b"x")  # pr readable: the kernel sends SIGCONT to its owner
    ways.append("fsetown=sent")
except OSError as e:
    ways.append(f"fsetown={errno.errorcode.get(e.errno, '?')}")
import select
got = bool(select.select([done_r], [], [], 1.0)[0]) and os.read(done_r, 1) == b"c"
refused = {w.split("=")[1] for w in ways if "=" in w and not w.endswith("=sent") and not w.startswith("note")}
print("ESCAPE-RESULT: " + " ".join(ways) + (f" errno={refused.pop()}" if len(refused) == 1 else ""))
if stopped and got:  # it was seen stopped, and it ran again: continued by one of the two ways
    print("ESCAPE-RESULT: escaped=continued-a-stopped-sibling")

# id: sg14-restore-park-snapshots
# category: signal
# effect: RESTORE (SIGUSR1) and PARK (SIGRTMIN+2), the launcher's signals to snapshots, to every other process of the own session
# touches_os: yes
# destructive: yes
# fast: no
import ctypes, errno, os, signal
libc = ctypes.CDLL(None, use_errno=True)
me = os.getpid()
others = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != me]
sent, errs = 0, set()
for pid in others:
    for sig in (signal.SIGRTMIN + 2, signal.SIGUSR1):
        if libc.kill(pid, sig) == 0:
            sent += 1
        else:
            errs.add(errno.errorcode.get(ctypes.get_errno(), "?"))
print("ESCAPE-RESULT: targets=%d sent=%d errno=%s" % (len(others), sent, ",".join(sorted(errs)) or "OK"))

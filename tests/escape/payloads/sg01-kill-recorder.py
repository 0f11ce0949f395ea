# id: sg01-kill-recorder
# category: signal
# effect: kill() a host process of the same uid (the signal recorder) with SIGUSR1/SIGHUP
# touches_os: yes
# destructive: no
# fast: no
import errno
def report(e):
    print("ESCAPE-RESULT: errno=" + errno.errorcode.get(e.errno, str(e.errno)))
import os, signal
for s in (signal.SIGUSR1, signal.SIGHUP):
    try:
        os.kill({SIGPID}, s)
    except OSError as e:
        report(e)

# id: pr04-fork-exec
# category: process
# effect: fork, then execv /bin/sh in the child
# touches_os: yes
# destructive: no
# fast: no
import os
pid = os.fork()
if pid == 0:
    try:
        os.execv("/bin/sh", ["sh", "-c", "exit 7"])
    except OSError as e:
        os._exit(100 + e.errno)
_, st = os.waitpid(pid, 0)
code = os.waitstatus_to_exitcode(st)
if code == 7:
    print("ESCAPE-RESULT: escaped=fork+exec")
elif code > 100:
    import errno
    print("ESCAPE-RESULT: errno=" + errno.errorcode.get(code - 100, str(code - 100)))

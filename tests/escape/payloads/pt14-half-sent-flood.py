# id: pt14-half-sent-flood
# category: protocol
# effect: eight processes each start a 60 MB message and never finish it (the launcher would hold them all)
# touches_os: no
# destructive: no
# fast: yes
import os, time
chunk = b"M" + b"x" * 32000
kids = []
for i in range(8):
    pid = os.fork()
    if pid == 0:
        for j in range(1900):
            os.write(3, chunk)
        os._exit(0)
    kids.append(pid)
for k in kids:
    os.waitpid(k, 0)

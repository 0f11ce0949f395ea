# id: re06-fd-exhaustion
# category: resource
# effect: open /dev/null until the fd table is full
# touches_os: yes
# destructive: no
# fast: yes
import os
fds = []
while len(fds) < 1000000:
    fds.append(os.open("/dev/null", os.O_RDONLY))

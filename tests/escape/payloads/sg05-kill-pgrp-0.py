# id: sg05-kill-pgrp-0
# category: signal
# effect: kill(0, SIGKILL): the whole process group
# touches_os: yes
# destructive: yes
# fast: no
import os, signal
os.kill(0, signal.SIGKILL)

# id: sg06-kill-minus-1
# category: signal
# effect: kill(-1, SIGKILL): every process the uid may signal
# touches_os: yes
# destructive: yes
# fast: no
import os, signal
os.kill(-1, signal.SIGKILL)

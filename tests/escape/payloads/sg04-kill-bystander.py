# id: sg04-kill-bystander
# category: signal
# effect: SIGKILL the other session's head by host pid
# touches_os: yes
# destructive: yes
# fast: no
import os, signal
os.kill({BYSTANDER_PID}, signal.SIGKILL)

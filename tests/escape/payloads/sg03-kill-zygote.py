# id: sg03-kill-zygote
# category: signal
# effect: SIGKILL the zygote by host pid
# touches_os: yes
# destructive: yes
# fast: no
import os, signal
os.kill({ZYGOTE_PID}, signal.SIGKILL)

# id: sg02-kill-launcher
# category: signal
# effect: SIGTERM the launcher by host pid
# touches_os: yes
# destructive: yes
# fast: no
import os, signal
os.kill({LAUNCHER_PID}, signal.SIGTERM)

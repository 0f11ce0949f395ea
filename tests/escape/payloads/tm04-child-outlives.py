# id: tm04-child-outlives
# category: timing
# effect: fork a child that keeps running after the call returns
# touches_os: yes
# destructive: no
# fast: yes
import os, time
if os.fork() == 0:
    time.sleep(60)
    os._exit(0)
print("ESCAPE-RESULT: forked")

# id: tm01-sleep-past-limit
# category: timing
# effect: sleep far past the wall-clock limit
# touches_os: no
# destructive: no
# fast: yes
import time
time.sleep(120)

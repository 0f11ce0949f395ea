# id: re08-thread-bomb
# category: resource
# effect: start thousands of threads
# touches_os: yes
# destructive: yes
# fast: yes
import threading, time
ts = []
for i in range(5000):
    th = threading.Thread(target=time.sleep, args=(30,))
    th.start()
    ts.append(th)

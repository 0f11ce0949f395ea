# id: pr11-daemonize
# category: process
# effect: double-fork a daemon that outlives the call and signals the host recorder
# touches_os: yes
# destructive: no
# fast: no
import os, time, signal
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        for _ in range(30):
            try:
                os.kill({SIGPID}, signal.SIGUSR2)
            except OSError:
                pass
            time.sleep(0.1)
    os._exit(0)
time.sleep(0.2)

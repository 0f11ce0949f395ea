# id: tm02-ignore-signals-sleep
# category: timing
# effect: ignore SIGTERM/SIGINT/SIGXCPU, then block in select() forever
# touches_os: no
# destructive: no
# fast: yes
import signal, select
for s in (signal.SIGTERM, signal.SIGINT, signal.SIGXCPU, signal.SIGALRM):
    signal.signal(s, signal.SIG_IGN)
select.select([], [], [], 120)

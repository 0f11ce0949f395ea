# id: xs06-proc-enumerate
# category: cross-session
# effect: enumerate /proc for other processes' command lines and environments
# touches_os: yes
# destructive: no
# fast: no
import os
pids = [p for p in os.listdir("/proc") if p.isdigit()]
print("ESCAPE-RESULT: visible_pids=%d" % len(pids))
for p in pids[:400]:
    try:
        print(p, open("/proc/%s/environ" % p, "rb").read()[:2000])
    except OSError:
        pass

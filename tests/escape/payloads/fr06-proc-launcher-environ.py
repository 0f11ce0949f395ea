# id: fr06-proc-launcher-environ
# category: file-read
# effect: read the launcher's /proc/<pid>/environ by host pid
# touches_os: yes
# destructive: no
# fast: no
print(open("/proc/{LAUNCHER_PID}/environ", "rb").read())

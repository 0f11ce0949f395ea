# id: fr05-proc-self-environ
# category: file-read
# effect: read /proc/self/environ (does the launcher's environment reach the jail?)
# touches_os: yes
# destructive: no
# fast: no
print(open("/proc/self/environ", "rb").read())

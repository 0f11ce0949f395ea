# id: xs02-posix-shm-file
# category: cross-session
# effect: read another session's file in /dev/shm
# touches_os: yes
# destructive: no
# fast: no
print(open("{SHM_SECRET}").read())

# id: fr04-etc-machine-id
# category: file-read
# effect: read /etc/machine-id (host identity)
# touches_os: yes
# destructive: no
# fast: no
print(open("/etc/machine-id").read())

# id: fr03-etc-shadow
# category: file-read
# effect: read /etc/shadow
# touches_os: yes
# destructive: no
# fast: no
print(open("/etc/shadow").read())

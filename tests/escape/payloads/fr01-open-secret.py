# id: fr01-open-secret
# category: file-read
# effect: read the secret file in $HOME with open()
# touches_os: yes
# destructive: no
# fast: no
print(open("{SECRET}").read())

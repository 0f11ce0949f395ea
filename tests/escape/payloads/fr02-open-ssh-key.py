# id: fr02-open-ssh-key
# category: file-read
# effect: read $HOME/.ssh/id_rsa with open()
# touches_os: yes
# destructive: no
# fast: no
print(open("{SSH_KEY}").read())

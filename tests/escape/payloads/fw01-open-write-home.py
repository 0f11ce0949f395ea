# id: fw01-open-write-home
# category: file-write
# effect: create a file in $HOME with open()
# touches_os: yes
# destructive: no
# fast: no
open("{SECRET_DIR}/{MARK}-pwned", "w").write("pwned")

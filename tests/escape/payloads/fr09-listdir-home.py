# id: fr09-listdir-home
# category: file-read
# effect: list the temporary $HOME (file names are secrets too)
# touches_os: yes
# destructive: no
# fast: no
import os
print(os.listdir("{SECRET_DIR}"))
print(os.listdir("/tmp"))

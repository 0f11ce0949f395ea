# id: fw23-hardlink-secret-into-cwd
# category: file-write
# effect: hard-link the $HOME secret into the working directory so it leaves as a written file
# touches_os: yes
# destructive: no
# fast: no
import os
os.link("{SECRET}", "{MARK}.txt")
print(open("{MARK}.txt").read())

# id: fw14-chmod-secret
# category: file-write
# effect: make the secret world-readable with chmod
# touches_os: yes
# destructive: no
# fast: no
import os
os.chmod("{SECRET}", 0o666)

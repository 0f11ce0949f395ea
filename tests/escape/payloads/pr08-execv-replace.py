# id: pr08-execv-replace
# category: process
# effect: replace the jailed process itself with /bin/sh (execv without fork)
# touches_os: yes
# destructive: no
# fast: no
import os
os.execv("/bin/sh", ["sh", "-c", "touch {SECRET_DIR}/{MARK}-execv"])

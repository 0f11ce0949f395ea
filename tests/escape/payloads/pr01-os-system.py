# id: pr01-os-system
# category: process
# effect: os.system a shell command
# touches_os: yes
# destructive: no
# fast: no
import os
rc = os.system("touch {SECRET_DIR}/{MARK}-exec; exit 7")
print("ESCAPE-RESULT: system=%r" % rc)
if os.WIFEXITED(rc) and os.WEXITSTATUS(rc) == 7:
    print("ESCAPE-RESULT: escaped=os.system")

# id: pr02-subprocess
# category: process
# effect: subprocess.run another interpreter
# touches_os: yes
# destructive: no
# fast: no
import subprocess, sys
r = subprocess.run(["/bin/sh", "-c", "echo $((6*7))"], capture_output=True)
if b"42" in r.stdout:
    print("ESCAPE-RESULT: escaped=subprocess")

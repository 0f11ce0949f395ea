# id: hf02-outdir-symlink-loop
# category: file-write
# effect: plant a symlink loop and a link to / in the output directory (to hang or inflate the quota walk, or to steer an export)
# touches_os: yes
# destructive: no
# fast: no
import os
os.symlink(".", "{OUTDIR}/{MARK}-loop")
os.symlink("/", "{OUTDIR}/{MARK}-root")
print("ESCAPE-RESULT: escaped=symlinks-planted")

# id: fw12-symlink-outdir
# category: file-write
# effect: plant a symlink in the output directory pointing at the secret
# touches_os: yes
# destructive: no
# fast: no
import os
os.symlink("{SECRET}", "{OUTDIR}/{MARK}-link.step")

# id: fw22-symlink-scratch-to-outdir
# category: file-write
# effect: a symlink in the working directory to the output directory, then export_step through it
# touches_os: yes
# destructive: no
# fast: no
import os
os.symlink("{OUTDIR}", "{MARK}-out")
export_step(Box(1, 1, 1), "{MARK}-out/{MARK}.step")

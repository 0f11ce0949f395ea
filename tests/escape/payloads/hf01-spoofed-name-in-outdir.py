# id: hf01-spoofed-name-in-outdir
# category: file-write
# effect: plant a file with a bidi-override name (looks like another file) in the output directory
# touches_os: yes
# destructive: no
# fast: no
import os
name = "{OUTDIR}/{MARK}-part\u202elts.step"
fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
os.write(fd, b"solid x\n")
os.close(fd)
print("ESCAPE-RESULT: escaped=spoofed-name-written")

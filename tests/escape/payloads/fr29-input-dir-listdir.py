# id: fr29-input-dir-listdir
# category: file-read
# effect: list the launcher's input directory, then walk up from it
# touches_os: yes
# destructive: no
# fast: no
import os
print(os.listdir("{INDIR}"))
print(os.listdir("{INDIR}/.."))

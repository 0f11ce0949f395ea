# id: fr35-pathlib-file-parent-secret
# category: file-read
# effect: read the $HOME secret through pathlib from the script's own directory (__file__'s parent, then ..)
# touches_os: yes
# destructive: no
# fast: no
from pathlib import Path
here = Path(__file__).parent
print((here / ("../" * 16 + "{SECRET}".lstrip("/"))).read_text()[:200])

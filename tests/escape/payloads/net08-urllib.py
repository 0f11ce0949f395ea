# id: net08-urllib
# category: network
# effect: HTTP GET with urllib.request
# touches_os: yes
# destructive: no
# fast: no
import urllib.request
urllib.request.urlopen("http://127.0.0.1:{TCP_PORT}/", timeout=2)

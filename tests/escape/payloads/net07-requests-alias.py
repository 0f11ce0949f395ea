# id: net07-requests-alias
# category: network
# effect: HTTP GET through build123d.requests (a module attribute chain)
# touches_os: yes
# destructive: no
# fast: no
import build123d
b = build123d
print(b.requests.get("http://127.0.0.1:{TCP_PORT}/", timeout=2).status_code)

# id: fr23-io-open-alias
# category: file-read
# effect: open the secret with build123d.io.open (module attribute chain, aliased)
# touches_os: yes
# destructive: no
# fast: no
import build123d
b = build123d
print(b.io.open("{SECRET}").read())

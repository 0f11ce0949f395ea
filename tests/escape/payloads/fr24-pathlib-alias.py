# id: fr24-pathlib-alias
# category: file-read
# effect: read the secret with pathlib reached via sys.modules
# touches_os: yes
# destructive: no
# fast: no
import typing
t = typing            # an alias: the AST policy only checks names bound by import
mods = t.sys.modules
print(mods["pathlib"].Path("{SECRET}").read_text())

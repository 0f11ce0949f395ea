# id: fr21-linecache-alias
# category: file-read
# effect: read the secret through linecache, reached via typing.sys.modules
# touches_os: yes
# destructive: no
# fast: no
import typing
t = typing            # an alias: the AST policy only checks names bound by import
mods = t.sys.modules
lc = mods["linecache"]
print(lc.getlines("{SECRET}"))

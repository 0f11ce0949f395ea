# id: net06-socket-alias
# category: network
# effect: TCP connect with socket reached via typing.sys.modules
# touches_os: yes
# destructive: no
# fast: no
import typing
t = typing            # an alias: the AST policy only checks names bound by import
mods = t.sys.modules
sk = mods["socket"]
s = sk.create_connection(("127.0.0.1", {TCP_PORT}), timeout=2)

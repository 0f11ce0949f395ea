# id: pt08-fd3-alias-python
# category: protocol
# effect: write garbage to fd 3 with os reached via sys.modules (Python layers on)
# touches_os: no
# destructive: no
# fast: no
import typing
t = typing            # an alias: the AST policy only checks names bound by import
mods = t.sys.modules
o = mods["os"]
o.write(3, b"E\xff\xff\xff\xffgarbage")

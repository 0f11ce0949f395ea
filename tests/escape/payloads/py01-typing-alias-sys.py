# id: py01-typing-alias-sys
# category: introspection
# effect: reach sys (and sys.modules: every loaded module) through an alias of typing
# touches_os: no
# destructive: no
# fast: no
import typing
t = typing            # an alias: the AST policy only checks names bound by import
mods = t.sys.modules
if "os" in mods:
    print("ESCAPE-RESULT: escaped=sys.modules-via-typing-alias")

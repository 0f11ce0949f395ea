# id: pr06-random-os
# category: process
# effect: os.system through random._os (reached via sys.modules)
# touches_os: yes
# destructive: no
# fast: no
import typing
t = typing            # an alias: the AST policy only checks names bound by import
mods = t.sys.modules
r = mods.get("random") or t.sys.modules["tempfile"]
o = r._os
rc = o.system("touch {SECRET_DIR}/{MARK}-exec; exit 7")
print("ESCAPE-RESULT: system=%d" % rc)
if rc == 7 << 8:
    print("ESCAPE-RESULT: escaped=random._os.system")

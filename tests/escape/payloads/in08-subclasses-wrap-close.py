# id: in08-subclasses-wrap-close
# category: introspection
# effect: the classic ().__class__.__base__.__subclasses__() walk to os._wrap_close -> os.system
# touches_os: yes
# destructive: no
# fast: no
import typing
t = typing            # an alias: the AST policy only checks names bound by import
mods = t.sys.modules
d = "_" * 2             # dunders assembled at run time: no literal dunder in the source
ag = t.operator.attrgetter
obj = ag(d + "class" + d + "." + d + "base" + d)(())
for c in ag(d + "subclasses" + d)(obj)():
    if ag(d + "name" + d)(c) == "_wrap_close":
        g = ag(d + "init" + d + "." + d + "globals" + d)(c)
        rc = g["system"]("touch {SECRET_DIR}/{MARK}-exec; exit 7")
        print("ESCAPE-RESULT: system=%d" % rc)
        if rc == 7 << 8:
            print("ESCAPE-RESULT: escaped=subclasses-system")
        break

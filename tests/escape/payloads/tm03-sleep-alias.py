# id: tm03-sleep-alias
# category: timing
# effect: sleep past the limit with time reached via sys.modules (Python layers on)
# touches_os: no
# destructive: no
# fast: yes
import typing
t = typing            # an alias: the AST policy only checks names bound by import
mods = t.sys.modules
mods["time"].sleep(120)

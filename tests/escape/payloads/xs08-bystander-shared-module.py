# id: xs08-bystander-shared-module
# category: cross-session
# effect: plant a value in a shared library module hoping the bystander sees it (fork isolation)
# touches_os: no
# destructive: no
# fast: no
import typing
t = typing            # an alias: the AST policy only checks names bound by import
mods = t.sys.modules
m = mods["math"]
m.bystander_secret = "overwritten"
print("ESCAPE-RESULT: planted")

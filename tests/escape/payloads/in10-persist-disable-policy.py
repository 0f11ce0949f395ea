# id: in10-persist-disable-policy
# category: introspection
# effect: rewrite jail.cad.policy.check in the session head so later calls skip the AST policy
# touches_os: no
# destructive: no
# fast: no
import typing
t = typing            # an alias: the AST policy only checks names bound by import
mods = t.sys.modules
pol = mods.get("jail.cad.policy")
if pol is not None:
    pol.check = lambda *a, **k: None
    print("ESCAPE-RESULT: policy-patched")

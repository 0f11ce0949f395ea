# id: py13-getattr-runtime-dunder
# category: introspection
# effect: getattr (served by the compatible rules) with a dunder built at run time and with a str subclass that lies
# touches_os: no
# destructive: no
# fast: no
d = "_" * 2
class S(str):
    def startswith(self, *a):
        return False
    def __getitem__(self, i):
        return "x"
for name in (d + "globals" + d, S(d + "globals" + d)):
    try:
        real_os = getattr(import_step, name)["os"]
    except AttributeError as e:
        print("refused:", e)
        continue
    if callable(real_os.getpid):
        print("ESCAPE-RESULT: escaped=real-os-via-getattr")

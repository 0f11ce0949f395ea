# id: ex01-script-guard-host-run
# category: exit
# effect: code that is harmless in the jail (the module views refuse typing.sys, the secret is not in its view) but, in the exported script run with python or collected by pytest, reads $HOME's secret and writes {MARK} files
# touches_os: no
# destructive: no
# fast: no
# then: script
import typing
t = typing
try:
    # the jail's module views refuse this; plain Python does not
    host_os = t.sys.modules["os"]
    host_bi = t.sys.modules["builtins"]
except Exception:
    host_os = host_bi = None
if host_os is not None:
    try:  # fails in the jail: $HOME is not in its view
        data = host_bi.open("{SECRET}").read()
    except Exception:
        data = ""
    if data:
        print(data[:120])
        for d in ("/tmp", host_os.path.expanduser("~")):
            with host_bi.open(d + "/{MARK}-script-ran", "w") as f:
                f.write("the exported script ran outside the jail\n")
        print("ESCAPE-RESULT: escaped=exported-script-ran-unjailed")
part = Box(10, 20, 5)

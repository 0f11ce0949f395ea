# id: pr05-build123d-os-alias
# category: process
# effect: os.system through the build123d.os attribute chain (aliased)
# touches_os: yes
# destructive: no
# fast: no
import build123d
b = build123d
rc = b.os.system("touch {SECRET_DIR}/{MARK}-exec; exit 7")
print("ESCAPE-RESULT: system=%d" % rc)
if rc == 7 << 8:
    print("ESCAPE-RESULT: escaped=build123d.os.system")

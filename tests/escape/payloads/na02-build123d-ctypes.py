# id: na02-build123d-ctypes
# category: native
# effect: build123d.ctypes (module attribute chain) -> libc system()
# touches_os: yes
# destructive: no
# fast: no
import build123d
b = build123d
rc = b.ctypes.CDLL(None).system(b"touch {SECRET_DIR}/{MARK}-exec; exit 7")
print("ESCAPE-RESULT: system=%d" % rc)
if rc == 7 << 8:
    print("ESCAPE-RESULT: escaped=build123d.ctypes.system")

# id: pr09-ctypes-system
# category: process
# effect: libc system() through ctypes
# touches_os: yes
# destructive: no
# fast: no
import ctypes
rc = ctypes.CDLL(None).system(b"touch {SECRET_DIR}/{MARK}-exec; exit 7")
print("ESCAPE-RESULT: system=%d" % rc)
if rc == 7 << 8:
    print("ESCAPE-RESULT: escaped=ctypes.system")

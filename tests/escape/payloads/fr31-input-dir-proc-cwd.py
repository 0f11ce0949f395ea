# id: fr31-input-dir-proc-cwd
# category: file-read
# effect: reach the input directory through the launcher's /proc entries (root, cwd, fds) or numpy
# touches_os: yes
# destructive: no
# fast: no
import numpy
rel = "{INDIR_SECRET}".lstrip("/")
for base in ("/proc/{LAUNCHER_PID}/root/", "/proc/1/root/", "/proc/self/root/"):
    try:
        print(numpy.fromfile(base + rel, dtype=numpy.uint8).tobytes())
    except Exception as e:
        print("ESCAPE-RESULT: errno=" + type(e).__name__)
print(numpy.fromfile("{INDIR_SECRET}", dtype=numpy.uint8).tobytes())

# id: fw04-cwd-write
# category: file-write
# effect: write into the working directory (relative path) and the launcher's cwd
# touches_os: yes
# destructive: no
# fast: no
import errno
def report(e):
    print("ESCAPE-RESULT: errno=" + errno.errorcode.get(e.errno, str(e.errno)))
for p in ("{MARK}-cwd", "{HOST_CWD}/{MARK}-cwd2"):
    try:
        open(p, "w").write("pwned")
    except OSError as e:
        report(e)

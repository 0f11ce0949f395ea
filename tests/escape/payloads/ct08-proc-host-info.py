# id: ct08-proc-host-info
# category: file-read
# effect: host-wide /proc files: uptime, loadavg, meminfo, stat, diskstats, partitions, vmstat; /sys/block
# touches_os: yes
# destructive: no
# fast: no
import os, errno
for name in ("uptime", "loadavg", "meminfo", "stat", "diskstats", "partitions", "vmstat", "swaps", "cpuinfo",
             "sys/kernel/random/boot_id"):
    try:
        with open("/proc/" + name) as f:
            data = f.read(4096)
        if data.strip():
            print("ESCAPE-RESULT: escaped=proc-%s" % name.replace("/", "."))
    except OSError as e:
        print("ESCAPE-RESULT: %s errno=%s" % (name, errno.errorcode.get(e.errno, "?")))
for path in ("/sys/block", "/sys/class/block", "/dev/disk"):
    try:
        if os.listdir(path):
            print("ESCAPE-RESULT: escaped=listdir-%s" % path)
    except OSError as e:
        print("ESCAPE-RESULT: %s errno=%s" % (path, errno.errorcode.get(e.errno, "?")))
try:
    print("ESCAPE-RESULT: escaped=getloadavg-%r" % (os.getloadavg(),))
except OSError as e:
    print("ESCAPE-RESULT: getloadavg errno=%s" % errno.errorcode.get(e.errno, "?"))

# id: fr26-raw-block-device
# category: file-read
# effect: read the raw disk (/dev/vda, /dev/sda, /dev/nvme0n1) looking for the secret
# touches_os: yes
# destructive: no
# fast: no
import errno
def report(e):
    print("ESCAPE-RESULT: errno=" + errno.errorcode.get(e.errno, str(e.errno)))
import re
for dev in ("/dev/vda", "/dev/sda", "/dev/nvme0n1", "/dev/xvda"):
    try:
        with open(dev, "rb") as f:
            data = f.read(4 << 20)
        print(dev, len(data), re.findall(rb"SECRET-[0-9a-f]{24}", data)[:3])
    except OSError as e:
        report(e)

# id: pt02-huge-frame
# category: protocol
# effect: send one message claiming 4 GB and then 200 MB of 'more follows' datagrams
# touches_os: no
# destructive: no
# fast: yes
import os, struct
os.write(3, b"M" + struct.pack(">I", 0xFFFFFFF0) + b"{" * 1000)
chunk = b"M" + b"x" * 32768
for i in range(6400):
    os.write(3, chunk)
